package tune

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

func mustList(t testing.TB, s string) cpuset.Set {
	t.Helper()
	set, err := cpuset.ParseList(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// loadHost reads a host tree and all its NIC IRQs.
func loadHost(t testing.TB, root string) (*topology.Host, *irq.Table) {
	t.Helper()
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := irq.Load(h, irq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h, tb
}

// seedIRQCPUs are the CPUs of mlx5_comp0..15 (IRQs 284-299) on the seed
// host, as published with the test.
var seedIRQCPUs = []int{50, 17, 53, 51, 58, 55, 53, 30, 60, 20, 21, 61, 26, 23, 24, 63}

func TestPickSeed(t *testing.T) {
	h, tb := loadHost(t, hosttest.Root("seed"))
	irqCPUs := cpuset.New(seedIRQCPUs...)
	node1 := mustList(t, "16-31,48-63")
	tests := []struct {
		name string
		give PickRequest
		want string
	}{
		{"nic", PickRequest{NIC: "eth0"}, "16-31,48-63"},
		{"node 0", PickRequest{Node: new(0)}, "0-15,32-47"},
		{"cpus", PickRequest{CPUs: mustList(t, "1-3,40")}, "1-3,40"},
		{"one per core", PickRequest{NIC: "eth0", OnePerCore: true}, "16-31"},
		{"exclude", PickRequest{NIC: "eth0", Exclude: mustList(t, "16-19,0-3")}, "20-31,48-63"},
		{"exclude irq cpus", PickRequest{NIC: "eth0", ExcludeIRQCPUs: true}, node1.Difference(irqCPUs).List()},
		// With one per core the IRQ CPUs' siblings go too: cores 17-21,
		// 23-24, 26, 28-31 run a queue's softirq; 16, 22, 25, 27 are left.
		{"exclude irq cpus one per core", PickRequest{NIC: "eth0", ExcludeIRQCPUs: true, OnePerCore: true}, "16,22,25,27"},
		{"count", PickRequest{NIC: "eth0", Count: 4}, "16-19"},
		{"count after exclusions", PickRequest{NIC: "eth0", ExcludeIRQCPUs: true, Count: 4}, "16,18-19,22"},
		{"exclude then one per core keeps the sibling", PickRequest{NIC: "eth0", Exclude: cpuset.New(16), OnePerCore: true}, "17-31,48"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := pickCPUs(h, tb, tt.give)
			if err != nil {
				t.Fatalf("PickCPUs(%+v): %v", tt.give, err)
			}
			if got := p.CPUs.List(); got != tt.want {
				t.Errorf("PickCPUs(%+v) = %s, want %s", tt.give, got, tt.want)
			}
			nodes, _ := h.NodesOf(p.CPUs)
			if n, ok := p.Nodes.Get(); !ok || !n.Equal(nodes) {
				t.Errorf("nodes = %v, want %s", p.Nodes, nodes)
			}
		})
	}
}

func TestPickSeedIRQCPUs(t *testing.T) {
	h, tb := loadHost(t, hosttest.Root("seed"))
	p, err := pickCPUs(h, tb, PickRequest{NIC: "eth0", ExcludeIRQCPUs: true})
	if err != nil {
		t.Fatal(err)
	}
	want := cpuset.New(seedIRQCPUs...)
	if !p.IRQCPUs.Equal(want) || !p.IRQsChecked {
		t.Errorf("IRQCPUs = %s, want %s", p.IRQCPUs, want)
	}
	if p.CPUs.Intersects(want) {
		t.Errorf("picked %s still holds IRQ CPUs %s", p.CPUs, p.CPUs.Intersection(want))
	}
	// The async vector (IRQ 283, effective 16) is not a queue: 16 stays.
	if !p.CPUs.Contains(16) {
		t.Errorf("picked %s lacks CPU 16, which only the async IRQ uses", p.CPUs)
	}
	if diff := cmp.Diff([]Drop{{Reason: "irq", CPUs: want}}, p.Drops); diff != "" {
		t.Errorf("drops (-want +got):\n%s", diff)
	}
	if len(p.Notes) != 0 {
		t.Errorf("notes = %q, want none", p.Notes)
	}
}

func TestPickOfflineIsolated(t *testing.T) {
	h, tb := loadHost(t, hosttest.Root("offline-2node"))
	tests := []struct {
		name      string
		give      PickRequest
		want      string
		wantDrops []Drop
	}{
		// node1 is 8,10-15 (9 offline, 10-11 isolated).
		{"node drops isolated", PickRequest{Node: new(1)}, "8,12-15",
			[]Drop{{"isolated", mustList(t, "10-11")}}},
		{"list keeps named isolated, drops offline", PickRequest{CPUs: mustList(t, "8-15")}, "8,10-15",
			[]Drop{{"offline", cpuset.New(9)}}},
		{"nic by numa_node", PickRequest{NIC: "ens1f0"}, "8,12-15",
			[]Drop{{"isolated", mustList(t, "10-11")}}},
		{"nic by local_cpulist", PickRequest{NIC: "ens2f0"}, "8,12-15",
			[]Drop{{"isolated", mustList(t, "10-11")}}},
		// ens1f0 queues land on 8,10-13 and 0,2-3: 14 and 15 are left.
		{"irq cpus", PickRequest{NIC: "ens1f0", ExcludeIRQCPUs: true}, "14-15",
			[]Drop{{"isolated", mustList(t, "10-11")}, {"irq", mustList(t, "8,12-13")}}},
		{"node 0", PickRequest{Node: new(0)}, "0,2-4,6-7", nil},
		{"one per core with a lone thread", PickRequest{CPUs: mustList(t, "8,12-13"), OnePerCore: true}, "8,13", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := pickCPUs(h, tb, tt.give)
			if err != nil {
				t.Fatalf("PickCPUs(%+v): %v", tt.give, err)
			}
			if got := p.CPUs.List(); got != tt.want {
				t.Errorf("PickCPUs(%+v) = %s, want %s", tt.give, got, tt.want)
			}
			if diff := cmp.Diff(tt.wantDrops, p.Drops, cmp.Comparer(func(a, b cpuset.Set) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("drops (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPickEth1SkipsEth10(t *testing.T) {
	h, tb := loadHost(t, hosttest.Root("offline-2node"))
	p, err := pickCPUs(h, tb, PickRequest{NIC: "eth1", ExcludeIRQCPUs: true})
	if err != nil {
		t.Fatal(err)
	}
	// eth1-TxRx-0,1 are on CPUs 0 and 2; eth10's (3, 4) stay.
	if want := "0,2"; p.IRQCPUs.List() != want {
		t.Errorf("eth1 IRQ CPUs = %s, want %s", p.IRQCPUs, want)
	}
	if want := "3-4,6-7"; p.CPUs.List() != want {
		t.Errorf("picked %s, want %s", p.CPUs, want)
	}
}

func TestPickErrors(t *testing.T) {
	h, tb := loadHost(t, hosttest.Root("offline-2node"))
	tests := []struct {
		name     string
		give     PickRequest
		wantErr  error
		wantText string
	}{
		{"no source", PickRequest{}, ErrBadPick, "choose the candidate CPUs"},
		{"two sources", PickRequest{NIC: "ens1f0", Node: new(1)}, ErrBadPick, "give one"},
		{"irq cpus without nic", PickRequest{Node: new(1), ExcludeIRQCPUs: true}, ErrBadPick, "needs the NIC"},
		{"negative count", PickRequest{Node: new(1), Count: -1}, ErrBadPick, "negative"},
		{"unknown nic", PickRequest{NIC: "eth9"}, topology.ErrUnknownNIC, `"eth9" (this host has: ens1f0, ens2f0, eth1, eth10)`},
		{"unknown node", PickRequest{Node: new(7)}, ErrNoSuchNode, "node 7 (this host has nodes 0-1)"},
		{"unknown cpus", PickRequest{CPUs: mustList(t, "14-17")}, ErrNoSuchCPU, "CPUs 16-17 do not exist"},
		{"one unknown cpu", PickRequest{CPUs: mustList(t, "15-16")}, ErrNoSuchCPU, "CPU 16 does not exist"},
		{"too few", PickRequest{Node: new(1), Count: 6}, ErrTooFewLeft, "want 6 CPUs, 5 remain: candidates 8,10-15 from node 1; isolated/nohz_full removed 10-11; left 8,12-15"},
		{"all offline", PickRequest{CPUs: cpuset.New(1, 5)}, ErrNothingLeft, "no CPUs left: candidates 1,5 from the CPU list; offline removed 1,5"},
		// Every core of node 1 runs one of ens1f0's queues or is isolated.
		{"nothing left", PickRequest{NIC: "ens1f0", ExcludeIRQCPUs: true, OnePerCore: true}, ErrNothingLeft,
			"isolated/nohz_full removed 10-11; IRQ CPUs removed 8,12-13; IRQ CPUs' SMT siblings removed 14-15. ens1f0's queue IRQs with their SMT siblings take all of 8,12-15: use fewer queues (ethtool -L ens1f0 combined N, N below 8), or pin the queues to part of them first (irqnuma irq pin ens1f0 --cpus 8,12)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := pickCPUs(h, tb, tt.give)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("PickCPUs(%+v) = %v, %v; want error %v", tt.give, p, err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q does not say %q", err, tt.wantText)
			}
		})
	}
}

func TestPickLocalityUnknown(t *testing.T) {
	root := hosttest.Copy(t, "offline-2node")
	// numa_node -1 and a local_cpulist of every CPU: the kernel does not know.
	dev := filepath.Join(root, "sys/bus/pci/devices/0000:5e:00.0")
	for file, text := range map[string]string{"local_cpulist": "0,2-4,6-8,10-15\n", "numa_node": "-1\n"} {
		if err := os.Chmod(filepath.Join(dev, file), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dev, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, tb := loadHost(t, root)
	_, err := pickCPUs(h, tb, PickRequest{NIC: "ens2f0"})
	if !errors.Is(err, ErrLocalityUnknown) {
		t.Fatalf("PickCPUs(ens2f0) error = %v, want ErrLocalityUnknown", err)
	}
}

// TestPickEffectiveUnknown removes effective_affinity{,_list} from the
// seed's queue IRQs: the requested affinity stands in, and a note says so.
func TestPickEffectiveUnknown(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	for n := 284; n <= 299; n++ {
		for _, f := range []string{"effective_affinity", "effective_affinity_list"} {
			if err := os.Remove(filepath.Join(root, "proc/irq", strconv.Itoa(n), f)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// IRQ 290 now asks for 53-54 (what it asks for is all we know).
	if err := os.WriteFile(filepath.Join(root, "proc/irq/290/smp_affinity_list"), []byte("53-54\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, tb := loadHost(t, root)
	p, err := pickCPUs(h, tb, PickRequest{NIC: "eth0", ExcludeIRQCPUs: true})
	if err != nil {
		t.Fatal(err)
	}
	want := cpuset.New(append(seedIRQCPUs, 54)...)
	if !p.IRQCPUs.Equal(want) {
		t.Errorf("IRQCPUs = %s, want %s", p.IRQCPUs, want)
	}
	wantNote := "effective affinity unknown for IRQs 284-299: excluded their requested CPUs"
	if diff := cmp.Diff([]string{wantNote}, p.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// TestPickInactiveIRQ: an IRQ whose effective affinity is known and empty
// is not active and excludes nothing.
func TestPickInactiveIRQ(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	dir := filepath.Join(root, "proc/irq/284")
	for f, text := range map[string]string{"effective_affinity_list": "\n", "effective_affinity": "00000000,00000000\n"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	h, tb := loadHost(t, root)
	p, err := pickCPUs(h, tb, PickRequest{NIC: "eth0", ExcludeIRQCPUs: true})
	if err != nil {
		t.Fatal(err)
	}
	if !p.CPUs.Contains(50) {
		t.Errorf("picked %s lacks CPU 50, the CPU of inactive IRQ 284 alone", p.CPUs)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "IRQs 284 have no effective CPU") {
		t.Errorf("notes = %q, want one about IRQ 284", p.Notes)
	}
}

// TestPickMovingIRQ: right after a write the kernel may still deliver an
// IRQ on its old CPU (x86 moves it at its next interrupt, once). Where it
// goes from then on is the requested CPU, so that is excluded, and the
// pending move is said.
func TestPickMovingIRQ(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	if err := os.WriteFile(filepath.Join(root, "proc/irq/284/smp_affinity_list"), []byte("16\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, tb := loadHost(t, root)
	p, err := pickCPUs(h, tb, PickRequest{NIC: "eth0", ExcludeIRQCPUs: true})
	if err != nil {
		t.Fatal(err)
	}
	if !p.IRQCPUs.Contains(16) || p.IRQCPUs.Contains(50) {
		t.Errorf("IRQCPUs = %s, want 16 (requested) and not 50 (its last interrupt only)", p.IRQCPUs)
	}
	want := []string{"IRQ 284 is still delivered to CPU 50 until its next interrupt, then to 16 (a move is pending): excluded 16"}
	if diff := cmp.Diff(want, p.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	// A pick that fails says it too: everything but CPU 16 excluded.
	_, err = pickCPUs(h, tb, PickRequest{NIC: "eth0", ExcludeIRQCPUs: true, Exclude: cpuset.Range(17, 63)})
	if !errors.Is(err, ErrNothingLeft) || !strings.Contains(err.Error(), "IRQ 284 is still delivered to CPU 50") {
		t.Errorf("failed pick: %v; want ErrNothingLeft saying the move is pending", err)
	}
}

func TestPickVM(t *testing.T) {
	h, tb := loadHost(t, hosttest.Root("vm-virtio"))
	p, err := pickCPUs(h, tb, PickRequest{NIC: "eth0"})
	if err != nil {
		t.Fatal(err)
	}
	if p.CPUs.List() != "0-1" || p.Source != "eth0 local CPUs, node 0 (single node)" {
		t.Errorf("PickCPUs(eth0) = %s from %q, want 0-1 from the single node", p.CPUs, p.Source)
	}
	// virtio2-input.0 and output.0 land on both CPUs: nothing is left.
	_, err = pickCPUs(h, tb, PickRequest{NIC: "eth0", ExcludeIRQCPUs: true})
	if !errors.Is(err, ErrNothingLeft) {
		t.Errorf("PickCPUs(eth0, exclude IRQ CPUs) error = %v, want ErrNothingLeft", err)
	}
	// It says what to do instead.
	want := "eth0's queue IRQs take all of 0-1: use fewer queues (ethtool -L eth0 combined N), or pin the queues to part of them first (irqnuma irq pin eth0 --cpus 0) and ask again"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

func TestPickSynthetic(t *testing.T) {
	root := hosttest.Synthetic(t, hosttest.SyntheticSpec{CPUs: 256, Nodes: 2, SMT: true, NICs: 1, QueuesPerNIC: 8})
	h, tb := loadHost(t, root)
	tests := []struct {
		give PickRequest
		want string
	}{
		{PickRequest{NIC: "eth0"}, "0-63,128-191"},
		{PickRequest{NIC: "eth0", ExcludeIRQCPUs: true}, "8-63,128-191"},
		{PickRequest{NIC: "eth0", ExcludeIRQCPUs: true, OnePerCore: true}, "8-63"},
		{PickRequest{Node: new(1), Count: 70}, "64-127,192-197"},
	}
	for _, tt := range tests {
		p, err := pickCPUs(h, tb, tt.give)
		if err != nil {
			t.Fatalf("PickCPUs(%+v): %v", tt.give, err)
		}
		if got := p.CPUs.List(); got != tt.want {
			t.Errorf("PickCPUs(%+v) = %s, want %s", tt.give, got, tt.want)
		}
		if p.Width != 256 {
			t.Errorf("Width = %d, want 256", p.Width)
		}
	}
}

func BenchmarkPickCPUs(b *testing.B) {
	root := hosttest.Synthetic(b, hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 480})
	h, tb := loadHost(b, root)
	r := PickRequest{NIC: "eth0", ExcludeIRQCPUs: true, OnePerCore: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pickCPUs(h, tb, r); err != nil {
			b.Fatal(err)
		}
	}
}
