package watch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/watchtest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// setup copies a committed host tree and returns it with a sampler on an
// injected clock.
func setup(t *testing.T, name string, procs ...*proc.Process) (watchtest.Tree, *Sampler, *watchtest.Clock) {
	t.Helper()
	root := hosttest.Copy(t, name)
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	clk := &watchtest.Clock{T: time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)}
	s, err := newSampler(h, samplerOptions{Processes: procs, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return watchtest.Tree{T: t, Root: root}, s, clk
}

func sample(t *testing.T, s *Sampler) *Sample {
	t.Helper()
	sm, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	return sm
}

func diff(t *testing.T, s *Sampler, prev, cur *Sample) *Interval {
	t.Helper()
	iv, err := diffSamples(s.Host(), s.NICs(), prev, cur)
	if err != nil {
		t.Fatal(err)
	}
	noNegatives(t, iv)
	return iv
}

// noNegatives fails on any negative number anywhere in the interval's
// JSON, except the -1 that means unknown for ids and nodes.
func noNegatives(t *testing.T, iv *Interval) {
	t.Helper()
	b, err := json.Marshal(iv)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(k, e)
			}
		case []any:
			for _, e := range x {
				walk(key, e)
			}
		case float64:
			if x < 0 && !(x == -1 && (key == "node" || key == "cpu" || key == "queue")) {
				t.Errorf("negative %s: %v", key, x)
			}
		}
	}
	walk("", v)
}

func nicStats(t *testing.T, iv *Interval, name string) NICStats {
	t.Helper()
	for _, n := range iv.NICs {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no NIC %s in %+v", name, iv.NICs)
	return NICStats{}
}

func irqStats(t *testing.T, iv *Interval, n int) IRQStats {
	t.Helper()
	for _, nic := range iv.NICs {
		for _, q := range nic.IRQs {
			if q.IRQ == n {
				return q
			}
		}
	}
	t.Fatalf("no IRQ %d", n)
	return IRQStats{}
}

func cpuRow(t *testing.T, iv *Interval, id int) CPUStats {
	t.Helper()
	c, ok := iv.cpuStats(id)
	if !ok {
		t.Fatalf("CPU %d not in the interval's CPUs", id)
	}
	return *c
}

func val(p unknown.Value[float64]) any {
	v, ok := p.Get()
	if !ok {
		return nil
	}
	return v
}

func hasNote(iv *Interval, words ...string) bool {
	for _, n := range iv.Notes {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(n, w)
		}
		if ok {
			return true
		}
	}
	return false
}

// TestSaturatedLocal is the done-when: on the seed host, eth0's
// queue IRQ 286 (mlx5_comp2, CPU 53) grows by 1,000,000/s and CPU 53 spends
// 99% of its time in softirq: the verdict names CPU 53, saturated, local.
func TestSaturatedLocal(t *testing.T) {
	h, s, clk := setup(t, "seed")
	prev := sample(t, s)
	clk.Advance(time.Second)
	h.AddIRQ(286, 53, 1_000_000)
	h.AddSoftirq("NET_RX", 53, 400_000)
	h.AddStat(53, map[int]uint64{watchtest.Softirq: 99, watchtest.System: 1})
	iv := diff(t, s, prev, sample(t, s))

	q := irqStats(t, iv, 286)
	if diff := cmp.Diff([]CPURate{{CPU: 53, PerSec: 1e6}}, q.CPUs); diff != "" || val(q.PerSec) != 1e6 {
		t.Errorf("IRQ 286 rate %v, CPUs (-want +got):\n%s", val(q.PerSec), diff)
	}
	v := nicStats(t, iv, "eth0").Verdict
	want := "eth0: RX softirq on CPU 53 (node 1, local) at 99% soft — saturated"
	if v.Text != want {
		t.Errorf("verdict = %q, want %q", v.Text, want)
	}
	if !unknown.Is(v.CPU, 53) || !unknown.Is(v.Local, true) || !v.Saturated || !unknown.Is(v.Node, 1) {
		t.Errorf("verdict fields = cpu %s node %s local %v saturated %v, want 53 1 true true", v.CPU, v.Node, val2(v.Local), v.Saturated)
	}
	c := cpuRow(t, iv, 53)
	if val(c.Soft) != 99.0 || val(c.Busy) != 100.0 || val(c.NetRX) != 400000.0 || c.NICIRQs != 1e6 {
		t.Errorf("CPU 53: soft %v busy %v net_rx %v nic_irqs %v", val(c.Soft), val(c.Busy), val(c.NetRX), c.NICIRQs)
	}
	if len(iv.Notes) != 0 {
		t.Errorf("notes = %q, want none", iv.Notes)
	}
}

