package irq

import (
	"errors"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// TestRealHosts reads every captured machine in testdata/realhosts and
// checks the answers against other projects' expected answers: the CPUs of
// every NUMA node (must-gather numa_cells, lstopo consoles, cadvisor), and
// on dell-2numa the requested affinity of all 1,125 IRQs.
func TestRealHosts(t *testing.T) {
	for _, c := range realhosts.MustCaptures(t) {
		t.Run(c.Name, func(t *testing.T) {
			root := realhosts.Root(t, c)
			h, err := topology.Read(hosttest.Open(t, root))
			if err != nil {
				t.Fatalf("topology.Read: %v", err)
			}
			want, err := realhosts.ExpectedNodes(c)
			switch {
			case errors.Is(err, realhosts.ErrNoExpected):
				t.Logf("no expected NUMA nodes: %v", err)
			case err != nil:
				t.Fatal(err)
			default:
				if len(h.Nodes) != len(want) {
					t.Errorf("%d nodes, want %d", len(h.Nodes), len(want))
				}
				for id, cpus := range want {
					n, ok := h.Node(id)
					if !ok {
						t.Errorf("node %d missing", id)
						continue
					}
					// Expected answers list online CPUs; some kernels (and
					// captures) keep offline CPUs in the node mask.
					if got := n.CPUs.Intersection(h.Online); !got.Equal(cpus) {
						t.Errorf("node %d CPUs = %s, want %s", id, got, cpus)
					}
				}
			}
			if n, err := realhosts.ExpectedCPUCount(c); err == nil {
				if got := h.Online.Len(); got != n {
					t.Errorf("%d online CPUs, want %d", got, n)
				}
			}

			tab, err := Load(h, Options{All: true})
			if err != nil {
				t.Fatalf("irq.Load: %v", err)
			}
			aff, err := realhosts.ExpectedIRQAffinity(c)
			if errors.Is(err, realhosts.ErrNoExpected) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(aff) != 1125 {
				t.Fatalf("expected answer has %d IRQs, want 1125", len(aff))
			}
			for n, want := range aff {
				q, ok := tab.Get(n)
				aff, known := q.Affinity.Get()
				if !ok || !known {
					t.Errorf("IRQ %d: affinity not read", n)
					continue
				}
				if !aff.Equal(want) {
					t.Errorf("IRQ %d affinity = %s, want %s", n, q.Affinity, want)
				}
			}
		})
	}
}
