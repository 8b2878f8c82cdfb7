package audit

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/irqbalance"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
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

// notCheckedOf returns the not-checked findings about check (their
// subject starts with its id).
func notCheckedOf(fs []Finding, check Check) []Finding {
	var out []Finding
	for _, f := range onlyCheck(fs, CheckNotChecked) {
		if strings.HasPrefix(f.Subject, string(check)) {
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

// usesOn says each process uses nic, as its sockets would.
func usesOn(nic string, procs ...*proc.Process) []nicuse.Use {
	var out []nicuse.Use
	for _, p := range procs {
		out = append(out, nicuse.Use{PID: p.PID, Comm: p.Comm, NICs: []string{nic}, Attribution: unknown.Of(nicuse.AttributionSockets),
			How: []string{"tcp 10.1.0.2:5201 (listening): 10.1.0.2 is " + nic + "'s address"}})
	}
	return out
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
			p.Threads = append(p.Threads, proc.Thread{TID: p.PID + j, Allowed: allowed, LastCPU: unknown.Of(i*16 + j)})
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
	opts := Options{Governor: performance, Irqbalance: &irqbalance.Settings{Running: unknown.Of(true), PIDs: []int{1}}}
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
	iommuOn := &topology.IOMMU{Units: unknown.Of([]string{"dmar0"}), Groups: unknown.Of(3)}
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
				tb.IRQs[i].Affinity, tb.IRQs[i].Effective = unknown.Value[cpuset.Set]{}, unknown.Value[cpuset.Set]{}
			}
		}, want: []string{"not-checked irq-remote"}},
		{name: "numa_node -1 and local_cpulist of every CPU", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			h.NICs[0].Node, h.NICs[0].LocalCPUs = unknown.NotAs[int](unknown.KindNotReported, "numa_node is -1"), unknown.Of(h.Online)
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
			o.IOMMUGroups = map[string]topology.IOMMUGroup{"0000:98:00.0": {ID: unknown.Of(4), Type: unknown.Of(topology.DomainTypeIdentity)}}
		}},
		{name: "isolated CPU known only from the requested mask", give: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
			h.Isolated = cpuset.New(50)
			q, _ := tb.Get(284)
			q.Effective = unknown.Value[cpuset.Set]{}
		}, want: []string{"isolated-irq IRQ 284 (queue 0)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, tb := loadHost(t, "seed")
			opts := Options{Governor: performance, Irqbalance: &irqbalance.Settings{Running: unknown.Of(false)},
				IOMMU: &topology.IOMMU{Units: unknown.Of([]string{})}, Cmdline: topology.ParseCmdline("ro quiet"), Steer: seedSteer()}
			p := &proc.Process{PID: 7, Comm: "iperf3", Allowed: cpuset.New(22),
				Threads: []proc.Thread{{TID: 7, Allowed: cpuset.New(22), LastCPU: unknown.Of(22)}}, NodeKB: map[int]uint64{1: 10}}
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

// TestAuditCPULessNode: a NIC on a node without CPUs has nothing local;
// its IRQs are not called remote.
func TestAuditCPULessNode(t *testing.T) {
	h, tb := loadHost(t, "seed")
	h.Nodes = append(h.Nodes, topology.Node{ID: 2})
	h.NICs[0].Node = unknown.Of(2)
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