func val2(p unknown.Value[bool]) any {
	v, ok := p.Get()
	if !ok {
		return nil
	}
	return v
}

// TestRates checks every per-second number over a 2 s interval.
func TestRates(t *testing.T) {
	h, s, clk := setup(t, "seed")
	prev := sample(t, s)
	clk.Advance(2 * time.Second)
	h.AddIRQ(284, 50, 3000)
	h.AddIRQ(285, 17, 500)
	h.AddSoftirq("NET_RX", 50, 2000)
	h.AddSoftirq("NET_TX", 50, 600)
	h.AddSoftnet(50, 1, 10) // dropped
	h.AddSoftnet(50, 2, 40) // time_squeeze
	h.AddStat(50, map[int]uint64{watchtest.User: 20, watchtest.Nice: 10, watchtest.System: 30, watchtest.IRQ: 10, watchtest.Softirq: 40, watchtest.Idle: 90})
	h.AddStat(9, map[int]uint64{watchtest.User: 150, watchtest.Idle: 50}) // 75% busy, no NIC IRQ
	h.AddStat(10, map[int]uint64{watchtest.User: 50, watchtest.Idle: 150})
	iv := diff(t, s, prev, sample(t, s))

	if iv.Seconds != 2 {
		t.Errorf("seconds = %v, want 2", iv.Seconds)
	}
	tests := []struct {
		give string
		got  any
		want any
	}{
		{"IRQ 284 per sec", val(irqStats(t, iv, 284).PerSec), 1500.0},
		{"IRQ 285 per sec", val(irqStats(t, iv, 285).PerSec), 250.0},
		{"IRQ 287 per sec", val(irqStats(t, iv, 287).PerSec), 0.0},
		{"eth0 queue IRQs per sec", nicStats(t, iv, "eth0").QueueIRQsPerSec, 1750.0},
		{"CPU 50 usr", val(cpuRow(t, iv, 50).Usr), 15.0},
		{"CPU 50 sys", val(cpuRow(t, iv, 50).Sys), 15.0},
		{"CPU 50 irq", val(cpuRow(t, iv, 50).IRQ), 5.0},
		{"CPU 50 soft", val(cpuRow(t, iv, 50).Soft), 20.0},
		{"CPU 50 busy", val(cpuRow(t, iv, 50).Busy), 55.0},
		{"CPU 50 NET_RX", val(cpuRow(t, iv, 50).NetRX), 1000.0},
		{"CPU 50 NET_TX", val(cpuRow(t, iv, 50).NetTX), 300.0},
		{"CPU 50 drops", val(cpuRow(t, iv, 50).Drops), 5.0},
		{"CPU 50 squeezes", val(cpuRow(t, iv, 50).Squeezes), 20.0},
		{"CPU 50 why", cpuRow(t, iv, 50).Why, []string{"irq", "busy"}},
		{"CPU 17 why", cpuRow(t, iv, 17).Why, []string{"irq"}},
		{"CPU 9 why", cpuRow(t, iv, 9).Why, []string{"busy"}},
		{"CPU 9 node", cpuRow(t, iv, 9).Node.Or(-1), 0},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.give, diff)
		}
	}
	if _, ok := iv.cpuStats(10); ok {
		t.Error("CPU 10 (25% busy, no IRQ, no thread) is listed")
	}
	v := nicStats(t, iv, "eth0").Verdict
	want := "eth0: RX softirq on CPU 50 (node 1, local) at 20% soft — not saturated (55% busy), 5 drops/s, 20 time_squeeze/s; also on CPU 17 (local)"
	if v.Text != want {
		t.Errorf("verdict = %q\nwant        %q", v.Text, want)
	}
}

