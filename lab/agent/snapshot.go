package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
)

// scenarioSnapshot: a snapshot of the guest reads as the guest itself:
// the same audit, the same IRQs (counters aside), the same topology.
func scenarioSnapshot(l *lab) {
	// A state worth keeping: eth0 on part of its node (exec-mask), eth1's
	// queues moved off its node, traffic on both.
	eth1 := l.nic("eth1")
	var other cpus
	for id, c := range l.nodes {
		if id != eth1.node {
			other |= c
		}
	}
	ids := other.ids()
	for i, q := range eth1.queues() {
		if err := writeAffinity(q.irq, strconv.Itoa(ids[i%len(ids)])); err != nil {
			must("move", false, "IRQ %d: %v", q.irq, err)
		}
	}
	check("traffic-eth1", len(l.traffic(eth1)) == 0, "every queue IRQ of eth1 fired")
	check("traffic-eth0", len(l.traffic(l.nic("eth0"))) == 0, "every queue IRQ of eth0 fired")

	const snap = "/tmp/lab-snapshot.tar.gz"
	r := irqnuma("snapshot", "-o", snap)
	must("snapshot", r.code == 0, "%s", r)
	st, _ := os.Stat(snap)
	info("size", "%s: %d bytes; %s", snap, st.Size(), r.stderr)

	same := func(name string, strip func(any), args ...string) {
		var live, got any
		jsonOf(&live, args...)
		jsonOf(&got, append([]string{"--root", snap}, args...)...)
		// Where the steering's answers came from differs by design:
		// "netlink" live, "recorded" from the snapshot.
		for _, v := range []any{live, got} {
			if st, ok := v.(map[string]any)["steer"].(map[string]any); ok {
				delete(st, "source")
			}
		}
		if strip != nil {
			strip(live)
			strip(got)
		}
		check(name, reflect.DeepEqual(live, got), "live vs snapshot: %v\nlive: %.4000s\nsnapshot: %.4000s", jsonDiff("", live, got), js(live), js(got))
	}
	same("audit", nil, "audit", "--fail-on", "never")
	same("irq-list", func(v any) {
		for _, q := range v.(map[string]any)["irqs"].([]any) {
			delete(q.(map[string]any), "total")
			delete(q.(map[string]any), "per_cpu")
		}
	}, "irq", "list", "--all")
	same("topology", nil, "topology")

	if l.cfg.Export {
		b, err := os.ReadFile(snap)
		must("export", err == nil, "%v", err)
		s := base64.StdEncoding.EncodeToString(b)
		for len(s) > 0 {
			k := min(len(s), 3000)
			emit(line{Kind: "file", Name: "snapshot", Data: s[:k]})
			s = s[k:]
		}
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// jsonDiff names the paths where two decoded JSON values differ (at most
// 20), with both values.
func jsonDiff(path string, a, b any) []string {
	var out []string
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %.200s vs %.200s", path, js(a), js(b))}
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			out = append(out, jsonDiff(path+"."+k, av[k], bv[k])...)
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return []string{fmt.Sprintf("%s: %.200s vs %.200s", path, js(a), js(b))}
		}
		for i := range av {
			out = append(out, jsonDiff(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i])...)
		}
	default:
		if !reflect.DeepEqual(a, b) {
			out = append(out, fmt.Sprintf("%s: %.200s vs %.200s", path, js(a), js(b)))
		}
	}
	if len(out) > 20 {
		out = out[:20]
	}
	return out
}
