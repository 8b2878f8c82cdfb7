package affinity

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/realhosts"
	"github.com/irqnuma/irqnuma/topology"
)

// TestPickRealHostNodes picks each node of every captured real machine and
// compares with the node CPUs another project saw there (lstopo, cadvisor,
// the OpenShift performance-profile creator): the pick must be those CPUs
// less offline and isolated ones, and its kernel mask must parse back to
// it at the host's width.
func TestPickRealHostNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("unpacks every real-host capture")
	}
	realhosts.Require(t)
	tested := 0
	for _, c := range realhosts.Captures() {
		want, err := realhosts.ExpectedNodes(c)
		if errors.Is(err, realhosts.ErrNoExpected) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		t.Run(c.Name, func(t *testing.T) {
			h, err := topology.Read(realhosts.Root(t, c))
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]int, 0, len(want))
			for id := range want {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			for _, id := range ids {
				wantCPUs := want[id].Intersection(h.Online).Difference(h.IsolatedCPUs())
				p, err := pickCPUs(h, nil, PickRequest{Node: new(id)})
				if wantCPUs.IsEmpty() {
					if !errors.Is(err, ErrNothingLeft) {
						t.Errorf("node %d: PickCPUs = %v, want ErrNothingLeft", id, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("node %d: %v", id, err)
				}
				if !p.CPUs.Equal(wantCPUs) {
					t.Errorf("node %d: picked %s, want %s (expected %s less offline and isolated)", id, p.CPUs, wantCPUs, want[id])
				}
				if !p.NodesKnown || !p.Nodes.Equal(cpuset.New(id)) {
					t.Errorf("node %d: nodes %s (known %v), want %d", id, p.Nodes, p.NodesKnown, id)
				}
				mask, err := p.Format("mask", false)
				if err != nil {
					t.Fatal(err)
				}
				back, err := cpuset.ParseMask(mask)
				if err != nil || !back.Equal(p.CPUs) {
					t.Errorf("node %d: mask %q parses to %s, %v; want %s", id, mask, back, err, p.CPUs)
				}
				if groups := (h.MaxCPUs() + 31) / 32; countCommas(mask) != groups-1 {
					t.Errorf("node %d: mask %q has %d groups, want %d for %d CPUs", id, mask, countCommas(mask)+1, groups, h.MaxCPUs())
				}
				one, err := pickCPUs(h, nil, PickRequest{Node: new(id), OnePerCore: true})
				if err != nil {
					t.Fatal(err)
				}
				if cores := h.Cores(p.CPUs); one.CPUs.Len() != len(cores) {
					t.Errorf("node %d: one per core picked %d CPUs (%s), want one for each of %d cores", id, one.CPUs.Len(), one.CPUs, len(cores))
				}
			}
			tested++
		})
	}
	if tested == 0 {
		t.Fatal("no capture with expected NUMA nodes")
	}
}

func countCommas(s string) int { return strings.Count(s, ",") }