// TestThreadsShareCore follows a process whose threads run on the
// softirq CPU, on its SMT sibling, on their own core and on the other node.
func TestThreadsShareCore(t *testing.T) {
	proc := &proc.Process{PID: 5001, Comm: "iperf3"}
	h, s, clk := setup(t, "seed", proc)
	// seed: SMT siblings are n and n+32; CPU 53's sibling is 21.
	threads := []struct {
		tid  int
		cpu  int
		used uint64 // ticks in the 1 s interval
	}{{5001, 53, 40}, {5002, 21, 96}, {5003, 18, 50}, {5004, 3, 20}, {5005, 19, 0}}
	for _, th := range threads {
		h.Thread(5001, th.tid, "iperf3", "S", 1000, 100, th.cpu)
	}
	prev := sample(t, s)
	clk.Advance(time.Second)
	for _, th := range threads {
		h.Thread(5001, th.tid, "iperf3", "S", 1000+th.used, 100, th.cpu)
	}
	h.AddIRQ(286, 53, 100_000)
	h.AddStat(53, map[int]uint64{watchtest.Softirq: 60, watchtest.Idle: 40})
	iv := diff(t, s, prev, sample(t, s))

	v := nicStats(t, iv, "eth0").Verdict
	got := map[int]Relation{}
	for _, tv := range v.Threads {
		got[tv.TID] = tv.Relation.Or("unknown")
	}
	want := map[int]Relation{5001: RelationSameCPU, 5002: RelationSMTSibling, 5003: RelationOwnCore, 5004: RelationOwnCore}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("thread relations (-want +got):\n%s", diff)
	}
	wantText := "eth0: softirq on CPU 53 (node 1, local) at 60% soft — not saturated (60% busy)" +
		"; iperf3 thread 5002 on CPU 21 (node 1, SMT sibling of softirq CPU 53) at 96% — saturated" +
		"; iperf3 thread 5003 on CPU 18 (node 1, own core) at 50%" +
		"; iperf3 thread 5001 on CPU 53 (node 1, same CPU as the softirq) at 40%" +
		"; 1 more watched threads"
	if v.Text != wantText {
		t.Errorf("verdict =\n%q\nwant\n%q", v.Text, wantText)
	}
	if tv := v.Threads[3]; tv.TID != 5004 || !unknown.Is(tv.Local, false) || !unknown.Is(tv.Node, 0) {
		t.Errorf("thread 5004 = %+v, want remote on node 0", tv)
	}
	if c := cpuRow(t, iv, 21); !cmp.Equal(c.Why, []string{"thread"}) || !cmp.Equal(c.Threads, []int{5002}) {
		t.Errorf("CPU 21 = why %v threads %v", c.Why, c.Threads)
	}
	if _, ok := iv.cpuStats(19); ok {
		t.Error("CPU 19 of an idle thread is listed")
	}
	if len(iv.Threads) != 5 {
		t.Errorf("%d threads, want 5", len(iv.Threads))
	}
}

// TestCounterReset: an IRQ whose count goes backwards (re-registered) and
// a CPU whose /proc/stat times go backwards give unknown, never negative,
// values and a note.
func TestCounterReset(t *testing.T) {
	h, s, clk := setup(t, "seed")
	h.SetIRQ(284, 50, 5_000_000)
	prev := sample(t, s)
	clk.Advance(time.Second)
	h.SetIRQ(284, 50, 1200)
	h.AddIRQ(285, 17, 700)
	h.AddStat(17, map[int]uint64{watchtest.Softirq: 10, watchtest.Idle: 90})
	lines := strings.Split(string(h.Read("proc/stat")), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "cpu50 ") {
			lines[i] = "cpu50 1 0 1 1 0 0 1 0 0 0"
		}
	}
	h.Write("proc/stat", []byte(strings.Join(lines, "\n")))
	iv := diff(t, s, prev, sample(t, s))

	if q := irqStats(t, iv, 284); q.PerSec.Known() || len(q.CPUs) != 0 {
		t.Errorf("IRQ 284 after a reset: rate %v on %v, want unknown", val(q.PerSec), q.CPUs)
	}
	if !hasNote(iv, "IRQ 284", "went backwards", "CPU 50") {
		t.Errorf("no note on IRQ 284's reset in %q", iv.Notes)
	}
	if !hasNote(iv, "/proc/stat", "CPU 50") {
		t.Errorf("no note on CPU 50's times in %q", iv.Notes)
	}
	if got := val(irqStats(t, iv, 285).PerSec); got != 700.0 {
		t.Errorf("IRQ 285 = %v, want 700", got)
	}
	if q := nicStats(t, iv, "eth0").QueueIRQsPerSec; q != 700 {
		t.Errorf("eth0 queue IRQs per sec = %v, want 700 (284 unknown, not counted)", q)
	}
	if !strings.HasPrefix(nicStats(t, iv, "eth0").Verdict.Text, "eth0: softirq on CPU 17 (node 1, local) at 10% soft") {
		t.Errorf("verdict = %q", nicStats(t, iv, "eth0").Verdict.Text)
	}

	// The next interval counts from the reset value again.
	prev = sample(t, s)
	clk.Advance(time.Second)
	h.AddIRQ(284, 50, 300)
	iv = diff(t, s, prev, sample(t, s))
	if got := val(irqStats(t, iv, 284).PerSec); got != 300.0 {
		t.Errorf("IRQ 284 after the reset interval = %v, want 300", got)
	}
	if len(iv.Notes) != 0 {
		t.Errorf("notes = %q, want none", iv.Notes)
	}
}

