package tune

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
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
	tested := 0
	for _, c := range realhosts.MustCaptures(t) {
		want, err := realhosts.ExpectedNodes(c)
		if errors.Is(err, realhosts.ErrNoExpected) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		t.Run(c.Name, func(t *testing.T) {
			h, err := topology.Read(hosttest.Open(t, realhosts.Root(t, c)))
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
				if n, ok := p.Nodes.Get(); !ok || !n.Equal(cpuset.New(id)) {
					t.Errorf("node %d: nodes %v, want %d", id, p.Nodes, id)
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

// TestPickIsolatedFromCmdline: cnto-worker1's capture has no cpu/isolated
// or cpu/nohz_full; its command line isolates 0-4,11-79
// (isolcpus=managed_irq, nohz_full). Picks and pin targets leave those
// CPUs out unless they are named: node 0 keeps 6,8,10 and node 1 5,7,9.
func TestPickIsolatedFromCmdline(t *testing.T) {
	realhosts.Require(t)
	c := realhosts.MustLookup(t, "cnto-worker1")
	h, err := topology.Read(hosttest.Open(t, realhosts.Root(t, c)))
	if err != nil {
		t.Fatal(err)
	}
	isolated, _ := cpuset.ParseList("0-4,11-79")
	tests := []struct {
		name    string
		give    PickRequest
		want    string
		dropped string // the CPUs the "isolated" filter removed
	}{
		{name: "node 0", give: PickRequest{Node: new(0)}, want: "6,8,10", dropped: isolated.Intersection(evens(80)).List()},
		{name: "node 1", give: PickRequest{Node: new(1)}, want: "5,7,9", dropped: isolated.Difference(evens(80)).List()},
		{name: "eno1 (node 0)", give: PickRequest{NIC: "eno1"}, want: "6,8,10", dropped: isolated.Intersection(evens(80)).List()},
		{name: "named isolated CPUs are kept", give: PickRequest{CPUs: cpuset.Range(0, 5)}, want: "0-5"},
	}
	for _, tt := range tests {
		p, err := pickCPUs(h, nil, tt.give)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		dropped := ""
		for _, d := range p.Drops {
			if d.Reason == "isolated" {
				dropped = d.CPUs.List()
			}
		}
		if p.CPUs.List() != tt.want || dropped != tt.dropped {
			t.Errorf("%s: picked %s (isolated dropped %q), want %s (dropped %q)", tt.name, p.CPUs, dropped, tt.want, tt.dropped)
		}
	}
	eno3, err := h.LookupNIC("eno3")
	if err != nil {
		t.Fatal(err)
	}
	tg, err := targetFor(h, eno3, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tg.CPUs.List() != "6,8,10" || len(tg.Left) != 1 || !strings.HasPrefix(tg.Left[0], "isolated/nohz_full 0,2,4,12,") {
		t.Errorf("pin target of eno3 = %s without %q, want 6,8,10 without the isolated CPUs of node 0", tg.CPUs, tg.Left)
	}
}

// evens returns the even CPUs below n.
func evens(n int) cpuset.Set {
	var ids []int
	for i := 0; i < n; i += 2 {
		ids = append(ids, i)
	}
	return cpuset.New(ids...)
}
