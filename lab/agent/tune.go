package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
)

// scenarioTune: irqnuma tune on the RSS NIC (eth2: virtio-net, 4 queue
// pairs, node 1). The agent makes the guest NOT READY there: its queue
// IRQs, its threaded-NAPI kthreads and its rx queues' rps_cpus on node
// 0, napi_defer_hard_irqs 2 with gro_flush_timeout 0, an RSS table that
// leaves out queues 2-3, irqbalance running without a ban and, where the
// kernel has napi-set with irq-suspend-timeout, one NAPI instance's
// irq-suspend-timeout without a timer to go with it. The audit names
// each; a tune with a fault injected before its step N (every N of the
// dry run's plan) exits 1 and leaves every value the agent recorded as
// it was, with no state file to restore; the tune without a fault makes
// the audit READY (but for irqbalance, until the tune bans it) and the
// kernel's own files say so; irqnuma restore brings every recorded value
// back byte for byte. Where napi-set exists, an instance with a
// defer-hard-irqs of its own keeps it through a tune and a restore. The
// guest is then put back as the scenario found it.
func scenarioTune(l *lab) {
	n := l.rssNIC()
	must("nic", n.node == 1 && n.QueuePairs > 1, "%s: numa_node %d, %d queue pairs: a multi-queue NIC on node 1", n.Name, n.node, n.QueuePairs)
	t0 := time.Now()
	pristine := recordNIC(n)
	defer putBackNIC(n, pristine)
	running = startIrqbalance()
	defer func() {
		if running != nil {
			running.stop()
			running = nil
		}
	}()
	bansIrqbalance = running != nil && tunesIrqbalance()
	if running != nil && !bansIrqbalance {
		info("waits-irqbalance", "irqnuma tune --help does not mention irqbalance: the tune's irqbalance ban is not in this irqnuma yet (it waits on the tuner's ban, branch ibsock), so irqbalance-active must be listed as not fixed")
	}
	perNAPI := disturb(l, n)
	before := recordNIC(n)
	info("time-setup", "the guest made NOT READY in %.1fs", time.Since(t0).Seconds())

	auditNotReady(n, perNAPI)
	var dry tuneDoc
	t1 := time.Now()
	jsonOf(&dry, tuneArgs(n, "--dry-run")...)
	info("time-dry-run", "tune --dry-run took %.1fs", time.Since(t1).Seconds())
	checkDryRun(n, dry, perNAPI)
	sameAs("dry-run", n, before)

	t1 = time.Now()
	injectFaults(n, dry, before)
	info("time-faults", "the fault runs took %.1fs", time.Since(t1).Seconds())

	t1 = time.Now()
	tuneFixes(l, n, perNAPI)
	info("time-tune", "tune and its checks took %.1fs", time.Since(t1).Seconds())

	r := irqnuma("restore")
	check("restore-exit", r.code == 0, "%s", r)
	sameAs("restore", n, before)
	if perNAPI.id != 0 {
		ownDefer(n, perNAPI)
	}
}