// TestCPUOffline takes CPU 17 offline between two samples: its column
// leaves /proc/interrupts, so every later column moves left. Rates must
// follow CPU ids, not positions.
func TestCPUOffline(t *testing.T) {
	h, s, clk := setup(t, "seed")
	orig := map[string][]byte{}
	for _, f := range []string{"proc/interrupts", "proc/stat", "proc/net/softnet_stat", "sys/devices/system/cpu/online"} {
		orig[f] = h.Read(f)
	}
	prev := sample(t, s)
	clk.Advance(time.Second)
	h.AddIRQ(284, 50, 1000)
	h.AddIRQ(297, 24, 250)
	h.AddSoftnet(50, 1, 3)
	h.Offline("17", "0-16,18-63")
	cur := sample(t, s)
	iv := diff(t, s, prev, cur)

	if got := cur.irqCols[17]; got != 18 {
		t.Fatalf("after taking CPU 17 offline, column 17 is CPU %d, want 18", got)
	}
	for _, tt := range []struct {
		give int
		want []CPURate
	}{
		{284, []CPURate{{CPU: 50, PerSec: 1000}}},
		{297, []CPURate{{CPU: 24, PerSec: 250}}},
		{285, []CPURate{}},
	} {
		if diff := cmp.Diff(tt.want, irqStats(t, iv, tt.give).CPUs); diff != "" {
			t.Errorf("IRQ %d CPUs (-want +got):\n%s", tt.give, diff)
		}
	}
	if got := val(cpuRow(t, iv, 50).Drops); got != 3.0 {
		t.Errorf("CPU 50 drops = %v, want 3", got)
	}
	if !hasNote(iv, "CPU 17 went offline") {
		t.Errorf("notes = %q, want one on CPU 17 going offline", iv.Notes)
	}

	// CPU 17 comes back.
	prev = cur
	clk.Advance(time.Second)
	for f, b := range orig {
		h.Write(f, b)
	}
	h.AddIRQ(285, 17, 999)
	iv = diff(t, s, prev, sample(t, s))
	if !hasNote(iv, "CPU 17 came online") {
		t.Errorf("notes = %q, want one on CPU 17 coming online", iv.Notes)
	}
	if q := irqStats(t, iv, 285); len(q.CPUs) != 0 || val(q.PerSec) != 0.0 {
		t.Errorf("IRQ 285 on a CPU just back online = %v %v, want no rate from it", val(q.PerSec), q.CPUs)
	}
}

