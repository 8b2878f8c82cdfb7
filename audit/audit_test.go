package audit

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/hosttest"
	"github.com/irqnuma/irqnuma/irq"
	"github.com/irqnuma/irqnuma/irqbalance"
	"github.com/irqnuma/irqnuma/nicuse"
	"github.com/irqnuma/irqnuma/proc"
	"github.com/irqnuma/irqnuma/topology"
)

// loadHost reads a committed host tree in place (read-only).
func loadHost(t testing.TB, name string) (*topology.Host, *irq.Table) {
	t.Helper()
	h, err := topology.Read(hosttest.Open(t, hosttest.Root(name)))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := irq.Load(h, irq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h, tb
}

// performance is a Governor that says every CPU runs "performance".
func performance(int) (string, error) { return "performance", nil }

// onlyCheck returns the findings of one check.
func onlyCheck(fs []Finding, check Check) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

func TestParseSeverity(t *testing.T) {
	tests := []struct {
		give     string
		want     Severity
		wantRank int
		wantErr  bool
	}{
		{give: "info", want: SeverityInfo, wantRank: 1},
		{give: "warning", want: SeverityWarning, wantRank: 2},
		{give: "error", want: SeverityError, wantRank: 3},
		{give: "never", wantErr: true},
		{give: "Warning", wantErr: true},
		{give: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseSeverity(tt.give)
		if (err != nil) != tt.wantErr || got != tt.want || got.Rank() != tt.wantRank {
			t.Errorf("ParseSeverity(%q) = %q (rank %d), %v; want %q (rank %d), error %v", tt.give, got, got.Rank(), err, tt.want, tt.wantRank, tt.wantErr)
		}
	}
}

// TestAuditIRQRemote changes one queue IRQ of the seed host in memory
// (Audit reads nothing itself) and checks the irq-remote verdict.
func TestAuditIRQRemote(t *testing.T) {
	tests := []struct {
		name         string
		give         func(q *irq.IRQ)
		wantSeverity Severity // "" for no finding
		wantCPUs     string
		wantMessage  string
	}{
		{name: "as captured", give: func(q *irq.IRQ) {}},
		{name: "effective remote", give: func(q *irq.IRQ) {
			q.Affinity, q.Effective = cpuset.New(3), cpuset.New(3)
		}, wantSeverity: SeverityError, wantCPUs: "3", wantMessage: "IRQ 284 (queue 0) of eth0 is delivered to CPU 3 (node 0), off the NIC's node 1"},
		{name: "effective local, mask reaches remote", give: func(q *irq.IRQ) {
			q.Affinity = cpuset.Range(0, 63)
		}, wantSeverity: SeverityWarning, wantCPUs: "0-15,32-47", wantMessage: "is delivered to local CPU 50, but its requested mask 0-63 also reaches CPUs 0-15,32-47 (node 0)"},
		{name: "effective unknown, mask all remote", give: func(q *irq.IRQ) {
			q.HasEffective, q.Effective, q.Affinity = false, cpuset.Set{}, cpuset.Range(0, 15)
		}, wantSeverity: SeverityError, wantCPUs: "0-15", wantMessage: "may only go to CPUs 0-15 (node 0), off the NIC's node 1 (effective CPU unknown)"},
		{name: "effective unknown, mask mixed", give: func(q *irq.IRQ) {
			q.HasEffective, q.Effective, q.Affinity = false, cpuset.Set{}, cpuset.Range(15, 16)
		}, wantSeverity: SeverityWarning, wantCPUs: "15", wantMessage: "has requested mask 15-16, which reaches CPU 15 (node 0) (effective CPU unknown)"},
		{name: "effective spans both nodes", give: func(q *irq.IRQ) {
			q.Affinity, q.Effective = cpuset.New(3, 50), cpuset.New(3, 50)
		}, wantSeverity: SeverityWarning, wantCPUs: "3"},
		{name: "nothing known", give: func(q *irq.IRQ) {
			q.HasEffective, q.HasAffinity, q.Effective, q.Affinity = false, false, cpuset.Set{}, cpuset.Set{}
		}},
		{name: "managed: the fix says it cannot be moved", give: func(q *irq.IRQ) {
			q.Affinity, q.Effective, q.Managed = cpuset.New(3), cpuset.New(3), true
		}, wantSeverity: SeverityError, wantCPUs: "3", wantMessage: "delivered to CPU 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, tb := loadHost(t, "seed")
			q, ok := tb.Get(284)
			if !ok {
				t.Fatal("seed has no IRQ 284")
			}
			tt.give(q)
			got := onlyCheck(Run(h, tb, nil, Options{Governor: performance}), CheckIRQRemote)
			if tt.wantSeverity == "" {
				if len(got) != 0 {
					t.Errorf("irq-remote %+v, want none", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d irq-remote findings, want 1: %+v", len(got), got)
			}
			f := got[0]
			if f.Severity != tt.wantSeverity || f.CPUs.List() != tt.wantCPUs || !slices.Equal(f.IRQ, []int{284}) ||
				!strings.Contains(f.Message, tt.wantMessage) {
				t.Errorf("irq-remote = %s CPUs %s IRQs %v %q; want %s CPUs %s IRQ 284 message containing %q",
					f.Severity, f.CPUs, f.IRQ, f.Message, tt.wantSeverity, tt.wantCPUs, tt.wantMessage)
			}
			if q.Managed && !strings.HasPrefix(f.Fix, "kernel-managed") {
				t.Errorf("fix for a managed IRQ = %q, want the kernel-managed explanation", f.Fix)
			}
		})
	}
}

// TestAuditSamePackage: on the NPS2 host the remote CPU's package is
// named (comp6 on node 0 shares package 0 with node 1; comp7 on node 2
// does not).
func TestAuditSamePackage(t *testing.T) {
	h, tb := loadHost(t, "nps2")
	got := onlyCheck(Run(h, tb, nil, Options{Governor: performance}), CheckIRQRemote)
	var msgs []string
	for _, f := range got {
		msgs = append(msgs, f.Message)
	}
	want := []string{
		"IRQ 107 (queue 6) of enp65s0f0 is delivered to CPU 3 (node 0, same package), off the NIC's node 1",
		"IRQ 108 (queue 7) of enp65s0f0 is delivered to CPU 20 (node 2, other package), off the NIC's node 1",
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("nps2 irq-remote messages (-want +got):\n%s", diff)
	}
	// The seed host has one node per package: no package words.
	h, tb = loadHost(t, "seed")
	q, _ := tb.Get(285)
	q.Effective = cpuset.New(1)
	for _, f := range onlyCheck(Run(h, tb, nil, Options{Governor: performance}), CheckIRQRemote) {
		if strings.Contains(f.Message, "package") {
			t.Errorf("seed message names packages: %q", f.Message)
		}
	}
}

// TestAuditProcesses runs the process checks on in-memory processes.
func TestAuditProcesses(t *testing.T) {
	h, tb := loadHost(t, "seed")
	th := func(tid int, allowed string, last int) proc.Thread {
		s, err := cpuset.ParseList(allowed)
		if err != nil {
			t.Fatal(err)
		}
		return proc.Thread{TID: tid, Allowed: s, LastCPU: last}
	}
	tests := []struct {
		name string
		give proc.Process
		want []string // "check/severity CPUs"
	}{
		{name: "well placed", give: proc.Process{PID: 10, Comm: "iperf3", Allowed: cpuset.New(22, 25),
			Threads: []proc.Thread{th(10, "22,25", 22)}, NodeKB: map[int]uint64{1: 100, 0: 10}}},
		{name: "one thread pinned remote, others fine", give: proc.Process{PID: 11, Comm: "iperf3", Allowed: cpuset.New(22),
			Threads: []proc.Thread{th(11, "22", 22), th(12, "0-1", 0)}},
			want: []string{"proc-remote/error 0", "proc-remote/warning 0-1"}},
		{name: "unpinned: may run anywhere", give: proc.Process{PID: 13, Comm: "nginx", Allowed: cpuset.Range(0, 63),
			Threads: []proc.Thread{th(13, "0-63", 54)}, NodeKB: map[int]uint64{}},
			want: []string{"proc-remote/warning 0-15,32-47", "proc-irq-overlap/warning 17-21,23-24,26,28-31,49-53,55-56,58,60-63"}},
		{name: "last CPU unknown is not judged", give: proc.Process{PID: 14, Comm: "x", Allowed: cpuset.New(22),
			Threads: []proc.Thread{th(14, "22", -1)}}},
		{name: "half the pages remote is not most", give: proc.Process{PID: 15, Comm: "x", Allowed: cpuset.New(22),
			Threads: []proc.Thread{th(15, "22", 22)}, NodeKB: map[int]uint64{0: 50, 1: 50}}},
		{name: "most pages remote", give: proc.Process{PID: 16, Comm: "x", Allowed: cpuset.New(22),
			Threads: []proc.Thread{th(16, "22", 22)}, NodeKB: map[int]uint64{0: 51, 1: 49}},
			want: []string{"proc-mem-remote/warning "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.give
			var got []string
			for _, f := range Run(h, tb, []*proc.Process{&p}, Options{Governor: performance, Uses: usesOn("eth0", &p)}) {
				if strings.HasPrefix(string(f.Check), "proc-") {
					got = append(got, string(f.Check)+"/"+string(f.Severity)+" "+f.CPUs.List())
					if f.PID != p.PID {
						t.Errorf("%s: PID %d, want %d", f.Check, f.PID, p.PID)
					}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("process findings (-want +got):\n%s", diff)
			}
		})
	}
}

// usesOn says each process uses nic, as its sockets would.
func usesOn(nic string, procs ...*proc.Process) []nicuse.Use {
	var out []nicuse.Use
	for _, p := range procs {
		out = append(out, nicuse.Use{PID: p.PID, Comm: p.Comm, NICs: []string{nic}, Attribution: nicuse.BySockets,
			How: []string{"tcp 10.1.0.2:5201 (listening): 10.1.0.2 is " + nic + "'s address"}})
	}
	return out
}

// TestAuditJudgesUsedNICs: on a host with NICs on both nodes, a process
// on node 1 is judged only against the NICs it uses; when that is
// unknown, against --nic, else against none with one info finding.
func TestAuditJudgesUsedNICs(t *testing.T) {
	h, tb := loadHost(t, "offline-2node")
	p := &proc.Process{PID: 7, Comm: "iperf3", Allowed: cpuset.New(15),
		Threads: []proc.Thread{{TID: 7, Allowed: cpuset.New(15), LastCPU: 15}}, NodeKB: map[int]uint64{1: 10}}
	unknown := []nicuse.Use{{PID: 7, Comm: "iperf3", NICs: []string{}, Attribution: nicuse.Unknown, How: []string{"it has no TCP or UDP sockets (yet)"}}}
	anyNIC := []nicuse.Use{{PID: 7, Comm: "iperf3", NICs: []string{}, Attribution: nicuse.AnyNIC, How: []string{"tcp *:5201 (listening): bound to every address"}}}
	tests := []struct {
		name   string
		nics   []string
		uses   []nicuse.Use
		want   []string // "check nic", process findings only
		judged []string
		by     string
	}{
		// Every node-1 core serves one of ens1f0's queue IRQs.
		{name: "uses its node's NIC", uses: usesOn("ens1f0", p), judged: []string{"ens1f0"}, by: "sockets",
			want: []string{"proc-irq-overlap ens1f0"}},
		{name: "uses the other node's NIC", uses: usesOn("eth1", p), judged: []string{"eth1"}, by: "sockets",
			want: []string{"proc-mem-remote eth1", "proc-remote eth1", "proc-remote eth1"}},
		{name: "unknown, no --nic", uses: unknown, judged: []string{},
			want: []string{"proc-nic-unknown "}},
		{name: "not read at all, no --nic", judged: []string{}, want: []string{"proc-nic-unknown "}},
		{name: "any NIC, no --nic", uses: anyNIC, judged: []string{}, want: []string{"proc-nic-unknown "}},
		{name: "unknown, --nic eth1", nics: []string{"eth1"}, uses: unknown, judged: []string{"eth1"}, by: "--nic",
			want: []string{"proc-mem-remote eth1", "proc-remote eth1", "proc-remote eth1"}},
		{name: "uses ens1f0, --nic eth1", nics: []string{"eth1"}, uses: usesOn("ens1f0", p), judged: []string{},
			want: []string{"proc-nic-unaudited "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Governor: performance, NICs: tt.nics, Uses: tt.uses}
			var got []string
			for _, f := range Run(h, tb, []*proc.Process{p}, opts) {
				if strings.HasPrefix(string(f.Check), "proc-") {
					got = append(got, string(f.Check)+" "+f.NIC)
					if f.Check == CheckProcNICUnknown && (f.Severity != SeverityInfo || !strings.Contains(f.Fix, "--nic NIC --pid 7")) {
						t.Errorf("%+v: want info with a --nic fix", f)
					}
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("process findings (-want +got):\n%s", diff)
			}
			pns := Processes(AuditedNICs(h, tb, tt.nics), []*proc.Process{p}, opts)
			if len(pns) != 1 || !slices.Equal(pns[0].Judged, tt.judged) || pns[0].JudgedBy != tt.by {
				t.Errorf("Processes = %+v, want judged %v by %q", pns, tt.judged, tt.by)
			}
		})
	}
}

// TestUnknownMessageQuotes: the info finding of a process whose NIC is
// not known quotes the socket that is why: a server with a loopback
// client and a wildcard listener is "any NIC" because of the listener,
// which nicuse.Of says first, not because of its loopback connection.
func TestUnknownMessageQuotes(t *testing.T) {
	root := hosttest.Copy(t, "offline-2node")
	hosttest.WriteSockets(t, root, 7, []hosttest.Socket{
		{Proto: "tcp", Local: "127.0.0.1:5201", Remote: "127.0.0.1:38592", Inode: 1},
		{Proto: "tcp", Local: "0.0.0.0:5201", Inode: 2},
	})
	hosttest.WriteSockets(t, root, 8, []hosttest.Socket{{Proto: "tcp", Local: "127.0.0.1:38592", Remote: "127.0.0.1:5201", Inode: 3}})
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		pid  int
		want string
	}{
		{7, "iperf3 (PID 7) is bound to every address only (tcp *:5201 (listening)), so any NIC may carry its traffic: it was judged against no NIC"},
		{8, "iperf3 (PID 8)'s sockets stay on the host (tcp 127.0.0.1:38592 -> 127.0.0.1:5201): it was judged against no NIC"},
	} {
		n, err := proc.ReadNet(hosttest.Open(t, root), tt.pid)
		if err != nil {
			t.Fatal(err)
		}
		u := nicuse.Of(h, &proc.Process{PID: tt.pid, Comm: "iperf3", Net: n})
		if got := unknownMessage(fmt.Sprintf("iperf3 (PID %d)", tt.pid), u); got != tt.want {
			t.Errorf("message\n got %q\nwant %q", got, tt.want)
		}
	}
}

// TestAuditIrqbalance checks irqbalance-active against what it bans.
func TestAuditIrqbalance(t *testing.T) {
	h, tb := loadHost(t, "seed")
	tests := []struct {
		name     string
		give     *irqbalance.Settings
		wantIRQs []int // nil: no finding
		wantFix  string
	}{
		{name: "not running", give: &irqbalance.Settings{ProcessesKnown: true}},
		{name: "running, bans nothing", give: &irqbalance.Settings{ProcessesKnown: true, Running: true, PIDs: []int{812}, ConfigFile: "/etc/default/irqbalance"},
			wantIRQs: []int{283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299},
			wantFix:  `set IRQBALANCE_ARGS="--banirq=283 --banirq=284`},
		{name: "running, bans the driver", give: &irqbalance.Settings{ProcessesKnown: true, Running: true, PIDs: []int{812}, BannedModules: []string{"mlx5"}}},
		{name: "running, bans some IRQs", give: &irqbalance.Settings{ProcessesKnown: true, Running: true, PIDs: []int{812},
			BannedIRQs: []int{283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297}, ConfigArgs: []string{"--banirq=283"}},
			wantIRQs: []int{298, 299}, wantFix: `IRQBALANCE_ARGS="--banirq=283 --banirq=298 --banirq=299"`},
	}
	for _, tt := range tests {
		got := onlyCheck(Run(h, tb, nil, Options{Irqbalance: tt.give, Governor: performance}), CheckIrqbalance)
		if tt.wantIRQs == nil {
			if len(got) != 0 {
				t.Errorf("%s: %+v, want no finding", tt.name, got)
			}
			continue
		}
		if len(got) != 1 || !slices.Equal(got[0].IRQ, tt.wantIRQs) || got[0].PID != 812 || !strings.Contains(got[0].Fix, tt.wantFix) {
			t.Errorf("%s: %+v, want IRQs %v, PID 812, fix containing %q", tt.name, got, tt.wantIRQs, tt.wantFix)
		}
	}
}

// TestAuditGovernorInjected: the governor reader is called for the local
// online CPUs only, and its answers make the finding.
func TestAuditGovernorInjected(t *testing.T) {
	h, tb := loadHost(t, "seed")
	var asked []int
	gov := func(cpu int) (string, error) {
		asked = append(asked, cpu)
		if cpu == 20 || cpu == 48 {
			return "powersave", nil
		}
		return "performance", nil
	}
	got := onlyCheck(Run(h, tb, nil, Options{Governor: gov}), CheckCPUGovernor)
	slices.Sort(asked)
	if want := cpuset.New(append(cpuset.Range(16, 31).IDs(), cpuset.Range(48, 63).IDs()...)...).IDs(); !slices.Equal(asked, want) {
		t.Errorf("governor asked for %v, want %v", asked, want)
	}
	if len(got) != 1 || got[0].CPUs.List() != "20,48" || got[0].Fix != "cpupower -c 20,48 frequency-set -g performance" {
		t.Errorf("cpu-governor = %+v, want CPUs 20,48 with a cpupower fix", got)
	}
}

// auditBenchHost is the size: 512 CPUs, 1,000 IRQs.
var auditBenchHost = hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488}

// benchProcs makes n watched processes with 8 threads each, spread over
// the host, as proc.Select would return them.
func benchProcs(h *topology.Host, n int) []*proc.Process {
	var out []*proc.Process
	for i := range n {
		allowed := cpuset.Range(i*16, i*16+31).Intersection(h.Online)
		p := &proc.Process{PID: 1000 + i*10, Comm: "iperf3", Allowed: allowed,
			NodeKB: map[int]uint64{0: uint64(100 * i), 1: 4000, 2: 10, 3: 0}}
		for j := range 8 {
			p.Threads = append(p.Threads, proc.Thread{TID: p.PID + j, Allowed: allowed, LastCPU: i*16 + j})
		}
		out = append(out, p)
	}
	return out
}

// BenchmarkAudit runs every check on the host (512 CPUs, 1,000
// IRQs, 8 NICs) with 20 watched processes: the audit's own work, after
// the host is read.
func BenchmarkAudit(b *testing.B) {
	root := hosttest.Synthetic(b, auditBenchHost)
	h, err := topology.Read(hosttest.Open(b, root))
	if err != nil {
		b.Fatal(err)
	}
	tb, err := irq.Load(h, irq.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if n := len(tb.IRQs); n != 8*64 {
		b.Fatalf("%d NIC IRQs, want 512", n)
	}
	procs := benchProcs(h, 20)
	opts := Options{Governor: performance, Irqbalance: &irqbalance.Settings{ProcessesKnown: true, Running: true, PIDs: []int{1}}}
	for i, p := range procs {
		opts.Uses = append(opts.Uses, usesOn(h.NICs[i%len(h.NICs)].Name, p)...)
	}
	b.ReportAllocs()
	for b.Loop() {
		fs := Run(h, tb, procs, opts)
		if len(fs) == 0 {
			b.Fatal("no findings")
		}
	}
}

// TestAuditUnknowns: what the tree lacks is said once as not-checked (or,
// for locality, as the nic-node-unknown warning), never guessed.
func TestAuditUnknowns(t *testing.T) {
	iommuOn := &topology.IOMMU{ClassKnown: true, Units: []string{"dmar0"}, GroupsKnown: true, Groups: 3}
	tests := []struct {
		name string
		give func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process)
		want []string // "check subject" of the findings that are not the seed's irq-shared-cpu
	}{
		{name: "everything known and fine", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {}},
		{name: "no queues folder", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			h.NICs[0].Queues = nil
		}, want: []string{"not-checked rps-remote, xps-remote"}},
		{name: "no affinity files", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			for i := range tb.IRQs {
				tb.IRQs[i].HasAffinity, tb.IRQs[i].HasEffective = false, false
				tb.IRQs[i].Affinity, tb.IRQs[i].Effective = cpuset.Set{}, cpuset.Set{}
			}
		}, want: []string{"not-checked irq-remote"}},
		{name: "numa_node -1 and local_cpulist of every CPU", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			h.NICs[0].Node, h.NICs[0].LocalCPUs = -1, h.Online
		}, want: []string{"nic-node-unknown eth0 numa_node", "not-checked irq-remote", "not-checked proc-remote", "not-checked rps-remote, xps-remote"}},
		{name: "no cpufreq", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			o.Governor = func(int) (string, error) { return "", nil }
		}, want: []string{"not-checked cpu-governor"}},
		{name: "irqbalance not read", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			o.Irqbalance = nil
		}, want: []string{"not-checked irqbalance-active"}},
		{name: "no numa_maps", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			p.NodeKB = nil
		}, want: []string{"not-checked proc-mem-remote for PID 7"}},
		{name: "no IOMMU folders", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			o.IOMMU = &topology.IOMMU{}
		}, want: []string{"not-checked iommu-mode"}},
		{name: "IOMMU active, no /proc/cmdline", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			o.IOMMU, o.Cmdline = iommuOn, nil
		}, want: []string{"not-checked iommu-mode"}},
		{name: "IOMMU active, iommu=pt", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			o.IOMMU, o.Cmdline = iommuOn, topology.ParseCmdline("ro intel_iommu=on iommu=pt")
		}},
		{name: "IOMMU active, nothing on the command line", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			o.IOMMU = iommuOn
		}, want: []string{"iommu-mode IOMMU"}},
		{name: "no IOMMU folders, iommu=pt", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			o.IOMMU, o.Cmdline = &topology.IOMMU{}, topology.ParseCmdline("ro intel_iommu=on iommu=pt")
		}},
		{name: "no IOMMU folders, iommu.passthrough=1", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			o.IOMMU, o.Cmdline = nil, topology.ParseCmdline("iommu.passthrough=1")
		}},
		{name: "no IOMMU folders, intel_iommu=off", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			o.IOMMU, o.Cmdline = &topology.IOMMU{}, topology.ParseCmdline("intel_iommu=off")
		}},
		{name: "no IOMMU folders, intel_iommu=on", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			o.IOMMU, o.Cmdline = &topology.IOMMU{}, topology.ParseCmdline("intel_iommu=on")
		}, want: []string{"iommu-mode IOMMU"}},
		{name: "no IOMMU folders, iommu=nopt", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			o.IOMMU, o.Cmdline = &topology.IOMMU{}, topology.ParseCmdline("iommu=nopt")
		}, want: []string{"iommu-mode IOMMU"}},
		{name: "no IOMMU folders, no /proc/cmdline", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			o.IOMMU, o.Cmdline = &topology.IOMMU{}, nil
		}, want: []string{"not-checked iommu-mode"}},
		{name: "IOMMU group says identity", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			o.IOMMU = iommuOn
			o.IOMMUGroups = map[string]topology.IOMMUGroup{"0000:98:00.0": {ID: 4, Type: "identity"}}
		}},
		{name: "isolated CPU known only from the requested mask", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			h.Isolated = cpuset.New(50)
			q, _ := tb.Get(284)
			q.HasEffective, q.Effective = false, cpuset.Set{}
		}, want: []string{"isolated-irq IRQ 284 (queue 0)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, tb := loadHost(t, "seed")
			opts := Options{Governor: performance, Irqbalance: &irqbalance.Settings{ProcessesKnown: true},
				IOMMU: &topology.IOMMU{ClassKnown: true}, Cmdline: topology.ParseCmdline("ro quiet")}
			p := &proc.Process{PID: 7, Comm: "iperf3", Allowed: cpuset.New(22),
				Threads: []proc.Thread{{TID: 7, Allowed: cpuset.New(22), LastCPU: 22}}, NodeKB: map[int]uint64{1: 10}}
			opts.Uses = usesOn("eth0", p)
			tt.give(h, tb, &opts, p)
			var got []string
			for _, f := range Run(h, tb, []*proc.Process{p}, opts) {
				if f.Check == CheckIRQSharedCPU {
					continue
				}
				got = append(got, string(f.Check)+" "+f.Subject)
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAuditQueuePairs: a queue's rx and tx vectors (virtio input.0 and
// output.0) on one CPU are not "shared", and count as one queue; two
// queues on one CPU are.
func TestAuditQueuePairs(t *testing.T) {
	h, tb := loadHost(t, "vm-virtio")
	for _, n := range []int{38, 39} {
		q, ok := tb.Get(n)
		if !ok {
			t.Fatalf("vm-virtio has no IRQ %d", n)
		}
		q.Affinity, q.Effective = cpuset.New(0), cpuset.New(0)
	}
	fs := Run(h, tb, nil, Options{Governor: performance})
	if got := onlyCheck(fs, CheckIRQSharedCPU); len(got) != 0 {
		t.Errorf("rx and tx of queue 0 on CPU 0: irq-shared-cpu %+v, want none", got)
	}
	// Make IRQ 39 another queue's vector: now two queues share CPU 0
	// while CPU 1 serves none.
	q, _ := tb.Get(39)
	q.Owner = &irq.Owner{NIC: "eth0", Queue: 1, Dir: "tx", Kind: irq.KindQueue}
	got := onlyCheck(Run(h, tb, nil, Options{Governor: performance}), CheckIRQSharedCPU)
	if len(got) != 1 || !slices.Equal(got[0].IRQ, []int{38, 39}) || got[0].CPUs.List() != "0" ||
		!strings.Contains(got[0].Message, "while 1 local CPU serves none of eth0's queue IRQs (1)") {
		t.Errorf("queues 0 and 1 on CPU 0: irq-shared-cpu %+v, want IRQs 38, 39 on CPU 0 with CPU 1 free", got)
	}
}

// TestAuditIrqbalanceBanmod: irqbalance matches --banmod against the PCI
// function's driver (virtio-pci for a virtio NIC, not virtio_net) and the
// IRQ name.
func TestAuditIrqbalanceBanmod(t *testing.T) {
	h, tb := loadHost(t, "vm-virtio")
	tests := []struct {
		mod     string
		drivers map[string]string
		want    int // unbanned IRQs of eth0
	}{
		{mod: "virtio_net", drivers: map[string]string{"0000:00:03.0": "virtio-pci"}, want: 3},
		{mod: "virtio-pci", drivers: map[string]string{"0000:00:03.0": "virtio-pci"}, want: 0},
		{mod: "virtio2", drivers: map[string]string{"0000:00:03.0": "virtio-pci"}, want: 0}, // in every IRQ name
		{mod: "virtio_net", drivers: nil, want: 0},                                          // not read: the netdev driver
	}
	for _, tt := range tests {
		ib := &irqbalance.Settings{ProcessesKnown: true, Running: true, PIDs: []int{9}, BannedModules: []string{tt.mod}}
		got := onlyCheck(Run(h, tb, nil, Options{Irqbalance: ib, PCIDrivers: tt.drivers, Governor: performance}), CheckIrqbalance)
		n := 0
		if len(got) == 1 {
			n = len(got[0].IRQ)
		}
		if n != tt.want || len(got) > 1 {
			t.Errorf("--banmod=%s, drivers %v: %d unbanned IRQs (%+v), want %d", tt.mod, tt.drivers, n, got, tt.want)
		}
	}
}

// TestAuditCPULessNode: a NIC on a node without CPUs has nothing local;
// its IRQs are not called remote.
func TestAuditCPULessNode(t *testing.T) {
	h, tb := loadHost(t, "seed")
	h.Nodes = append(h.Nodes, topology.Node{ID: 2, MemoryBytes: -1})
	h.NICs[0].Node = 2
	fs := Run(h, tb, nil, Options{Governor: performance})
	if got := onlyCheck(fs, CheckIRQRemote); len(got) != 0 {
		t.Errorf("irq-remote %+v on a NIC whose node has no CPUs", got)
	}
	var said bool
	for _, f := range onlyCheck(fs, CheckNotChecked) {
		said = said || (f.Subject == "locality" && strings.Contains(f.Message, "eth0's node 2 has no online CPUs"))
	}
	if !said {
		t.Errorf("no not-checked locality finding for node 2: %+v", fs)
	}
}

// TestAuditIsolation: CPUs isolated by any kind, from sysfs or the
// command line, are where isolated-irq fires and are never offered as
// free CPUs by irq-shared-cpu. On the seed host IRQs 286 and 290 share
// CPU 53 while 17 local CPUs take no queue IRQ.
func TestAuditIsolation(t *testing.T) {
	fromCmdline := topology.IsolationSources{Isolated: topology.SourceCmdline, NohzFull: topology.SourceCmdline,
		ManagedIRQ: topology.SourceCmdline, IRQAffinity: topology.SourceCmdline}
	tests := []struct {
		name       string
		give       func(h *topology.Host)
		wantShared string // a part of the irq-shared-cpu message; "" for none
		wantIso    []string
	}{
		{name: "no isolation", give: func(h *topology.Host) {},
			wantShared: "while 17 local CPUs serve none of eth0's queue IRQs (16,18-19,22,25,27-29,31,48-49,52,54,56-57,59,62)"},
		{name: "isolcpus=managed_irq on four free CPUs", give: func(h *topology.Host) {
			h.ManagedIRQ, h.IsolationFrom = cpuset.New(16, 18, 19, 22), fromCmdline
		}, wantShared: "while 13 local non-isolated CPUs serve none of eth0's queue IRQs (25,27-29,31,48-49,52,54,56-57,59,62)"},
		{name: "every free CPU isolated", give: func(h *topology.Host) {
			free, _ := cpuset.ParseList("16,18-19,22,25,27-29,31,48-49,52,54,56-57,59,62")
			h.NohzFull, h.IsolationFrom = free, fromCmdline
		}},
		{name: "the shared CPU isolated by managed_irq and nohz_full", give: func(h *topology.Host) {
			h.ManagedIRQ, h.NohzFull, h.IsolationFrom = cpuset.New(53), cpuset.New(53), fromCmdline
		}, wantShared: "while 17 local non-isolated CPUs serve none", wantIso: []string{
			"IRQ 286 (queue 2) of eth0 is delivered to isolated CPU 53 (isolcpus managed_irq, nohz_full from the kernel command line)",
			"IRQ 290 (queue 6) of eth0 is delivered to isolated CPU 53 (isolcpus managed_irq, nohz_full from the kernel command line)"}},
		{name: "domain from sysfs, managed_irq from the command line", give: func(h *topology.Host) {
			h.Isolated, h.ManagedIRQ = cpuset.New(53), cpuset.New(53)
			h.IsolationFrom = topology.IsolationSources{Isolated: topology.SourceSysfs, ManagedIRQ: topology.SourceCmdline}
		}, wantShared: "non-isolated", wantIso: []string{
			"isolated CPU 53 (isolcpus; isolcpus managed_irq from the kernel command line)",
			"isolated CPU 53 (isolcpus; isolcpus managed_irq from the kernel command line)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, tb := loadHost(t, "seed")
			tt.give(h)
			fs := Run(h, tb, nil, Options{Governor: performance})
			shared := onlyCheck(fs, CheckIRQSharedCPU)
			switch {
			case tt.wantShared == "" && len(shared) > 0:
				t.Errorf("irq-shared-cpu %+v, want none (no free CPU left)", shared)
			case tt.wantShared != "" && (len(shared) != 1 || !strings.Contains(shared[0].Message, tt.wantShared)):
				t.Errorf("irq-shared-cpu %+v, want one saying %q", shared, tt.wantShared)
			}
			iso := onlyCheck(fs, CheckIsolatedIRQ)
			if len(iso) != len(tt.wantIso) {
				t.Fatalf("isolated-irq %+v, want %d", iso, len(tt.wantIso))
			}
			for i, f := range iso {
				if !strings.Contains(f.Message, tt.wantIso[i]) || f.CPUs.List() != "53" {
					t.Errorf("isolated-irq %q (CPUs %s), want it to contain %q on CPU 53", f.Message, f.CPUs, tt.wantIso[i])
				}
			}
		})
	}
}

// TestAuditIOMMUMessages: iommu-mode says what sysfs and the command line
// each told: an active IOMMU from /sys/class/iommu, or only the command
// line when the tree has no IOMMU folders.
func TestAuditIOMMUMessages(t *testing.T) {
	active := &topology.IOMMU{ClassKnown: true, Units: []string{"dmar0"}, GroupsKnown: true, Groups: 3}
	tests := []struct {
		m       *topology.IOMMU
		cmdline string
		want    string
	}{
		{active, "ro quiet", "an IOMMU is active (dmar0; 3 IOMMU groups) and the kernel command line has no iommu=pt or iommu.passthrough=1"},
		{active, "iommu=nopt", "an IOMMU is active (dmar0; 3 IOMMU groups) and the kernel command line asks for translation (iommu=nopt)"},
		{&topology.IOMMU{}, "intel_iommu=on", "the kernel command line turns the IOMMU on (intel_iommu=on) without iommu=pt or iommu.passthrough=1, and the tree has no /sys/class/iommu to confirm it"},
		{&topology.IOMMU{}, "iommu.passthrough=0", "the kernel command line asks for translation (iommu.passthrough=0) and the tree has no /sys/class/iommu"},
	}
	for _, tt := range tests {
		h, tb := loadHost(t, "seed")
		fs := onlyCheck(Run(h, tb, nil, Options{Governor: performance, IOMMU: tt.m, Cmdline: topology.ParseCmdline(tt.cmdline)}), CheckIOMMUMode)
		if len(fs) != 1 || fs[0].NIC != "" || !strings.Contains(fs[0].Message, tt.want) {
			t.Errorf("IOMMU %+v, command line %q: iommu-mode %+v, want one host-wide finding saying %q", tt.m, tt.cmdline, fs, tt.want)
		}
	}
}
