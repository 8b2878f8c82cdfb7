package tune

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

func planHost(t testing.TB, root string, nics ...string) (*topology.Host, *irq.Table) {
	t.Helper()
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := irq.Load(h, irq.Options{NICs: nics})
	if err != nil {
		t.Fatal(err)
	}
	return h, tab
}

func planList(t testing.TB, s string) cpuset.Set {
	t.Helper()
	set, err := cpuset.ParseList(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// placed is an IRQ's (or xps queue's) planned CPUs and action, for
// comparing plans: "284 16 change".
func placed(p *pinPlan) []string {
	var out []string
	for _, s := range p.Steps {
		id := strconv.Itoa(s.IRQ)
		if s.Kind == KindXPS {
			id = "tx-" + strconv.Itoa(s.Queue)
		}
		to := s.To.String()
		if to == "" {
			to = "-"
		}
		out = append(out, id+" "+to+" "+string(s.Action))
	}
	return out
}

func TestSpreadOrder(t *testing.T) {
	tests := []struct {
		host string
		give string
		want []int
	}{
		// One L3 per package: plain core order, then the siblings.
		{"seed", "16-31,48-63", append(seq(16, 31), seq(48, 63)...)},
		{"seed", "16-19,48-51", []int{16, 17, 18, 19, 48, 49, 50, 51}},
		// A core whose lowest thread is left out still comes in core order.
		{"seed", "17-19,48-51", []int{48, 17, 18, 19, 49, 50, 51}},
		// NPS2: L3 per 4-CPU CCX, alternated.
		{"nps2", "8-15", []int{8, 12, 9, 13, 10, 14, 11, 15}},
		{"nps2", "0-31", []int{0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29, 2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31}},
		// L3 per package, alternated; offline CPUs (1, 5, 9) never appear;
		// 13's sibling 9 is offline.
		{"offline-2node", "0-15", []int{0, 8, 2, 10, 3, 11, 13, 4, 12, 6, 14, 7, 15}},
	}
	for _, tt := range tests {
		h, _ := planHost(t, hosttest.Root(tt.host))
		got := spreadOrder(h, planList(t, tt.give))
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: SpreadOrder(%s) (-want +got):\n%s", tt.host, tt.give, diff)
		}
	}
}

func seq(lo, hi int) []int {
	var out []int
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}

func TestPlanPin(t *testing.T) {
	seedSpread := []string{"283 16-31,48-63 keep"}
	for i, cpu := range seq(16, 31) {
		a := "change"
		if i == 1 { // comp1 is on CPU 17 already
			a = "keep"
		}
		seedSpread = append(seedSpread, strconv.Itoa(284+i)+" "+strconv.Itoa(cpu)+" "+a)
	}
	seedNode := []string{"283 16-31,48-63 keep"}
	for i := range 16 {
		seedNode = append(seedNode, strconv.Itoa(284+i)+" 16-31,48-63 change")
	}
	tests := []struct {
		name string
		host string
		nics []string
		give PlanOptions
		want []string
	}{
		{"seed spread", "seed", []string{"eth0"}, PlanOptions{}, seedSpread},
		{"seed node", "seed", []string{"eth0"}, PlanOptions{Strategy: StrategyNode}, seedNode},
		{
			// Excluding 16-19 leaves their siblings 48-51 as the first
			// thread of those cores.
			"seed exclude", "seed", []string{"eth0"}, PlanOptions{Exclude: cpuset.Range(16, 19)},
			[]string{"283 20-31,48-63 change", "284 48 change", "285 49 change", "286 50 change", "287 51 keep",
				"288 20 change", "289 21 change", "290 22 change", "291 23 change", "292 24 change", "293 25 change",
				"294 26 change", "295 27 change", "296 28 change", "297 29 change", "298 30 change", "299 31 change"},
		},
		{
			// Two CPUs for 16 queues: wrap.
			"seed cpus wrap", "seed", []string{"eth0"}, PlanOptions{CPUs: cpuset.New(20, 52)},
			[]string{"283 20,52 change", "284 20 change", "285 52 change", "286 20 change", "287 52 change",
				"288 20 change", "289 52 change", "290 20 change", "291 52 change", "292 20 change", "293 52 change",
				"294 20 change", "295 52 change", "296 20 change", "297 52 change", "298 20 change", "299 52 change"},
		},
		{
			"nps2 spread", "nps2", []string{"enp65s0f0"}, PlanOptions{},
			[]string{"100 8-15 keep", "101 8 keep", "102 12 change", "103 9 change", "104 13 change",
				"105 10 change", "106 14 change", "107 11 change", "108 15 change"},
		},
		{
			"nps2 node", "nps2", []string{"enp65s0f0"}, PlanOptions{Strategy: StrategyNode},
			[]string{"100 8-15 keep", "101 8-15 change", "102 8-15 change", "103 8-15 change", "104 8-15 change",
				"105 8-15 change", "106 8-15 change", "107 8-15 change", "108 8-15 change"},
		},
		{
			// node1 online is 8,10-15; 10-11 are isolated: 8,12-15 remain.
			"offline spread", "offline-2node", []string{"ens1f0"}, PlanOptions{},
			[]string{"120 8,12-15 change", "121 8 change", "122 14 change", "123 15 change", "124 13 change",
				"125 12 change", "126 8 change", "127 14 change", "128 15 change"},
		},
		{
			// Isolated CPUs named in --cpus are used; offline 9 never is.
			"offline cpus", "offline-2node", []string{"ens1f0"}, PlanOptions{CPUs: cpuset.Range(8, 11)},
			[]string{"120 8,10-11 change", "121 8 change", "122 10 keep", "123 11 keep", "124 8 change",
				"125 10 change", "126 11 change", "127 8 change", "128 10 change"},
		},
		{
			// Two NICs on node 0 continue one rotation: 0,2,3,4,6,7.
			"offline two nics", "offline-2node", []string{"eth1", "eth10"}, PlanOptions{},
			[]string{"150 0 keep", "151 2 keep", "152 0,2-4,6-7 change", "153 3 keep", "154 4 keep", "155 0,2-4,6-7 change"},
		},
		{
			// numa_node -1: local_cpulist says node 1's online CPUs.
			"offline local_cpulist", "offline-2node", []string{"ens2f0"}, PlanOptions{},
			[]string{"140 8,12-15 change", "141 8 change", "142 14 change", "143 15 change", "144 13 change"},
		},
		{
			"offline --node 0", "offline-2node", []string{"ens2f0"}, PlanOptions{Node: new(0), Strategy: StrategyNode},
			[]string{"140 0,2-4,6-7 change", "141 0,2-4,6-7 change", "142 0,2-4,6-7 change", "143 0,2-4,6-7 change", "144 0,2-4,6-7 change"},
		},
		{
			"vm virtio", "vm-virtio", []string{"eth0"}, PlanOptions{},
			[]string{"37 0-1 keep", "38 0 change", "39 0 change"},
		},
		{
			// One flow's queue IRQ to one CPU: the other 16 IRQs are
			// not in the plan at all.
			"seed one irq", "seed", []string{"eth0"}, PlanOptions{CPUs: cpuset.New(20), IRQs: []int{290}},
			[]string{"290 20 change"},
		},
		{
			"seed two irqs xps", "seed", []string{"eth0"}, PlanOptions{CPUs: cpuset.New(20), IRQs: []int{299, 284}, XPS: true},
			[]string{"284 20 change", "299 20 change", "tx-0 20 change", "tx-15 20 change"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, tab := planHost(t, hosttest.Root(tt.host), tt.nics...)
			p, err := planPin(h, tab, tt.nics, tt.give)
			if err != nil {
				t.Fatalf("PlanPin: %v", err)
			}
			if diff := cmp.Diff(tt.want, placed(p)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			for _, s := range p.Steps {
				if !s.To.IsSubsetOf(h.Online) {
					t.Errorf("IRQ %d planned on %s, not all online (%s)", s.IRQ, s.To, h.Online)
				}
			}
		})
	}
}

// On the seed host spread puts the 16 queues on 16 distinct physical
// cores of node 1, one CPU each.
func TestPlanSeedDistinctCores(t *testing.T) {
	h, tab := planHost(t, hosttest.Root("seed"), "eth0")
	p, err := planPin(h, tab, []string{"eth0"}, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node1, _ := h.NodeCPUs(1)
	cores := map[int]bool{}
	for _, s := range p.Steps {
		if s.Kind != irq.KindQueue {
			continue
		}
		if s.To.Len() != 1 || !s.To.IsSubsetOf(node1) || !s.To.IsSubsetOf(cpuset.Range(16, 31)) {
			t.Errorf("queue %d on %s, want one CPU of 16-31", s.Queue, s.To)
		}
		c, _ := s.To.Min()
		cpu, _ := h.CPU(c)
		if cores[cpu.Core.Or(-1)] {
			t.Errorf("queue %d shares core %v", s.Queue, cpu.Core)
		}
		cores[cpu.Core.Or(-1)] = true
	}
	if len(cores) != 16 {
		t.Errorf("%d distinct cores, want 16", len(cores))
	}
}

func TestPlanXPS(t *testing.T) {
	h, tab := planHost(t, hosttest.Root("seed"), "eth0")
	p, err := planPin(h, tab, []string{"eth0"}, PlanOptions{XPS: true})
	if err != nil {
		t.Fatal(err)
	}
	got := placed(p)[17:]
	var want []string
	for i, cpu := range seq(16, 31) {
		a := "change"
		if i == 1 {
			a = "keep" // tx-1's xps_cpus is CPU 17 already
		}
		want = append(want, "tx-"+strconv.Itoa(i)+" "+strconv.Itoa(cpu)+" "+a)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("xps steps (-want +got):\n%s", diff)
	}
	// vm-virtio's tx-0 has no xps_cpus file: left alone, with a note.
	h, tab = planHost(t, hosttest.Root("vm-virtio"), "eth0")
	p, err = planPin(h, tab, []string{"eth0"}, PlanOptions{XPS: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Steps); n != 3 {
		t.Errorf("vm-virtio: %d steps, want 3 (no xps step)", n)
	}
	if !slices.ContainsFunc(p.Notes, func(s string) bool { return strings.Contains(s, "tx-0: no readable xps_cpus") }) {
		t.Errorf("vm-virtio notes %q lack the xps_cpus note", p.Notes)
	}
}

func TestPlanManagedSkipped(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	// IRQ 290 made managed as the kernel shows it: no write bit.
	for _, f := range []string{"smp_affinity", "smp_affinity_list"} {
		if err := os.Chmod(filepath.Join(root, "proc/irq/290", f), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	h, tab := planHost(t, root, "eth0")
	p, err := planPin(h, tab, []string{"eth0"}, PlanOptions{XPS: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Steps {
		switch {
		case s.IRQ == 290 && s.Action != ActionSkipManaged:
			t.Errorf("IRQ 290: action %s, want %s", s.Action, ActionSkipManaged)
		case s.IRQ == 290 && !s.To.IsEmpty():
			t.Errorf("IRQ 290: planned on %s, want nothing", s.To)
		case s.Kind == KindXPS && s.Queue == 6:
			t.Errorf("tx-6 follows managed IRQ 290 and should be left alone: %+v", s)
		}
	}
	// The others keep their places: a managed queue still takes its turn.
	if got := placed(p)[7]; got != "290 - skip-managed" {
		t.Errorf("step 7 = %q", got)
	}
	if got := placed(p)[8]; got != "291 23 change" {
		t.Errorf("step 8 = %q, want 291 23 change", got)
	}
}

func TestPlanErrors(t *testing.T) {
	unknown := hosttest.Copy(t, "seed")
	dev := filepath.Join(unknown, "sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0")
	for f, v := range map[string]string{"numa_node": "-1\n", "local_cpulist": "0-63\n"} {
		if err := os.WriteFile(filepath.Join(dev, f), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		root string
		give PlanOptions
		want error
		msg  string
	}{
		{"locality unknown", unknown, PlanOptions{}, ErrLocalityUnknown, "give --node or --cpus"},
		{"exclude all", hosttest.Root("seed"), PlanOptions{Exclude: cpuset.Range(0, 63)}, ErrNoCPUs, "--exclude 16-31,48-63"},
		{"no node", hosttest.Root("seed"), PlanOptions{Node: new(7)}, nil, "--node 7: unknown node (this host has nodes 0-1)"},
		{"cpus outside", hosttest.Root("seed"), PlanOptions{CPUs: cpuset.New(64, 65)}, nil, "CPUs 64-65 do not exist"},
		{"one cpu outside", hosttest.Root("seed"), PlanOptions{CPUs: cpuset.New(64)}, nil, "CPU 64 does not exist"},
		{"offline only", hosttest.Root("offline-2node"), PlanOptions{CPUs: cpuset.New(1, 5)}, ErrNoCPUs, "offline 1,5"},
		{"bad strategy", hosttest.Root("seed"), PlanOptions{Strategy: "random"}, nil, `strategy "random"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nic := "eth0"
			if strings.Contains(tt.root, "offline") {
				nic = "ens1f0"
			}
			h, tab := planHost(t, tt.root, nic)
			_, err := planPin(h, tab, []string{nic}, tt.give)
			if err == nil {
				t.Fatal("PlanPin succeeded, want an error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
		})
	}
	// Locality unknown is fine with --node.
	h, tab := planHost(t, unknown, "eth0")
	if _, err := planPin(h, tab, []string{"eth0"}, PlanOptions{Node: new(1)}); err != nil {
		t.Errorf("with --node 1: %v", err)
	}
}

// BenchmarkPlanPin plans all 8 NICs (520 IRQs and 504 xps queues) of a
// 512-CPU, 1,000-IRQ host.
func BenchmarkPlanPin(b *testing.B) {
	root := hosttest.Synthetic(b, hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488})
	h, tab := planHost(b, root)
	var nics []string
	for _, n := range h.NICs {
		nics = append(nics, n.Name)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := planPin(h, tab, nics, PlanOptions{XPS: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpreadOrder orders one 128-CPU node of the 512-CPU host.
func BenchmarkSpreadOrder(b *testing.B) {
	root := hosttest.Synthetic(b, hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 1, QueuesPerNIC: 8})
	h, err := topology.Read(hosttest.Open(b, root))
	if err != nil {
		b.Fatal(err)
	}
	cpus, _ := h.NodeCPUs(1)
	b.ReportAllocs()
	for b.Loop() {
		if len(spreadOrder(h, cpus)) != cpus.Len() {
			b.Fatal("short order")
		}
	}
}