// TestProcessExit notes a watched process that goes away.
func TestProcessExit(t *testing.T) {
	proc := &proc.Process{PID: 7000, Comm: "iperf3"}
	h, s, clk := setup(t, "vm-virtio", proc)
	h.Thread(7000, 7000, "iperf3", "R", 10, 10, 0)
	prev := sample(t, s)
	clk.Advance(time.Second)
	h.Thread(7000, 7000, "iperf3", "R", 60, 10, 1)
	cur := sample(t, s)
	iv := diff(t, s, prev, cur)
	if len(iv.Threads) != 1 || val(iv.Threads[0].CPUPercent) != 50.0 || !unknown.Is(iv.Threads[0].CPU, 1) {
		t.Fatalf("threads = %+v, want 7000 on CPU 1 at 50%%", iv.Threads)
	}
	if err := os.RemoveAll(h.Root + "/proc/7000"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	iv = diff(t, s, cur, sample(t, s))
	if !hasNote(iv, "process 7000 (iperf3) exited") || len(iv.Threads) != 0 {
		t.Errorf("after exit: notes %q threads %v", iv.Notes, iv.Threads)
	}
}

// TestClockMustAdvance: two samples at the same instant give an error,
// not infinite rates.
func TestClockMustAdvance(t *testing.T) {
	_, s, _ := setup(t, "seed")
	a, b := sample(t, s), sample(t, s)
	if _, err := diffSamples(s.Host(), s.NICs(), a, b); err == nil {
		t.Error("Diff of two samples at the same time succeeded")
	}
}

// TestVerdictWords covers the verdict's other sentences on the 2-CPU
// virtio VM (eth0 = virtio2: IRQ 38 input.0, IRQ 39 output.0).
func TestVerdictWords(t *testing.T) {
	tests := []struct {
		give string
		edit func(h watchtest.Tree)
		want string
	}{
		{
			give: "tx vectors, busy with other work",
			edit: func(h watchtest.Tree) {
				h.AddIRQ(39, 1, 1500)
				h.AddIRQ(38, 1, 10)
				h.AddSoftirq("NET_RX", 1, 1600)
				h.AddStat(1, map[int]uint64{watchtest.User: 60, watchtest.System: 35, watchtest.Softirq: 2, watchtest.Idle: 3})
			},
			// virtio runs tx completions in NET_RX: the numbers show RX.
			want: "eth0: RX softirq (for tx queue IRQs) on CPU 1 (node 0, local) at 2% soft — CPU saturated by other work (97% busy: 60% usr, 35% sys)",
		},
		{
			give: "rx on two CPUs, one saturated",
			edit: func(h watchtest.Tree) {
				h.AddIRQ(38, 0, 900)
				h.AddIRQ(38, 1, 100)
				h.AddStat(0, map[int]uint64{watchtest.Softirq: 95, watchtest.Idle: 5})
				h.AddStat(1, map[int]uint64{watchtest.Softirq: 30, watchtest.Idle: 70})
				h.AddSoftnet(0, 1, 7)
			},
			want: "eth0: RX softirq on CPU 0 (node 0, local) at 95% soft — saturated, 7 drops/s; also on CPU 1 (local)",
		},
		{
			give: "stat unknown on the IRQ CPU",
			edit: func(h watchtest.Tree) { h.AddIRQ(38, 0, 10) },
			want: "eth0: RX softirq on CPU 0 (node 0, local) — load unknown",
		},
		{
			give: "idle",
			edit: func(watchtest.Tree) {},
			want: "eth0: no queue interrupts this interval",
		},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			h, s, clk := setup(t, "vm-virtio")
			prev := sample(t, s)
			clk.Advance(time.Second)
			tt.edit(h)
			iv := diff(t, s, prev, sample(t, s))
			if got := nicStats(t, iv, "eth0").Verdict.Text; got != tt.want {
				t.Errorf("verdict = %q\nwant        %q", got, tt.want)
			}
		})
	}
}