// ownDefer: on a kernel with per-NAPI settings (napi-set), one NAPI
// instance with a defer-hard-irqs of its own, other than the NIC's
// sysfs napi_defer_hard_irqs. A write of the sysfs file sets every
// instance's value (the kernel's netdev_set_defer_hard_irqs), so a tune
// that wrote it would overwrite that instance's value and a restore of
// the file could not bring it back: the tune leaves the file, listing
// the finding as not fixed, and the instance keeps its value; restore
// brings every recorded value back.
func ownDefer(n *nic, p perNAPI) {
	napis, _ := readNAPIs(n.Name)
	i := slices.IndexFunc(napis, func(x steer.NAPI) bool { return x.ID != p.id && x.DeferHardIRQs != nil })
	need("own-defer-napi", i >= 0, "a second NAPI instance with defer-hard-irqs: %+v", napis)
	id, own := napis[i].ID, uint32(3)
	set := openSetter()
	err := set.SetNAPI(n.Name, id, nicset.NAPISetting{DeferHardIRQs: &own})
	set.Close()
	need("own-defer-set", err == nil, "napi-set %s NAPI %d defer-hard-irqs %d: %v", n.Name, id, own, err)
	was := recordNIC(n)
	var d tuneDoc
	jsonOf(&d, tuneArgs(n)...)
	wrote := slices.ContainsFunc(d.Changes.Settings, func(s struct {
		File string `json:"file"`
		To   string `json:"to"`
	}) bool {
		return strings.HasSuffix(s.File, "/napi_defer_hard_irqs")
	})
	listed := slices.ContainsFunc(d.Cannot, func(c struct {
		tuneFinding
		NoFix string `json:"no_fix"`
	}) bool {
		return c.Check == "napi-settings" && c.Subject == "napi_defer_hard_irqs" && c.NoFix != ""
	})
	now, _ := readNAPIs(n.Name)
	k := slices.IndexFunc(now, func(x steer.NAPI) bool { return x.ID == id })
	kept := k >= 0 && now[k].DeferHardIRQs != nil && *now[k].DeferHardIRQs == own
	check("own-defer-kept", !wrote && listed && kept, "NAPI %d has defer-hard-irqs %d of its own: the tune writes no napi_defer_hard_irqs (wrote %v), lists it as not fixed (%v) and the instance keeps its value (%v): cannot %+v",
		id, own, wrote, listed, kept, d.Cannot)
	r := irqnuma("restore")
	check("own-defer-restore-exit", r.code == 0, "%s", r)
	sameAs("own-defer-restore", n, was)
}

// tuneArgs are the tune's arguments: eth2 only, every finding from info
// up: the RSS table without queues 2-3 (rss-queue-unused) and the
// per-NAPI irq-suspend-timeout are info findings, and the tune plans
// only those at or above --fail-on.
func tuneArgs(n *nic, more ...string) []string {
	return append([]string{"tune", "--nic", n.Name, "--fail-on", "info"}, more...)
}

// nicRecord is every value the scenario or a tune may change, as the
// kernel shows it.
type nicRecord struct {
	// files are the bytes of every /proc/irq/N/smp_affinity_list and of
	// the NIC's rps_cpus, xps_cpus, threaded, napi_defer_hard_irqs and
	// gro_flush_timeout.
	files map[string]string
	// threads are the napi/IF-* kthreads' CPUs (sched_getaffinity), by pid.
	threads map[int]string
	// ethtool is the guest's ethtool -l and -x text.
	ethtool map[string]string
	// napi is netdev napi-get's instances as steer.Read reads them, JSON
	// (null where the kernel has no napi-get).
	napi string
	// irqbalance is the running irqbalance's setup (parseSetup), "" when
	// none runs.
	irqbalance string
}

func nicFiles(n *nic) []string {
	var out []string
	for _, irq := range allIRQs() {
		out = append(out, irqDir(irq)+"/smp_affinity_list")
	}
	base := "/sys/class/net/" + n.Name
	for _, g := range []string{"/queues/rx-*/rps_cpus", "/queues/tx-*/xps_cpus"} {
		m, _ := filepath.Glob(base + g)
		out = append(out, m...)
	}
	for _, f := range []string{"threaded", "napi_defer_hard_irqs", "gro_flush_timeout"} {
		out = append(out, base+"/"+f)
	}
	return out
}

func recordNIC(n *nic) nicRecord {
	r := nicRecord{files: map[string]string{}, threads: map[int]string{}, ethtool: map[string]string{}}
	for _, f := range nicFiles(n) {
		b, err := os.ReadFile(f)
		if err != nil {
			r.files[f] = "error: " + err.Error()
			continue
		}
		r.files[f] = string(b)
	}
	for pid, c := range napiAffinities(n.Name) {
		r.threads[pid] = c.String()
	}
	for _, opt := range []string{"-l", "-x"} {
		r.ethtool[opt] = ethtool(opt, n.Name)
	}
	napis, _ := readNAPIs(n.Name)
	b, err := json.Marshal(napis)
	need("napi-json", err == nil, "%v", err)
	r.napi = string(b)
	if running != nil {
		r.irqbalance = running.setup()
	}
	return r
}

