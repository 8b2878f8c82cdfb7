package main

import (
	"encoding/hex"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// The guest's own ethtool (the host's, copied into the initramfs with
// its libraries) is the steer scenario's evidence. Its text is read here,
// by the agent, and not by irqnuma's parsers: a bug in those must not
// hide itself by reading both sides.

// ethtool runs /bin/ethtool and returns its stdout; a failure ends the
// scenario (what follows depends on the setting or the reading).
func ethtool(args ...string) string {
	out, err := exec.Command("/bin/ethtool", args...).CombinedOutput()
	if err != nil {
		must("ethtool "+strings.Join(args, " "), false, "%v\n%s", err, out)
	}
	return string(out)
}

// ethSections reads ethtool -l and -g: "Pre-set maximums:" and "Current
// hardware settings:" each followed by "Name:<tabs>value" lines. The
// maps are keyed by section ("max", "current") and then by name.
func ethSections(text string) map[string]map[string]string {
	out := map[string]map[string]string{"max": {}, "current": {}}
	sec := ""
	for _, l := range strings.Split(text, "\n") {
		switch strings.TrimSpace(l) {
		case "Pre-set maximums:":
			sec = "max"
			continue
		case "Current hardware settings:":
			sec = "current"
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if sec == "" || !ok {
			continue
		}
		out[sec][strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}

// ethU32 is an ethtool count: "n/a" is the kernel's 0.
func ethU32(s string) (uint32, error) {
	if s == "n/a" {
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 10, 32)
	return uint32(v), err
}

// rssText is what ethtool -x says.
type rssText struct {
	rings    uint32   // "with N RX ring(s)"
	table    []uint32 // the indirection table
	key      []byte
	keyText  string   // the "RSS hash key:" section as ethtool prints it
	hashFunc string   // the function that is "on"
	funcs    []string // every function listed
}

// parseEthtoolX reads ethtool -x's text.
func parseEthtoolX(text string) (rssText, error) {
	var r rssText
	part := ""
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "RX flow hash indirection table for "):
			part = "table"
			if _, err := fmt.Sscanf(t[strings.Index(t, " with ")+1:], "with %d RX ring", &r.rings); err != nil {
				return r, fmt.Errorf("rings in %q: %v", t, err)
			}
			continue
		case t == "RSS hash key:":
			part = "key"
			continue
		case t == "RSS hash function:":
			part = "func"
			continue
		case strings.HasSuffix(t, ":") && !strings.HasPrefix(l, " "):
			part = "" // a section this reader does not compare
			continue
		case t == "":
			continue
		}
		if err := r.line(part, t); err != nil {
			return r, err
		}
	}
	return r, nil
}

func (r *rssText) line(part, t string) error {
	switch part {
	case "table":
		_, entries, ok := strings.Cut(t, ":")
		if !ok {
			return fmt.Errorf("table line %q", t)
		}
		for _, f := range strings.Fields(entries) {
			v, err := strconv.ParseUint(f, 10, 32)
			if err != nil {
				return fmt.Errorf("table line %q: %v", t, err)
			}
			r.table = append(r.table, uint32(v))
		}
	case "key":
		b, err := hex.DecodeString(strings.ReplaceAll(t, ":", ""))
		if err != nil {
			return fmt.Errorf("key %q: %v", t, err)
		}
		r.key = append(r.key, b...)
		r.keyText += t
	case "func":
		name, state, ok := strings.Cut(t, ":")
		if !ok {
			return fmt.Errorf("hash function line %q", t)
		}
		r.funcs = append(r.funcs, name)
		if strings.TrimSpace(state) == "on" {
			r.hashFunc = name
		}
	}
	return nil
}

// featureText is one line of ethtool -k.
type featureText struct {
	on, fixed bool
}

// ethtoolAggregates are ethtool -k's legacy names that stand for one
// kernel feature (ethtool's off_flag_def); the three that stand for
// several (tx-checksumming, scatter-gather, tcp-segmentation-offload)
// are followed by their kernel features, indented, and are not compared.
var ethtoolAggregates = map[string]string{
	"rx-checksumming":              "rx-checksum",
	"generic-segmentation-offload": "tx-generic-segmentation",
	"generic-receive-offload":      "rx-gro",
	"large-receive-offload":        "rx-lro",
	"rx-vlan-offload":              "rx-vlan-hw-parse",
	"tx-vlan-offload":              "tx-vlan-hw-insert",
	"ntuple-filters":               "rx-ntuple-filter",
	"receive-hashing":              "rx-hashing",
	"udp-fragmentation-offload":    "tx-udp-fragmentation",
	"tx-checksumming":              "",
	"scatter-gather":               "",
	"tcp-segmentation-offload":     "",
}

// parseEthtoolK reads ethtool -k's text into kernel feature names.
func parseEthtoolK(text string) (map[string]featureText, error) {
	out := map[string]featureText{}
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "Features for ") {
			continue
		}
		name, rest, ok := strings.Cut(strings.TrimSpace(l), ": ")
		if !ok {
			return nil, fmt.Errorf("feature line %q", l)
		}
		if k, agg := ethtoolAggregates[name]; agg {
			if k == "" {
				continue
			}
			name = k
		}
		f := strings.Fields(rest)
		if len(f) == 0 || (f[0] != "on" && f[0] != "off") {
			return nil, fmt.Errorf("feature line %q", l)
		}
		out[name] = featureText{on: f[0] == "on", fixed: strings.Contains(rest, "[fixed]")}
	}
	return out, nil
}