// TestVerdictNamesUsers: on a host with NICs on both nodes, a NIC's
// verdict names the threads of the processes that use it, not those of
// a process whose sockets go through another NIC; the interval says
// which NIC each uses.
func TestVerdictNamesUsers(t *testing.T) {
	root := hosttest.Copy(t, "offline-2node")
	tr := watchtest.Tree{T: t, Root: root}
	tr.Thread(7000, 7000, "iperf3", "R", 10, 10, 12)
	hosttest.WriteSockets(t, root, 7000, []hosttest.Socket{{Proto: "tcp", Local: "10.1.0.2:5201", Remote: "10.1.0.9:4000", Inode: 5}})
	hosttest.WriteRoutes(t, filepath.Join(root, "proc/7000/net"), []hosttest.Route{{Iface: "ens1f0", Dst: "10.1.0.0/24"}}, nil)
	n, err := proc.ReadNet(hosttest.Open(t, root), 7000)
	if err != nil {
		t.Fatal(err)
	}
	// A client whose traffic stays on the host, busy on another CPU: no
	// NIC's verdict names it.
	tr.Thread(7100, 7100, "iperf3", "R", 10, 10, 13)
	hosttest.WriteSockets(t, root, 7100, []hosttest.Socket{{Proto: "tcp", Local: "127.0.0.1:41000", Remote: "127.0.0.1:5201", Inode: 6}})
	hosttest.WriteRoutes(t, filepath.Join(root, "proc/7100/net"), []hosttest.Route{{Iface: "ens1f0", Dst: "10.1.0.0/24"}}, nil)
	lo, err := proc.ReadNet(hosttest.Open(t, root), 7100)
	if err != nil {
		t.Fatal(err)
	}
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	clk := &watchtest.Clock{T: time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)}
	s, err := newSampler(h, samplerOptions{Processes: []*proc.Process{{PID: 7000, Comm: "iperf3", Net: n}, {PID: 7100, Comm: "iperf3", Net: lo}}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	prev := sample(t, s)
	clk.Advance(time.Second)
	tr.Thread(7000, 7000, "iperf3", "R", 60, 10, 12)
	tr.Thread(7100, 7100, "iperf3", "R", 60, 10, 13)
	iv := diff(t, s, prev, sample(t, s))
	for _, nic := range []string{"ens1f0", "eth1"} {
		v := nicStats(t, iv, nic).Verdict
		if named := strings.Contains(v.Text, "iperf3 thread 7000"); named != (nic == "ens1f0") || (len(v.Threads) == 1) != named {
			t.Errorf("%s verdict %q (threads %+v): iperf3 named %v, want only under ens1f0", nic, v.Text, v.Threads, named)
		}
		if strings.Contains(v.Text, "thread 7100") {
			t.Errorf("%s verdict %q names the loopback client 7100", nic, v.Text)
		}
	}
	if len(iv.Processes) != 2 || iv.Processes[0].Summary() != "ens1f0" || iv.Processes[1].Summary() != "loopback" {
		t.Errorf("processes %+v, want 7000 on ens1f0, 7100 loopback", iv.Processes)
	}
}

// TestWaitsForComm: a --comm that matches nothing when the watch starts
// is waited for and followed once it runs; its sockets are read again
// until they tell its NIC.
func TestWaitsForComm(t *testing.T) {
	root := hosttest.Copy(t, "vm-virtio")
	tr := watchtest.Tree{T: t, Root: root}
	clk := &watchtest.Clock{T: time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)}
	s, err := Open(hosttest.Open(t, root), nil, proc.Selection{Comms: []string{"iperf3"}}, clk.Now, nil)
	if err != nil {
		t.Fatalf("Open with an absent --comm: %v", err)
	}
	if _, err := Open(hosttest.Open(t, root), nil, proc.Selection{PIDs: []int{7000}}, clk.Now, nil); !errors.Is(err, proc.ErrNoProcess) {
		t.Errorf("Open with an absent --pid: %v, want ErrNoProcess", err)
	}
	step := func(edit func()) *Interval {
		t.Helper()
		prev := sample(t, s)
		clk.Advance(time.Second)
		edit()
		return diff(t, s, prev, sample(t, s))
	}
	iv := step(func() {})
	if !hasNote(iv, "waiting for --comm iperf3") || len(iv.Processes) != 0 {
		t.Errorf("before it starts: notes %q, processes %+v", iv.Notes, iv.Processes)
	}
	start := func() {
		tr.Thread(7000, 7000, "iperf3", "R", 10, 10, 1)
		tr.Write("proc/7000/status", []byte("Name:\tiperf3\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n"))
		tr.Write("proc/7000/task/7000/status", tr.Read("proc/7000/status"))
		hosttest.WriteSockets(t, root, 7000, []hosttest.Socket{{Proto: "tcp", Local: "0.0.0.0:5201", Inode: 5}})
	}
	iv = step(start)
	if !hasNote(iv, "--comm iperf3: process 7000 started") || len(iv.Processes) != 1 || !unknown.Is(iv.Processes[0].Attribution, nicuse.AttributionAny) {
		t.Errorf("once it starts: notes %q, processes %+v", iv.Notes, iv.Processes)
	}
	// A client connects: the next sample reads its sockets again.
	iv = step(func() {
		tr.Thread(7000, 7000, "iperf3", "R", 60, 10, 1)
		if err := os.RemoveAll(filepath.Join(root, "proc/7000/fd")); err != nil {
			t.Fatal(err)
		}
		hosttest.WriteSockets(t, root, 7000, []hosttest.Socket{
			{Proto: "tcp", Local: "0.0.0.0:5201", Inode: 5},
			{Proto: "tcp", Local: "192.0.2.2:5201", Remote: "192.0.2.1:40000", Inode: 6},
		})
		hosttest.WriteRoutes(t, filepath.Join(root, "proc/7000/net"), []hosttest.Route{{Iface: "eth0", Dst: "192.0.2.0/24"}}, nil)
	})
	if len(iv.Processes) != 1 || iv.Processes[0].Summary() != "eth0" || len(iv.Threads) != 1 || val(iv.Threads[0].CPUPercent) != 50.0 {
		t.Errorf("connected: processes %+v, threads %+v", iv.Processes, iv.Threads)
	}
	// It exits and starts again under another PID: followed again.
	iv = step(func() {
		if err := os.RemoveAll(filepath.Join(root, "proc/7000")); err != nil {
			t.Fatal(err)
		}
	})
	if !hasNote(iv, "process 7000 (iperf3) exited") {
		t.Errorf("after exit: notes %q", iv.Notes)
	}
	iv = step(func() {
		tr.Thread(7100, 7100, "iperf3", "R", 10, 10, 0)
		tr.Write("proc/7100/status", []byte("Name:\tiperf3\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n"))
		tr.Write("proc/7100/task/7100/status", tr.Read("proc/7100/status"))
	})
	if !hasNote(iv, "--comm iperf3: process 7100 started") || len(iv.Processes) != 1 || iv.Processes[0].PID != 7100 {
		t.Errorf("restarted: notes %q, processes %+v", iv.Notes, iv.Processes)
	}
}