// readNAPIs is the NIC's NAPI instances as steer.Read has them, and why
// they are unknown when they are (a kernel without netdev napi-get).
func readNAPIs(ifname string) ([]steer.NAPI, string) {
	fsys, err := kfile.Open("/")
	need("open-root", err == nil, "%v", err)
	defer fsys.Close()
	h, err := steer.Read(fsys, []string{ifname})
	need("steer-read", err == nil && h.NIC(ifname) != nil, "steer.Read %s: %v", ifname, err)
	nic := h.NIC(ifname)
	if why, ok := nic.Why(steer.PartNAPI); ok {
		return nil, why.String()
	}
	return nic.NAPIs, ""
}

// diff says where got differs from want. withPIDs false leaves out the
// NAPI instances' kthread pids and the kthreads that are new in got (a
// kernel before 6.16 keeps a NAPI's kthread once threaded is off).
func (want nicRecord) diff(got nicRecord, withPIDs bool) []string {
	var d []string
	for _, k := range slices.Sorted(maps.Keys(want.files)) {
		if got.files[k] != want.files[k] {
			d = append(d, fmt.Sprintf("%s: %q, was %q", k, got.files[k], want.files[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got.files)) {
		if _, ok := want.files[k]; !ok {
			d = append(d, fmt.Sprintf("%s: new (%q)", k, got.files[k]))
		}
	}
	for _, pid := range slices.Sorted(maps.Keys(want.threads)) {
		if g, ok := got.threads[pid]; !ok || g != want.threads[pid] {
			d = append(d, fmt.Sprintf("kthread pid %d: CPUs %q (there %v), was %q", pid, g, ok, want.threads[pid]))
		}
	}
	for _, pid := range slices.Sorted(maps.Keys(got.threads)) {
		if _, ok := want.threads[pid]; !ok && withPIDs {
			d = append(d, fmt.Sprintf("kthread pid %d: new (CPUs %s)", pid, got.threads[pid]))
		}
	}
	for _, opt := range []string{"-l", "-x"} {
		if got.ethtool[opt] != want.ethtool[opt] {
			d = append(d, fmt.Sprintf("ethtool %s:\n%s\nwas:\n%s", opt, got.ethtool[opt], want.ethtool[opt]))
		}
	}
	gn, wn := got.napi, want.napi
	if !withPIDs {
		gn, wn = withoutPIDs(gn), withoutPIDs(wn)
	}
	if gn != wn {
		d = append(d, fmt.Sprintf("napi-get: %s, was %s", gn, wn))
	}
	if got.irqbalance != want.irqbalance {
		d = append(d, fmt.Sprintf("irqbalance setup: %s, was %s", got.irqbalance, want.irqbalance))
	}
	return d
}

// withoutPIDs is a NAPI record without its kthreads' pids.
func withoutPIDs(s string) string {
	var napis []steer.NAPI
	if json.Unmarshal([]byte(s), &napis) != nil {
		return s
	}
	for i := range napis {
		napis[i].PID = 0
	}
	b, _ := json.Marshal(napis)
	return string(b)
}

// sameAs checks that every recorded value is as in want, byte for byte.
func sameAs(name string, n *nic, want nicRecord) {
	d := want.diff(recordNIC(n), true)
	check(name+"-unchanged", len(d) == 0, "every IRQ's smp_affinity_list, %s's rps_cpus, xps_cpus, threaded and NAPI settings (sysfs and napi-get), its kthreads' CPUs and ethtool -l/-x as before, byte for byte; differences:\n%s",
		n.Name, strings.Join(d, "\n"))
}

// perNAPI is the per-NAPI contradiction the scenario made: the instance
// and its irq-suspend-timeout; id 0 when the kernel could not have one.
type perNAPI struct {
	id      uint32
	suspend uint64
}

// disturb makes the NIC NOT READY (see scenarioTune).
func disturb(l *lab, n *nic) perNAPI {
	other := l.online() &^ l.nodes[n.node]
	ids := other.ids()
	must("other-node", len(ids) > 0, "online CPUs off node %d: %s", n.node, other)
	ethtool("-X", n.Name, "equal", "2")
	setThreaded(n.Name, 1)
	for pid := range napiAffinities(n.Name) {
		pinKthread(pid, other)
	}
	for i, q := range n.queues() {
		cpu := strconv.Itoa(ids[i%len(ids)])
		need("move-irq", writeAffinity(q.irq, cpu) == nil, "IRQ %d to CPU %s", q.irq, cpu)
	}
	rps, _ := filepath.Glob("/sys/class/net/" + n.Name + "/queues/rx-*/rps_cpus")
	must("rps-files", len(rps) == n.QueuePairs, "rx queues' rps_cpus: %v", rps)
	for _, f := range rps {
		writeSys(f, strconv.FormatUint(uint64(other), 16))
	}
	base := "/sys/class/net/" + n.Name + "/"
	writeSys(base+"gro_flush_timeout", "0")
	writeSys(base+"napi_defer_hard_irqs", "2")
	p := suspendOneNAPI(n)
	// Packets both ways: each queue IRQ is delivered where it was moved.
	n.rx(500)
	n.tx(50, l.online())
	return p
}

func writeSys(path, v string) {
	err := os.WriteFile(path, []byte(v), 0)
	need("write", err == nil, "write %s to %s: %v", v, path, err)
}

// suspendOneNAPI sets one NAPI instance's irq-suspend-timeout over
// napi-set while gro_flush_timeout is 0: napi.rst says it then may have
// no effect, a contradiction of that instance alone, which the NIC's
// sysfs napi_defer_hard_irqs finding does not hide. It says what the
// kernel lacks when it cannot.
func suspendOneNAPI(n *nic) perNAPI {
	napis, why := readNAPIs(n.Name)
	threaded := slices.ContainsFunc(napis, func(x steer.NAPI) bool { return x.Threaded != nil })
	if !threaded {
		info("lacks-napi-threaded", "kernel %s: napi-get reports no per-NAPI threaded (Linux 6.17 added it): %s", readFile("/proc/sys/kernel/osrelease"), orText(why, "not in the reply"))
	}
	i := slices.IndexFunc(napis, func(x steer.NAPI) bool { return x.IRQSuspendTimeout != nil })
	if i < 0 {
		info("lacks-napi-set", "kernel %s: no per-NAPI irq-suspend-timeout to contradict (napi-set came in Linux 6.13, irq-suspend-timeout in 6.14): %s",
			readFile("/proc/sys/kernel/osrelease"), orText(why, fmt.Sprintf("napi-get lists %d instances, none with irq-suspend-timeout", len(napis))))
		return perNAPI{}
	}
	set := openSetter()
	defer set.Close()
	p := perNAPI{id: napis[i].ID, suspend: 20_000_000}
	err := set.SetNAPI(n.Name, p.id, nicset.NAPISetting{IRQSuspendTimeout: &p.suspend})
	if errors.Is(err, nicset.ErrNoNAPISet) {
		info("lacks-napi-set", "kernel %s: %v", readFile("/proc/sys/kernel/osrelease"), err)
		return perNAPI{}
	}
	must("napi-set", err == nil, "napi-set %s NAPI %d irq-suspend-timeout %d: %v", n.Name, p.id, p.suspend, err)
	return p
}

func orText(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// tuneFinding is a finding of the tune's or audit's JSON.
type tuneFinding struct {
	Check    string `json:"check"`
	Severity string `json:"severity"`
	NIC      string `json:"nic"`
	Subject  string `json:"subject"`
}

// tuneDoc is `irqnuma tune -o json` (report.TuneDoc), as far as the
// scenario reads it.
type tuneDoc struct {
	Before tuneVerdict  `json:"before"`
	After  *tuneVerdict `json:"after"`
	Fixes  []struct {
		tuneFinding
		By string `json:"by"`
	} `json:"fixes"`
	Cannot []struct {
		tuneFinding
		NoFix string `json:"no_fix"`
	} `json:"cannot"`
	Changes struct {
		Plan    []pinRow `json:"plan"`
		Threads []struct {
			PID    int    `json:"pid"`
			Comm   string `json:"comm"`
			To     string `json:"to"`
			Action string `json:"action"`
		} `json:"threads"`
		Steer []struct {
			Step string `json:"step"`
		} `json:"steer"`
		Settings []struct {
			File string `json:"file"`
			To   string `json:"to"`
		} `json:"settings"`
		StateFile string `json:"state_file"`
	} `json:"changes"`
}

type tuneVerdict struct {
	Ready    bool          `json:"ready"`
	Findings []tuneFinding `json:"findings"`
}

// wantChecks are the findings the scenario makes on every kernel.
var wantChecks = []string{"irq-remote", "napi-thread-remote", "rps-remote", "napi-settings"}

// bansIrqbalance: irqbalance runs and the tune bans the NIC's IRQs from
// it (tunesIrqbalance).
var bansIrqbalance bool

// madeChecks are the findings the scenario made: wantChecks, and
// irqbalance-active while irqbalance runs.
func madeChecks() []string {
	if running != nil {
		return append(slices.Clone(wantChecks), "irqbalance-active")
	}
	return slices.Clone(wantChecks)
}

// auditNotReady: the audit of the NIC is NOT READY (exit 3) and names
// every finding the scenario made.
func auditNotReady(n *nic, p perNAPI) {
	r := irqnuma("audit", "--nic", n.Name)
	missing := slices.DeleteFunc(madeChecks(), func(c string) bool { return strings.Contains(r.stdout, c) })
	check("audit-not-ready", r.code == 3 && strings.Contains(r.stdout, "NOT READY") && len(missing) == 0,
		"audit --nic %s: exit 3, NOT READY, naming %v (missing %v): %s", n.Name, madeChecks(), missing, r)
	var d struct {
		Findings []tuneFinding `json:"findings"`
	}
	jsonOf(&d, "audit", "--nic", n.Name, "--fail-on", "never")
	var got []string
	for _, f := range d.Findings {
		if f.NIC == n.Name && f.Check == "napi-settings" {
			got = append(got, f.Subject)
		}
	}
	want := []string{"napi_defer_hard_irqs"}
	if p.id != 0 {
		want = append(want, fmt.Sprintf("NAPI %d", p.id))
	}
	sort.Strings(got)
	sort.Strings(want)
	check("audit-napi-settings", slices.Equal(got, want), "napi-settings subjects %q, want %q (sysfs; and the instance with irq-suspend-timeout alone, where napi-set made one)", got, want)
}

// steps are the transaction's steps in its order (steering, settings,
// IRQ and xps writes, thread moves), by kind.
func steps(d tuneDoc) []string {
	var out []string
	for range d.Changes.Steer {
		out = append(out, "steer")
	}
	for range d.Changes.Settings {
		out = append(out, "setting")
	}
	for _, r := range d.Changes.Plan {
		if r.Kind == "xps" {
			out = append(out, "xps")
		} else {
			out = append(out, "irq")
		}
	}
	for _, t := range d.Changes.Threads {
		if t.Action == "change" {
			out = append(out, "thread")
		}
	}
	return out
}

// checkDryRun: the dry run plans a fix for every finding the scenario
// made, and a step of each kind.
func checkDryRun(n *nic, d tuneDoc, p perNAPI) {
	fixed := map[string]bool{}
	for _, f := range d.Fixes {
		fixed[f.Check] = true
	}
	var unfixed []string
	want := append(slices.Clone(wantChecks), "rss-queue-unused")
	if bansIrqbalance {
		want = append(want, "irqbalance-active")
	}
	for _, c := range want {
		if !fixed[c] {
			unfixed = append(unfixed, c)
		}
	}
	kinds := slices.Compact(steps(d))
	check("dry-run-plan", !d.Before.Ready && len(unfixed) == 0 && slices.Contains(kinds, "steer") && slices.Contains(kinds, "setting") &&
		slices.Contains(kinds, "irq") && slices.Contains(kinds, "thread"),
		"tune --dry-run: before not ready (%v), fixes for every finding made (none for %v), step kinds %v: fixes %+v", d.Before.Ready, unfixed, kinds, d.Fixes)
	napiSet := false
	for _, s := range d.Changes.Steer {
		napiSet = napiSet || strings.Contains(s.Step, "irq-suspend-timeout")
	}
	check("dry-run-napi-set", napiSet == (p.id != 0), "a napi-set step for NAPI %d's irq-suspend-timeout (planned %v), steering steps %+v", p.id, napiSet, d.Changes.Steer)
	info("dry-run-steps", "%d steps: %v", len(steps(d)), steps(d))
}

// injectFaults runs the tune once with a fault before each step of the
// dry run's plan: each exits 1, rolls back and leaves every value as it
// was, and leaves no state file to restore.
func injectFaults(n *nic, dry tuneDoc, before nicRecord) {
	kinds := steps(dry)
	must("steps", len(kinds) > 0, "the dry run plans steps")
	for i, kind := range kinds {
		os.Setenv("IRQNUMA_LAB_TXN_FAULT", strconv.Itoa(i))
		t := time.Now()
		r := irqnuma(tuneArgs(n)...)
		os.Unsetenv("IRQNUMA_LAB_TXN_FAULT")
		name := fmt.Sprintf("fault%d-%s", i, kind)
		check(name+"-exit", r.code == 1 && strings.Contains(r.stderr, "rolled back"),
			"a fault before step %d (%s) fails the tune, which rolls back (%.1fs): %s", i, kind, time.Since(t).Seconds(), r)
		sameAs(name, n, before)
		states, _ := filepath.Glob("/var/lib/irqnuma/state-*.json")
		check(name+"-no-state", len(states) == 0, "no state file left to restore: %v", states)
	}
	r := irqnuma("restore")
	check("faults-nothing-to-restore", r.code != 0 && strings.Contains(r.stderr, "no state file"), "after the faults, restore finds nothing to restore: %s", r)
	sameAs("faults-restore", n, before)
}

// tuneFixes: the tune exits 0 and its audit after is READY, or leaves
// only what it lists as not fixed; the kernel's files show each fix; the
// audit is READY.
func tuneFixes(l *lab, n *nic, p perNAPI) {
	var d tuneDoc
	jsonOf(&d, tuneArgs(n)...)
	must("tune-after", d.After != nil, "the tune audited again")
	var left []string
	for _, f := range d.After.Findings {
		listed := slices.ContainsFunc(d.Cannot, func(c struct {
			tuneFinding
			NoFix string `json:"no_fix"`
		}) bool {
			return c.tuneFinding == f && c.NoFix != ""
		})
		if !listed {
			left = append(left, fmt.Sprintf("%s %s %s %s", f.Severity, f.Check, f.NIC, f.Subject))
		}
	}
	check("tune-ready", d.After.Ready || len(left) == 0, "after the tune: ready %v; findings not in cannot: %v; cannot %+v", d.After.Ready, left, d.Cannot)
	check("tune-state", d.Changes.StateFile != "", "state file %q", d.Changes.StateFile)

	local := l.nodes[n.node]
	for _, q := range n.queues() {
		aff := mustCPUs(affinityList(q.irq))
		check(fmt.Sprintf("tuned-irq%d", q.irq), aff != 0 && aff.within(local), "IRQ %d (%s %d) smp_affinity_list %s, node %d CPUs %s", q.irq, q.dir, q.queue, aff, n.node, local)
	}
	// x86 moves an IRQ at its next interrupt: packets both ways until
	// none is pending (at most 8 rounds; the checks say what did not
	// move).
	got := 0
	for range 8 {
		got += n.rx(300)
		n.tx(30, l.online())
		if !movePending(n) {
			break
		}
	}
	info("tuned-traffic", "%d packets in to move the IRQs", got)
	for _, q := range n.queues() {
		eff := effective(q.irq)
		check(fmt.Sprintf("tuned-irq%d-effective", q.irq), eff != 0 && eff.within(local), "IRQ %d effective_affinity %s after traffic, node %d CPUs %s", q.irq, eff, n.node, local)
	}
	for pid, c := range napiAffinities(n.Name) {
		check(fmt.Sprintf("tuned-kthread-%d", pid), c != 0 && c.within(local), "napi kthread pid %d (%s) on CPUs %s, node %d CPUs %s", pid, readFile(fmt.Sprintf("/proc/%d/comm", pid)), c, n.node, local)
	}
	rps, _ := filepath.Glob("/sys/class/net/" + n.Name + "/queues/rx-*/rps_cpus")
	for _, f := range rps {
		v := readFile(f)
		m, err := strconv.ParseUint(strings.ReplaceAll(v, ",", ""), 16, 64)
		check("tuned-"+filepath.Base(filepath.Dir(f))+"-rps", err == nil && m != 0 && cpus(m).within(local), "%s %q, node %d CPUs %s", f, v, n.node, local)
	}
	deferFile := "/sys/class/net/" + n.Name + "/napi_defer_hard_irqs"
	check("tuned-defer", readFile(deferFile) == "0", "%s %q, want 0", deferFile, readFile(deferFile))
	x, err := parseEthtoolX(ethtool("-x", n.Name))
	spread := map[uint32]bool{}
	for _, q := range x.table {
		spread[q] = true
	}
	check("tuned-rss", err == nil && len(spread) == n.QueuePairs, "ethtool -x %s: the table spreads over %d queues (%v), want %d", n.Name, len(spread), err, n.QueuePairs)
	if p.id != 0 {
		tunedNAPI(n, p)
	}
	if running != nil {
		tunedIrqbalance(n, d)
	}
	tunedAudit(n)
}

// tunedAudit: the audit after the tune is READY (exit 0); while the
// tune does not ban irqbalance, it is NOT READY (exit 3) for
// irqbalance-active alone.
func tunedAudit(n *nic) {
	r := irqnuma("audit", "--nic", n.Name)
	var d struct {
		Findings []tuneFinding `json:"findings"`
	}
	jsonOf(&d, "audit", "--nic", n.Name, "--fail-on", "never")
	var left []string
	for _, f := range d.Findings {
		if f.Severity == "warning" || f.Severity == "error" {
			left = append(left, f.Check)
		}
	}
	left = slices.Compact(left)
	if running != nil && !bansIrqbalance {
		check("tuned-audit", r.code == 3 && slices.Equal(left, []string{"irqbalance-active"}),
			"audit --nic %s after the tune: NOT READY (exit 3) for irqbalance-active alone, which this tune does not ban; warnings and errors: %v; %s", n.Name, left, r)
		return
	}
	check("tuned-audit", r.code == 0 && len(left) == 0, "audit --nic %s after the tune: READY; warnings and errors %v: %s", n.Name, left, r)
}

// tunedIrqbalance: with the tuner's ban, irqbalance's own setup bans
// every queue IRQ of the NIC and the audit after has no
// irqbalance-active; without it, the tune lists irqbalance-active as not
// fixed.
func tunedIrqbalance(n *nic, d tuneDoc) {
	active := slices.ContainsFunc(d.After.Findings, func(f tuneFinding) bool { return f.Check == "irqbalance-active" && f.NIC == n.Name })
	if !bansIrqbalance {
		listed := false
		for _, c := range d.Cannot {
			listed = listed || (c.Check == "irqbalance-active" && c.NIC == n.Name && c.NoFix != "")
		}
		check("tuned-irqbalance-cannot", active && listed, "irqbalance-active stays after the tune (%v) and is listed as not fixed (%v): %+v", active, listed, d.Cannot)
		return
	}
	banned := running.banned()
	var loose []int
	for _, q := range n.queues() {
		if !slices.Contains(banned, q.irq) {
			loose = append(loose, q.irq)
		}
	}
	check("tuned-irqbalance", !active && len(loose) == 0, "after the tune irqbalance-active %v; irqbalance's setup bans %v, queue IRQs not banned %v", active, banned, loose)
}

// tunedNAPI: napi-get shows the instance's irq-suspend-timeout 0, and
// every instance's defer-hard-irqs 0 (the NIC's sysfs write sets them
// all).
func tunedNAPI(n *nic, p perNAPI) {
	napis, why := readNAPIs(n.Name)
	var bad []string
	for _, x := range napis {
		if x.DeferHardIRQs == nil || *x.DeferHardIRQs != 0 {
			bad = append(bad, fmt.Sprintf("NAPI %d defer-hard-irqs %v", x.ID, x.DeferHardIRQs))
		}
		if x.ID == p.id && (x.IRQSuspendTimeout == nil || *x.IRQSuspendTimeout != 0) {
			bad = append(bad, fmt.Sprintf("NAPI %d irq-suspend-timeout %v", x.ID, x.IRQSuspendTimeout))
		}
	}
	check("tuned-napi", len(napis) > 0 && len(bad) == 0, "napi-get after the tune (%s): %v", why, bad)
}

// putBackNIC puts back what the scenario changed, from the record it
// made first: per-NAPI settings, sysfs files, threaded, the RSS table,
// the kthreads' CPUs; then checks the record is as found.
func putBackNIC(n *nic, was nicRecord) {
	if s := irqnuma("restore"); s.code == 0 {
		info("put-back-restore", "a tune was left in place and is undone: %s", s)
	}
	// threaded first: the other files do not depend on it; on kernels
	// with per-NAPI settings it and the NAPI defaults write every
	// instance's, so the instances' own values go back last.
	base := "/sys/class/net/" + n.Name + "/"
	order := []string{base + "threaded", base + "gro_flush_timeout", base + "napi_defer_hard_irqs"}
	for _, f := range slices.Sorted(maps.Keys(was.files)) {
		if !slices.Contains(order, f) {
			order = append(order, f)
		}
	}
	for _, f := range order {
		v, ok := was.files[f]
		if !ok || strings.HasPrefix(v, "error: ") || readRaw(f) == v {
			continue
		}
		if err := os.WriteFile(f, []byte(v), 0); err != nil {
			check("put-back-write", false, "write %q to %s: %v", v, f, err)
		}
	}
	putBackNAPI(n, was)
	if ethtool("-x", n.Name) != was.ethtool["-x"] {
		ethtool("-X", n.Name, "default")
	}
	for pid, c := range was.threads {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			pinKthread(pid, mustCPUs(c))
		}
	}
	now := recordNIC(n)
	d := was.diff(now, false)
	check("put-back", len(d) == 0, "the guest as the scenario found it; differences:\n%s", strings.Join(d, "\n"))
	if extra := len(now.threads) - len(was.threads); extra > 0 {
		info("put-back-kthreads", "%d napi kthreads of %s stay after threaded 0 (the kernel keeps them): %v", extra, n.Name, now.threads)
	}
}

func readRaw(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(b)
}

// putBackNAPI writes back each NAPI instance's defer-hard-irqs and
// irq-suspend-timeout the record has, where they now differ.
func putBackNAPI(n *nic, was nicRecord) {
	var old []steer.NAPI
	if json.Unmarshal([]byte(was.napi), &old) != nil || len(old) == 0 {
		return
	}
	now, _ := readNAPIs(n.Name)
	set := openSetter()
	defer set.Close()
	for _, o := range old {
		i := slices.IndexFunc(now, func(x steer.NAPI) bool { return x.ID == o.ID })
		if i < 0 {
			continue
		}
		var back nicset.NAPISetting
		if differs(o.DeferHardIRQs, now[i].DeferHardIRQs) {
			back.DeferHardIRQs = o.DeferHardIRQs
		}
		if differs(o.IRQSuspendTimeout, now[i].IRQSuspendTimeout) {
			back.IRQSuspendTimeout = o.IRQSuspendTimeout
		}
		if back.DeferHardIRQs == nil && back.IRQSuspendTimeout == nil {
			continue
		}
		if err := set.SetNAPI(n.Name, o.ID, back); err != nil {
			check("put-back-napi", false, "napi-set %s NAPI %d %+v: %v", n.Name, o.ID, back, err)
		}
	}
}

// need is must that reports only a failure: the scenario's many reads
// and writes that only have to work.
func need(name string, ok bool, format string, args ...any) {
	if !ok {
		must(name, false, format, args...)
	}
}

// pinKthread sets a thread's CPUs (sched_setaffinity).
func pinKthread(pid int, c cpus) {
	var set unix.CPUSet
	for _, id := range c.ids() {
		set.Set(id)
	}
	err := unix.SchedSetaffinity(pid, &set)
	need("sched_setaffinity", err == nil, "pid %d to %s: %v", pid, c, err)
}

// openSetter is irqnuma's netlink writer of NIC settings (napi-set), on
// the live guest; its Close closes the root too.
func openSetter() nicset.Setter {
	fsys, err := kfile.Open("/")
	need("open-root", err == nil, "%v", err)
	set, err := nicset.OpenSetter(fsys)
	if err != nil {
		fsys.Close()
		need("setter", false, "%v", err)
	}
	return closeBoth{set, fsys}
}

type closeBoth struct {
	nicset.Setter
	fsys kfile.FS
}

func (c closeBoth) Close() error {
	err := c.Setter.Close()
	c.fsys.Close()
	return err
}

// differs says whether a recorded value is known and now another.
func differs[T comparable](was, now *T) bool {
	return was != nil && now != nil && *was != *now
}
