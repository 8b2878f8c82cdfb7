package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/irqbalance"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func init() {
	takeAway[factSteer] = func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) { o.Steer = nil }
}

func u32(v uint32) *uint32 { return &v }
func u64(v uint64) *uint64 { return &v }
func intp(v int) *int      { return &v }
func boolp(v bool) *bool   { return &v }

// seedSteer is a whole reading of the seed host's eth0 (mlx5_core, 16
// combined channels on IRQs 284-299) with nothing to report: a table of
// 128 entries spread over the 16 queues, UDP hashed with ports, no
// rules, NAPI ids 8193-8208 on the queue IRQs, NAPI not threaded, no
// deferral and no busy polling.
func seedSteer() *steer.Host {
	n := &steer.NIC{Name: "eth0", Index: 4, Driver: &steer.DriverInfo{Driver: "mlx5_core", BusInfo: "0000:98:00.0"},
		Channels: &steer.Channels{MaxCombined: 16, Combined: 16},
		RSS:      &steer.RSS{Rings: 16, HashFunc: "toeplitz"},
		FlowHash: map[steer.FlowType]steer.HashFields{"tcp4": "sdfn", "udp4": "sdfn", "tcp6": "sdfn", "udp6": "sdfn"},
		Rules:    &steer.Rules{},
		Sysfs:    steer.Sysfs{Threaded: intp(0), DeferHardIRQs: u32(0), GROFlushTimeout: u64(0)},
	}
	for i := range 128 {
		n.RSS.Table = append(n.RSS.Table, uint32(i%16))
	}
	for q := range uint32(16) {
		n.Queues = append(n.Queues, steer.NetdevQueue{ID: q, Type: steer.QueueTypeRX, NAPI: 8193 + q}, steer.NetdevQueue{ID: q, Type: steer.QueueTypeTX, NAPI: 8193 + q})
		n.NAPIs = append(n.NAPIs, steer.NAPI{ID: 8193 + q, IRQ: unknown.Of(284 + int(q)), DeferHardIRQs: u32(0), GROFlushTimeout: u64(0), Threaded: boolp(false)})
	}
	return &steer.Host{NICs: []*steer.NIC{n}, Sysctls: map[string]int64{"busy_poll": 0, "busy_read": 0}, Source: "netlink"}
}

// steerRun audits the seed host with its steering changed by give, and
// returns the findings.
func steerRun(t *testing.T, give func(n *steer.NIC, tb *irq.Table, o *Options), procs ...*proc.Process) []Finding {
	t.Helper()
	h, tb := loadHost(t, "seed")
	opts := Options{Governor: performance, Irqbalance: &irqbalance.Settings{Running: unknown.Of(false)},
		IOMMU: &topology.IOMMU{Units: unknown.Of([]string{})}, Cmdline: topology.ParseCmdline("ro quiet"), Steer: seedSteer()}
	opts.Uses = usesOn("eth0", procs...)
	give(opts.Steer.NICs[0], tb, &opts)
	return Run(h, tb, procs, opts)
}

// says is "severity check subject: message" of each finding.
func says(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %s: %s", f.Severity, f.Check, f.Subject, f.Message))
	}
	return out
}

// table is a table of n entries naming queue i%of at entry i.
func table(n, of int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(i % of)
	}
	return out
}

// TestSteerNothingToSay: the seed's whole, sound steering gives no
// finding and no not-checked one.
func TestSteerNothingToSay(t *testing.T) {
	fs := steerRun(t, func(*steer.NIC, *irq.Table, *Options) {})
	for _, f := range fs {
		if f.Check != CheckIRQSharedCPU {
			t.Errorf("unexpected finding %s %s: %s", f.Check, f.Subject, f.Message)
		}
	}
}