// TestDiffIncludes: Diff lists the CPUs asked for even when they took no
// NIC IRQ and were idle, and says so in Why; a CPU not asked for and
// idle stays out, as in watch.
func TestDiffIncludes(t *testing.T) {
	h, s, clk := setup(t, "seed")
	prev := sample(t, s)
	clk.Advance(time.Second)
	h.AddIRQ(286, 53, 100_000)
	h.AddStat(53, map[int]uint64{watchtest.Softirq: 95, watchtest.Idle: 5})
	h.AddStat(16, map[int]uint64{watchtest.User: 10, watchtest.Idle: 90})
	h.AddStat(17, map[int]uint64{watchtest.Idle: 100})
	iv, err := s.Diff(prev, sample(t, s), cpuset.New(16, 53))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"asked"}, cpuRow(t, iv, 16).Why); diff != "" {
		t.Errorf("CPU 16 why (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"irq", "busy", "asked"}, cpuRow(t, iv, 53).Why); diff != "" {
		t.Errorf("CPU 53 why (-want +got):\n%s", diff)
	}
	if got := val(cpuRow(t, iv, 16).Usr); got != 10.0 {
		t.Errorf("CPU 16 usr = %v, want 10", got)
	}
	if _, ok := iv.cpuStats(17); ok {
		t.Error("CPU 17 (idle, not asked for) is listed")
	}
	if v := nicStats(t, iv, "eth0").Verdict; !v.Saturated || !v.SoftirqBound {
		t.Errorf("verdict saturated %v, softirq-bound %v; want both (CPU 53 95%% soft): %s", v.Saturated, v.SoftirqBound, v.Text)
	}
}