// TestRSSTable uses the numbers of the real captures in
// testdata/realhosts/nic/ethtool-x.
func TestRSSTable(t *testing.T) {
	tests := []struct {
		name string
		give func(n *steer.NIC)
		want []string
	}{
		{name: "ixgbe_82599_eno5: 63 rings, a table of 128 naming 0-15", give: func(n *steer.NIC) {
			n.RSS.Rings, n.RSS.Table = 63, table(128, 16)
			n.Channels.Combined, n.Channels.MaxCombined = 63, 63
		}, want: []string{"info rss-queue-unused queues 16-62: queues 16-62 get no RSS traffic: the table of 128 entries names queues 0-15 only: their IRQs' placement matters little, the named queues' matters"}},
		{name: "mlx4_eth1 before the fix: 24 rings, a table of 16", give: func(n *steer.NIC) {
			n.RSS.Rings, n.RSS.Table = 24, table(16, 16)
		}, want: []string{"info rss-queue-unused queues 16-23: queues 16-23 get no RSS traffic: the table of 16 entries names queues 0-15 only: their IRQs' placement matters little, the named queues' matters"}},
		{name: "stmmac_enp0s29f2 after -L rx 3: the table still names 0-7", give: func(n *steer.NIC) {
			n.Channels = &steer.Channels{MaxRX: 8, MaxTX: 8, RX: 3, TX: 3}
			n.RSS.Rings, n.RSS.Table = 3, table(16, 8)
		}, want: []string{"warning rss-queue-missing queues 3-7: eth0's RSS table sends 10 of its 16 entries (63%) to queues 3-7, which do not exist: the NIC has 3 rx rings"}},
		{name: "stmmac after the fix", give: func(n *steer.NIC) {
			n.Channels = &steer.Channels{MaxRX: 8, MaxTX: 8, RX: 3, TX: 3}
			n.RSS.Rings, n.RSS.Table = 3, table(16, 3)
		}},
		{name: "one queue left out, a rule sends to it", give: func(n *steer.NIC) {
			n.RSS.Table = table(128, 15)
			n.Rules = &steer.Rules{Count: 1, Rules: []steer.Rule{{Location: 1, FlowType: "tcp4", Action: steer.RuleActionQueue, Queue: 15}}}
		}, want: []string{"info rss-queue-unused queue 15: queue 15 gets no RSS traffic: the table of 128 entries names queues 0-14 only (ntuple rules send flows to queue 15): their IRQs' placement matters little, the named queues' matters"}},
		{name: "rings unknown: from the channels", give: func(n *steer.NIC) {
			n.RSS.Rings, n.RSS.Table = 0, table(64, 2)
			n.Channels.Combined = 4
		}, want: []string{"info rss-queue-unused queues 2-3: queues 2-3 get no RSS traffic: the table of 64 entries names queues 0-1 only: their IRQs' placement matters little, the named queues' matters"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := steerRun(t, func(n *steer.NIC, _ *irq.Table, _ *Options) { tt.give(n) })
			got := says(append(onlyCheck(fs, CheckRSSQueueMissing), onlyCheck(fs, CheckRSSQueueUnused)...))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
	fs := steerRun(t, func(n *steer.NIC, _ *irq.Table, _ *Options) {
		n.Channels = &steer.Channels{MaxRX: 8, RX: 8}
		n.RSS.Rings, n.RSS.Table = 8, table(16, 4)
	})
	if f := onlyCheck(fs, CheckRSSQueueUnused); len(f) != 1 || !strings.Contains(f[0].Fix, "ethtool -X eth0 equal 8  # or keep only the named queues: ethtool -L eth0 rx 4") {
		t.Errorf("rx-only channels: fix %+v, want ethtool -X equal 8 or -L rx 4", f)
	}
}

// TestIRQRemoteWeighted: a remote queue IRQ says its share of the table;
// one whose queue the table leaves out is only worth knowing.
func TestIRQRemoteWeighted(t *testing.T) {
	fs := steerRun(t, func(n *steer.NIC, tb *irq.Table, _ *Options) {
		n.RSS.Table = table(128, 8) // ethtool -X eth0 equal 8
		for _, irq := range []int{286, 294} {
			q, _ := tb.Get(irq)
			q.Affinity, q.Effective = unknown.Of(cpuset.New(3)), unknown.Of(cpuset.New(3))
		}
	})
	want := []string{
		"error irq-remote IRQ 286 (queue 2): IRQ 286 (queue 2) of eth0 is delivered to CPU 3 (node 0), off the NIC's node 1; its queue takes 16 of 128 RSS table entries (13%)",
		"info irq-remote IRQ 294 (queue 10): IRQ 294 (queue 10) of eth0 is delivered to CPU 3 (node 0), off the NIC's node 1; its queue gets no RSS traffic (the table names it in none of its 128 entries)",
	}
	if diff := cmp.Diff(want, says(onlyCheck(fs, CheckIRQRemote))); diff != "" {
		t.Errorf("irq-remote (-want +got):\n%s", diff)
	}
	// Without the steering, the same IRQs are judged as they always were.
	h, tb := loadHost(t, "seed")
	for _, irq := range []int{286, 294} {
		q, _ := tb.Get(irq)
		q.Affinity, q.Effective = unknown.Of(cpuset.New(3)), unknown.Of(cpuset.New(3))
	}
	for _, f := range onlyCheck(Run(h, tb, nil, Options{Governor: performance}), CheckIRQRemote) {
		if f.Severity != SeverityError || strings.Contains(f.Message, "RSS") {
			t.Errorf("without steering: %s %s", f.Severity, f.Message)
		}
	}
}

// TestNtupleRemote: a rule sending to a queue whose IRQ, or NAPI
// kthread, is remote.
func TestNtupleRemote(t *testing.T) {
	port := uint16(5201)
	rule := steer.Rule{Location: 1, FlowType: "tcp4", DstPort: &port, DstPortMask: 0xffff, Action: steer.RuleActionQueue, Queue: 6}
	fs := steerRun(t, func(n *steer.NIC, tb *irq.Table, _ *Options) {
		n.Rules = &steer.Rules{TableSize: 1024, Count: 2, Rules: []steer.Rule{rule, {Location: 2, FlowType: "udp4", Action: steer.RuleActionDrop}}}
		q, _ := tb.Get(290)
		q.Affinity, q.Effective = unknown.Of(cpuset.New(3)), unknown.Of(cpuset.New(3))
	})
	want := []string{"error ntuple-remote rule 1 (queue 6): ntuple rule 1 of eth0 (tcp4 dst-port 5201) sends its flows to queue 6, whose IRQ 290 is delivered to CPU 3 (node 0), off the NIC's node 1: RSS does not apply to them"}
	if diff := cmp.Diff(want, says(onlyCheck(fs, CheckNtupleRemote))); diff != "" {
		t.Errorf("ntuple-remote, IRQ remote (-want +got):\n%s", diff)
	}
	fs = steerRun(t, func(n *steer.NIC, tb *irq.Table, o *Options) {
		n.Rules = &steer.Rules{Count: 1, Rules: []steer.Rule{rule}}
		n.Sysfs.Threaded = intp(1)
		n.NAPIs[6].PID, n.NAPIs[6].Threaded = 906, boolp(true)
		o.NAPIThreads = map[int]*proc.Process{906: kthread(906, "napi/eth0-8199", cpuset.Range(0, 15), 4)}
	})
	want = []string{"error ntuple-remote rule 1 (queue 6): ntuple rule 1 of eth0 (tcp4 dst-port 5201) sends its flows to queue 6, whose NAPI kthread napi/eth0-8199 (PID 906) may only run on CPUs 0-15 (node 0), off the NIC's node 1: RSS does not apply to them"}
	if diff := cmp.Diff(want, says(onlyCheck(fs, CheckNtupleRemote))); diff != "" {
		t.Errorf("ntuple-remote, kthread remote (-want +got):\n%s", diff)
	}
	fs = steerRun(t, func(n *steer.NIC, _ *irq.Table, _ *Options) {
		n.Rules = &steer.Rules{Count: 1, Rules: []steer.Rule{rule}}
	})
	if got := onlyCheck(fs, CheckNtupleRemote); len(got) != 0 {
		t.Errorf("a rule to a local queue: %v", says(got))
	}
}

// kthread is a napi kthread as proc.Read reads one.
func kthread(pid int, comm string, allowed cpuset.Set, last int) *proc.Process {
	return &proc.Process{PID: pid, Comm: comm, Allowed: allowed,
		Threads: []proc.Thread{{TID: pid, Comm: comm, Allowed: allowed, LastCPU: unknown.Of(last)}}}
}

// threadedSeed makes the seed's NAPI threaded with kthreads 900-915, each
// pinned to its queue IRQ's CPU, then lets change alter them.
func threadedSeed(change func(ks map[int]*proc.Process)) func(n *steer.NIC, tb *irq.Table, o *Options) {
	return func(n *steer.NIC, tb *irq.Table, o *Options) {
		n.Sysfs.Threaded = intp(1)
		o.NAPIThreads = map[int]*proc.Process{}
		for i := range n.NAPIs {
			pid := 900 + i
			n.NAPIs[i].PID, n.NAPIs[i].Threaded = pid, boolp(true)
			q, _ := tb.Get(n.NAPIs[i].IRQ.Or(-1))
			cpu, _ := q.Effective.Or(cpuset.Set{}).Min()
			o.NAPIThreads[pid] = kthread(pid, fmt.Sprintf("napi/eth0-%d", n.NAPIs[i].ID), cpuset.New(cpu), cpu)
		}
		change(o.NAPIThreads)
	}
}

func TestNAPIThreads(t *testing.T) {
	fs := steerRun(t, threadedSeed(func(map[int]*proc.Process) {}))
	for _, id := range []Check{CheckNAPIThreadRemote, CheckNAPIThreadUnpinned, CheckNAPIThreadShared} {
		if got := onlyCheck(fs, id); len(got) != 0 {
			t.Errorf("kthreads pinned locally: %v", says(got))
		}
	}
	fs = steerRun(t, threadedSeed(func(ks map[int]*proc.Process) {
		ks[900] = kthread(900, "napi/eth0-8193", cpuset.Range(0, 15), 3)  // pinned remote
		ks[901] = kthread(901, "napi/eth0-8194", cpuset.Range(0, 63), 40) // anywhere, last on node 0
		ks[902] = kthread(902, "napi/eth0-8195", cpuset.Range(0, 63), 20) // anywhere, last local
		ks[903] = kthread(903, "napi/eth0-8196", cpuset.Range(0, 63), 21)
	}))
	want := []string{
		"error napi-thread-remote NAPI kthreads 900-901: 2 NAPI kthreads (PIDs 900-901) of eth0 run on CPUs 0-15,40 (node 0), off the NIC's node 1 (by affinity or last CPU): the receive work runs there whatever the IRQs' placement",
		"warning napi-thread-unpinned NAPI kthreads 902-903: 2 NAPI kthreads (PIDs 902-903) of eth0 may run on CPUs 0-15,32-47 (node 0), off the NIC's node 1: the scheduler may move the receive work there, and irq pin of the IRQs alone does not stop it",
	}
	got := says(append(onlyCheck(fs, CheckNAPIThreadRemote), onlyCheck(fs, CheckNAPIThreadUnpinned)...))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if f := onlyCheck(fs, CheckNAPIThreadRemote); len(f) == 1 && !cmp.Equal(f[0].TID, []int{900, 901}) {
		t.Errorf("napi-thread-remote TID %v, want the kthreads' PIDs", f[0].TID)
	}
}

// TestNAPIThreadMovedAsleep: a kthread just pinned to a local CPU that
// has not run since (a tune's audit after it moved the threads) still
// shows its last CPU on the other node; it can no longer run there, so
// it is not remote. One whose affinity still allows that CPU is.
func TestNAPIThreadMovedAsleep(t *testing.T) {
	fs := steerRun(t, threadedSeed(func(ks map[int]*proc.Process) {
		ks[900] = kthread(900, "napi/eth0-8193", cpuset.New(20), 3)                      // moved to 20, last ran on 3
		ks[901] = kthread(901, "napi/eth0-8194", cpuset.New(20).Union(cpuset.New(3)), 3) // may still run on 3
	}))
	want := []string{
		"error napi-thread-remote NAPI kthread 901: the NAPI kthread napi/eth0-8194 (PID 901) of eth0 runs on CPU 3 (node 0), off the NIC's node 1 (by affinity or last CPU): the receive work runs there whatever the IRQs' placement",
	}
	if diff := cmp.Diff(want, says(onlyCheck(fs, CheckNAPIThreadRemote))); diff != "" {
		t.Errorf("napi-thread-remote (-want +got):\n%s", diff)
	}
}

// TestNAPIThreadShared: a watched process allowed on the core of a
// kthread pinned to CPU 22 (the seed's queue 13 IRQ 297 lands on 23; the
// process runs on 22).
func TestNAPIThreadShared(t *testing.T) {
	p := &proc.Process{PID: 7, Comm: "iperf3", Allowed: cpuset.New(22),
		Threads: []proc.Thread{{TID: 7, Allowed: cpuset.New(22), LastCPU: unknown.Of(22)}}, NodeKB: map[int]uint64{1: 10}}
	fs := steerRun(t, threadedSeed(func(ks map[int]*proc.Process) {
		ks[905] = kthread(905, "napi/eth0-8198", cpuset.New(22), 22)
	}), p)
	want := []string{"warning napi-thread-shared iperf3 (PID 7): iperf3 (PID 7) may run on CPU 22, which shares a core with the NAPI kthread napi/eth0-8198 (PID 905) of eth0: the process competes with the NIC's receive work"}
	if diff := cmp.Diff(want, says(onlyCheck(fs, CheckNAPIThreadShared))); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// TestNAPIThreadsUnknown: threaded NAPI whose kthreads cannot be named
// says so, once.
func TestNAPIThreadsUnknown(t *testing.T) {
	fs := steerRun(t, func(n *steer.NIC, _ *irq.Table, _ *Options) {
		n.Sysfs.Threaded = intp(1)
		n.NAPIs, n.Queues = nil, nil
		n.SetUnknown(steer.PartNAPI, unknown.Reason{Kind: unknown.KindKernel, Detail: "no netdev family"})
		n.SetUnknown(steer.PartQueues, unknown.Reason{Kind: unknown.KindKernel, Detail: "no netdev family"})
	})
	want := []string{"info not-checked napi-thread-remote: NAPI of eth0 is threaded, but its kthreads are unknown: napi-get not supported by this kernel (no netdev family)"}
	if diff := cmp.Diff(want, says(onlyCheck(fs, CheckNotChecked))); diff != "" {
		t.Errorf("not-checked (-want +got):\n%s", diff)
	}
	// One kthread gone from /proc: the others are judged, and it is named.
	fs = steerRun(t, threadedSeed(func(ks map[int]*proc.Process) {
		delete(ks, 915)
		ks[900] = kthread(900, "napi/eth0-8193", cpuset.Range(0, 15), 3)
	}))
	want = []string{"info not-checked napi-thread-remote: NAPI of eth0 is threaded, but /proc holds no readable status of its kthread 915"}
	if diff := cmp.Diff(want, says(onlyCheck(fs, CheckNotChecked))); diff != "" {
		t.Errorf("not-checked, one kthread gone (-want +got):\n%s", diff)
	}
	if got := onlyCheck(fs, CheckNAPIThreadRemote); len(got) != 1 || !cmp.Equal(got[0].TID, []int{900}) {
		t.Errorf("napi-thread-remote with one kthread gone: %v", says(got))
	}
}

func TestUDPHash(t *testing.T) {
	fs := steerRun(t, func(n *steer.NIC, _ *irq.Table, _ *Options) {
		n.FlowHash["udp4"] = "sd" // ixgbe's default
	})
	want := []string{"warning udp-hash-no-ports rx-flow-hash udp: eth0 hashes udp4 on IP source, IP destination only (sd), not the ports: every UDP flow between two hosts lands on one queue, so a multi-stream UDP test measures one core"}
	got := onlyCheck(fs, CheckUDPHashNoPorts)
	if diff := cmp.Diff(want, says(got)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if len(got) == 1 && got[0].Fix != "ethtool -N eth0 rx-flow-hash udp4 sdfn" {
		t.Errorf("fix %q", got[0].Fix)
	}
	tests := []struct{ give, want string }{{"sd", "sdfn"}, {"", "sdfn"}, {"sdf", "sdfn"}, {"tsd", "tsdfn"}, {"sdn", "sdfn"}}
	for _, tt := range tests {
		if got := withPorts(steer.HashFields(tt.give)); got != tt.want {
			t.Errorf("withPorts(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestChannelsVsCores(t *testing.T) {
	fs := steerRun(t, func(n *steer.NIC, _ *irq.Table, _ *Options) {
		n.Channels = &steer.Channels{MaxCombined: 63, Combined: 63}
	})
	want := []string{"info channels-vs-cores 63 combined channels: eth0 has 63 combined channels (at most 63) for 16 local cores on its node 1: the queues past 16 share cores or are served off the node"}
	got := onlyCheck(fs, CheckChannelsVsCores)
	if diff := cmp.Diff(want, says(got)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if len(got) == 1 && got[0].Fix != "ethtool -L eth0 combined 16" {
		t.Errorf("fix %q", got[0].Fix)
	}
}

func TestNAPISettings(t *testing.T) {
	tests := []struct {
		name string
		give func(n *steer.NIC, o *Options)
		want []string
	}{
		{name: "defer without a timeout (sysfs)", give: func(n *steer.NIC, o *Options) {
			n.Sysfs.DeferHardIRQs = u32(10)
			for i := range n.NAPIs {
				n.NAPIs[i].DeferHardIRQs = u32(10)
			}
		}, want: []string{"warning napi-settings napi_defer_hard_irqs: eth0's napi_defer_hard_irqs is 10 but its gro_flush_timeout is 0: no repoll timer is armed, so no hard IRQ is deferred"}},
		{name: "defer and a timeout", give: func(n *steer.NIC, o *Options) {
			n.Sysfs.DeferHardIRQs, n.Sysfs.GROFlushTimeout = u32(10), u64(20000)
		}},
		{name: "one NAPI set apart", give: func(n *steer.NIC, o *Options) {
			n.NAPIs[2].DeferHardIRQs = u32(100)
			n.NAPIs[3].IRQSuspendTimeout = u64(20000000)
		}, want: []string{
			"warning napi-settings NAPI 8195: NAPI 8195 of eth0 defer hard IRQs with a gro-flush-timeout of 0: no repoll timer is armed, so nothing is deferred",
			"info napi-settings NAPI 8196: NAPI 8196 of eth0 set irq-suspend-timeout without both defer-hard-irqs and gro-flush-timeout: napi.rst says it then may have no discernible effect",
		}},
		{name: "busy polling with threaded NAPI", give: func(n *steer.NIC, o *Options) {
			n.Sysfs.Threaded = intp(1)
			o.Steer.Sysctls["busy_read"] = 50
		}, want: []string{"info napi-settings busy polling and threaded NAPI: net.core.busy_read is set and eth0's NAPI is threaded: packets are processed both in the napi kthreads and in the threads that busy poll, so placing the kthreads places only part of the work"}},
		{name: "busy polling alone", give: func(n *steer.NIC, o *Options) { o.Steer.Sysctls["busy_poll"] = 50 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := steerRun(t, func(n *steer.NIC, _ *irq.Table, o *Options) { tt.give(n, o) })
			if diff := cmp.Diff(tt.want, says(onlyCheck(fs, CheckNAPISettings))); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSteerUnknownOnce: what is not known of a NIC's steering is one
// not-checked finding, whichever checks could not judge; a driver with
// no RSS at all (virtio_net without rss=on) is said to be one.
func TestSteerUnknownOnce(t *testing.T) {
	tests := []struct {
		name string
		give func(n *steer.NIC, o *Options)
		want []string
	}{
		{name: "virtio_net without RSS", give: func(n *steer.NIC, o *Options) {
			n.Driver.Driver = "virtio_net"
			n.RSS, n.Rules, n.FlowHash = nil, nil, nil
			for _, p := range []steer.Part{steer.PartRSS, steer.PartRules, steer.FlowHashPart("udp4"), steer.FlowHashPart("udp6")} {
				n.SetUnknown(p, unknown.Reason{Kind: unknown.KindDriver, Detail: "EOPNOTSUPP"})
			}
		}, want: []string{`info not-checked eth0 steering: eth0's driver (virtio_net) supports no RSS table, hash fields or flow rules: which queue takes a flow is the device's choice, and it is not judged`}},
		{name: "virtio_net without RSS, as 6.18 reads it", give: func(n *steer.NIC, o *Options) {
			// The live VM's eth0: a hash function but no table or key,
			// ETHTOOL_GRXFH answering no fields, no ntuple.
			n.Driver.Driver = "virtio_net"
			n.RSS = &steer.RSS{Rings: 1, HashFunc: "toeplitz"}
			n.Rules = nil
			n.FlowHash = map[steer.FlowType]steer.HashFields{"udp4": "", "tcp4": ""}
			n.SetUnknown(steer.PartRSSTable, unknown.Reason{Kind: unknown.KindDriver, Detail: "the driver reports no indirection table"})
			n.SetUnknown(steer.PartRSSKey, unknown.Reason{Kind: unknown.KindDriver, Detail: "the driver reports no hash key"})
			n.SetUnknown(steer.PartRules, unknown.Reason{Kind: unknown.KindDriver, Detail: "EOPNOTSUPP"})
		}, want: []string{`info not-checked eth0 steering: eth0's driver (virtio_net) supports no RSS table, hash fields or flow rules: which queue takes a flow is the device's choice, and it is not judged`}},
		{name: "not permitted in part", give: func(n *steer.NIC, o *Options) {
			n.Rules = nil
			n.SetUnknown(steer.PartRules, unknown.Reason{Kind: unknown.KindPermission, Detail: "EPERM"})
		}, want: []string{`info not-checked eth0 steering: eth0's steering is not known in part: ntuple: not permitted (EPERM)`}},
		{name: "not read", give: func(n *steer.NIC, o *Options) { o.Steer = nil },
			want: []string{`info not-checked  steering: the NICs' steering was not read`}},
		{name: "the root holds none", give: func(n *steer.NIC, o *Options) {
			o.Steer = &steer.Host{Source: "none", NICs: []*steer.NIC{{Name: "eth0"}}}
		}, want: []string{`info not-checked  steering: the root holds no ethtool or netdev netlink replies: channels, RSS tables, flow rules and NAPI are unknown`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := steerRun(t, func(n *steer.NIC, _ *irq.Table, o *Options) { tt.give(n, o) })
			var got []string
			for _, f := range fs {
				if f.Check != CheckIRQSharedCPU {
					got = append(got, fmt.Sprintf("%s %s %s %s: %s", f.Severity, f.Check, f.NIC, f.Subject, f.Message))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSteerUnknownFix: the fix of a part not known follows why it is not:
// a driver that does not report it gets no advice to run as root.
func TestSteerUnknownFix(t *testing.T) {
	tests := []struct {
		give []unknown.Reason
		want string
	}{
		{give: []unknown.Reason{{Kind: unknown.KindPermission, Detail: "EPERM"}}, want: "run the audit as root (ethtool and netdev replies need CAP_NET_ADMIN)"},
		{give: []unknown.Reason{{Kind: unknown.KindDriver, Detail: "EOPNOTSUPP"}}, want: "nothing to change: the driver does not report it"},
		{give: []unknown.Reason{{Kind: unknown.KindNotCaptured}, {Kind: unknown.KindKernel}}, want: "take the capture with irqnuma snapshot on the host, which records the replies; a newer kernel reports it"},
	}
	for _, tt := range tests {
		n := &steer.NIC{Name: "eth0"}
		parts := []steer.Part{steer.PartRules, steer.PartNAPI}
		for i, r := range tt.give {
			n.SetUnknown(parts[i], r)
		}
		_, fix := steerUnknown("eth0", n)
		if fix != tt.want {
			t.Errorf("steerUnknown fix for %v = %q, want %q", tt.give, fix, tt.want)
		}
	}
}

// TestNAPIThreadsByName: kthreads netdev does not name, found by name in
// /proc (ReadSteer), are judged as the named ones, whatever queue they
// serve: with no napi-get (6.1) all of them, and beside napi-get's the
// one it does not list (virtio_net's tx NAPI, napi/eth0-0), each named
// by its name and PID.
func TestNAPIThreadsByName(t *testing.T) {
	fs := steerRun(t, func(n *steer.NIC, _ *irq.Table, o *Options) {
		n.Sysfs.Threaded = intp(1)
		n.NAPIs, n.Queues = nil, nil
		n.SetUnknown(steer.PartNAPI, unknown.Reason{Kind: unknown.KindKernel, Detail: "no netdev family"})
		o.NAPIThreads = map[int]*proc.Process{
			812: kthread(812, "napi/eth0-8193", cpuset.Range(0, 15), 3),
			813: kthread(813, "napi/eth0-8194", cpuset.Range(0, 15), 4),
			816: kthread(816, "napi/eth0-x-5", cpuset.Range(0, 15), 3), // eth0-x's
		}
	})
	want := []string{"error napi-thread-remote NAPI kthreads 812-813: 2 NAPI kthreads (PIDs 812-813; queue unknown: napi/eth0-8193 (PID 812), napi/eth0-8194 (PID 813)) of eth0 run on CPUs 0-15 (node 0), off the NIC's node 1 (by affinity or last CPU): the receive work runs there whatever the IRQs' placement"}
	if diff := cmp.Diff(want, says(onlyCheck(fs, CheckNAPIThreadRemote))); diff != "" {
		t.Errorf("no napi-get (-want +got):\n%s", diff)
	}
	if got := onlyCheck(fs, CheckNotChecked); len(got) != 0 {
		t.Errorf("not-checked: %v", says(got))
	}
	// napi-get's kthreads pinned locally, and the tx one it does not list
	// on node 0.
	fs = steerRun(t, threadedSeed(func(ks map[int]*proc.Process) {
		ks[950] = kthread(950, "napi/eth0-0", cpuset.Range(0, 15), 2)
	}))
	want = []string{"error napi-thread-remote NAPI kthread 950: the NAPI kthread napi/eth0-0 (PID 950) of eth0 runs on CPUs 0-15 (node 0), off the NIC's node 1 (by affinity or last CPU): the receive work runs there whatever the IRQs' placement"}
	if diff := cmp.Diff(want, says(onlyCheck(fs, CheckNAPIThreadRemote))); diff != "" {
		t.Errorf("unlisted tx kthread (-want +got):\n%s", diff)
	}
	// Shared: a process on a by-name kthread's core.
	p := &proc.Process{PID: 7, Comm: "iperf3", Allowed: cpuset.New(22),
		Threads: []proc.Thread{{TID: 7, Allowed: cpuset.New(22), LastCPU: unknown.Of(22)}}, NodeKB: map[int]uint64{1: 10}}
	fs = steerRun(t, func(n *steer.NIC, _ *irq.Table, o *Options) {
		n.Sysfs.Threaded = intp(1)
		n.NAPIs, n.Queues = nil, nil
		n.SetUnknown(steer.PartNAPI, unknown.Reason{Kind: unknown.KindKernel, Detail: "no netdev family"})
		o.NAPIThreads = map[int]*proc.Process{812: kthread(812, "napi/eth0-8193", cpuset.New(22), 22)}
	}, p)
	if got := onlyCheck(fs, CheckNAPIThreadShared); len(got) != 1 || !cmp.Equal(got[0].TID, []int{812}) {
		t.Errorf("napi-thread-shared: %v", says(got))
	}
}

// TestReadSteerNAPIByName: ReadSteer finds a threaded NIC's napi/IF-N
// kthreads by name in a tree's /proc, and not another NIC's.
func TestReadSteerNAPIByName(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	writeKthread := func(pid int, comm string) {
		dir := filepath.Join(root, "proc", strconv.Itoa(pid))
		files := map[string]string{
			"comm":   comm + "\n",
			"stat":   fmt.Sprintf("%d (%s) S 2 0 0 0 -1 2129984 0 0 0 0 0 52 0 0 20 0 1 0 4100 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, comm),
			"status": fmt.Sprintf("Name:\t%s\nUmask:\t0000\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nPPid:\t2\nThreads:\t1\nCpus_allowed:\tffff\nCpus_allowed_list:\t0-15\nMems_allowed_list:\t0-1\n", comm, pid, pid),
		}
		for _, d := range []string{dir, filepath.Join(dir, "task", strconv.Itoa(pid))} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, body := range files {
				if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	writeKthread(812, "napi/eth0-8193")
	writeKthread(815, "napi/eth0-0")
	writeKthread(816, "napi/eth0-x-5")
	fsys := hosttest.Open(t, root)
	h, tb := loadHost(t, "seed")
	read := func() []int {
		t.Helper()
		_, ks, err := ReadSteer(fsys, h, tb, []string{"eth0"})
		if err != nil {
			t.Fatal(err)
		}
		var pids []int
		for pid, p := range ks {
			if p.PID != pid || p.Allowed.List() != "0-15" {
				t.Errorf("kthread %d read as %+v", pid, p)
			}
			pids = append(pids, pid)
		}
		slices.Sort(pids)
		return pids
	}
	if got := read(); len(got) != 0 {
		t.Errorf("NAPI threaded unknown: kthreads %v, want none", got)
	}
	if err := os.WriteFile(filepath.Join(root, "sys/class/net/eth0/threaded"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := read(); !slices.Equal(got, []int{812, 815}) {
		t.Errorf("threaded: kthreads %v, want [812 815]", got)
	}
}