// TestPodRestarted: a --pod's container that the kubelet restarts under
// a new ID (its process gone, a new group with a new process) is
// resolved again once its process exits, and the new process followed;
// a pod whose containers run nothing is waited for.
func TestPodRestarted(t *testing.T) {
	root := hosttest.Copy(t, "vm-virtio")
	tr := watchtest.Tree{T: t, Root: root}
	clk := &watchtest.Clock{T: time.Date(2026, 12, 3, 1, 0, 0, 0, time.UTC)}
	tr.Write("sys/fs/cgroup/cgroup.controllers", []byte("cpuset cpu io memory pids\n"))
	container := func(id string, pids string) string {
		g := "kubepods.slice/kubepods-podu1.slice/crio-" + id + ".scope"
		tr.Write("sys/fs/cgroup/"+g+"/cgroup.procs", []byte(pids))
		tr.Write("sys/fs/cgroup/"+g+"/cpuset.cpus.effective", []byte("1\n"))
		return "/" + g
	}
	start := func(pid int, group string) {
		tr.Thread(pid, pid, "iperf3", "R", 10, 10, 1)
		tr.Write(fmt.Sprintf("proc/%d/status", pid), []byte("Name:\tiperf3\nCpus_allowed_list:\t1\nMems_allowed_list:\t0\n"))
		tr.Write(fmt.Sprintf("proc/%d/cgroup", pid), []byte("0::"+group+"\n"))
		tr.Write(fmt.Sprintf("proc/%d/task/%d/status", pid, pid), tr.Read(fmt.Sprintf("proc/%d/status", pid)))
		hosttest.WriteSockets(t, root, pid, []hosttest.Socket{{Proto: "tcp", Local: "0.0.0.0:5201", Inode: 5}})
	}
	current := container("aaaa", "7000\n")
	start(7000, current)
	resolves := 0
	resolve := func(sel *proc.Selection) error {
		resolves++
		if current == "" {
			return errors.New("no pod default/web on the node")
		}
		sel.Resolved = map[proc.Selector]proc.PodResolution{proc.PodSelector("default/web"): {
			Groups: []proc.PodGroup{{Path: current, Pod: proc.PodRef{Namespace: "default", Name: "web", Container: "iperf3"}}}}}
		return nil
	}
	sel := proc.Selection{Pods: []string{"default/web"}}
	if err := resolve(&sel); err != nil {
		t.Fatal(err)
	}
	s, err := Open(hosttest.Open(t, root), nil, sel, clk.Now, resolve)
	if err != nil {
		t.Fatal(err)
	}
	prev := sample(t, s)
	step := func(edit func()) *Interval { // one interval after another, as watch runs
		t.Helper()
		clk.Advance(time.Second)
		edit()
		cur := sample(t, s)
		iv := diff(t, s, prev, cur)
		prev = cur
		return iv
	}
	iv := step(func() {})
	if len(iv.Processes) != 1 || resolves != 1 {
		t.Fatalf("running: processes %+v, %d resolves; want 7000 followed, resolved once", iv.Processes, resolves)
	}
	// The container restarts: 7000 exits, a new container runs 7200.
	iv = step(func() {
		if err := os.RemoveAll(filepath.Join(root, "proc/7000")); err != nil {
			t.Fatal(err)
		}
		current = container("bbbb", "7200\n")
		start(7200, current)
	})
	if !hasNote(iv, "process 7000 (iperf3) exited") {
		t.Errorf("after the exit: notes %q", iv.Notes)
	}
	iv = step(func() {})
	if !hasNote(iv, "--pod default/web: process 7200 (iperf3) started; watching it") || len(iv.Processes) != 1 || iv.Processes[0].PID != 7200 || resolves != 2 {
		t.Errorf("after the restart: notes %q, processes %+v, %d resolves; want 7200 followed", iv.Notes, iv.Processes, resolves)
	}
	iv = step(func() {})
	if resolves != 2 || len(iv.Processes) != 1 || iv.Processes[0].PID != 7200 {
		t.Errorf("a pod whose process runs: %d resolves, processes %+v; want it followed, not resolved again", resolves, iv.Processes)
	}
	// The pod is deleted: waited for, resolved at every sample.
	step(func() {
		if err := os.RemoveAll(filepath.Join(root, "proc/7200")); err != nil {
			t.Fatal(err)
		}
		current = ""
	})
	iv = step(func() {})
	if !hasNote(iv, "waiting for --pod default/web: no pod default/web on the node") || len(iv.Processes) != 0 {
		t.Errorf("the pod gone: notes %q, processes %+v", iv.Notes, iv.Processes)
	}
	iv = step(func() {})
	if !hasNote(iv, "waiting for --pod default/web") || resolves != 4 {
		t.Errorf("still gone: notes %q, %d resolves, want one a sample", iv.Notes, resolves)
	}
}
