package bench

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/usage"
)

var iperf3Cmd = []string{"iperf3", "-c", "192.0.2.1", "-J"}

// dryRun plans the matrix on a committed host tree.
func dryRun(t *testing.T, root, nic string, cells string, remote *int) (*Result, error) {
	t.Helper()
	cs, err := ParseCells(cells)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewParser(iperf3Cmd, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return Run(context.Background(), Request{Root: hosttest.Open(t, root), NIC: nic, Cells: cs, RemoteNode: remote, Repeat: 1,
		Command: iperf3Cmd, Parser: p, DryRun: true})
}

// cellLine is a planned cell in one line: "local irq 1:16-23 app 1:24-31 mem -".
func cellLine(c PlannedCell) string {
	if !c.Applicable {
		return c.Name + " n/a: " + c.Reason
	}
	mem := "-"
	if !c.MemNodes.IsEmpty() {
		mem = c.MemNodes.List()
	}
	return c.Name + " irq " + strconv.Itoa(c.IRQNode.Or(-1)) + ":" + c.IRQCPUs.List() + " app " + strconv.Itoa(c.AppNode.Or(-1)) + ":" + c.AppCPUs.List() + " mem " + mem
}

// TestPlanHostTrees places the default matrix on the committed trees: the
// NIC's node and the remote one split between IRQ cores and the
// command's, SMT siblings kept together, offline and isolated CPUs left
// out, and on a one-node host the remote cells not applicable, with why.
func TestPlanHostTrees(t *testing.T) {
	tests := []struct {
		tree, nic  string
		wantRemote int
		wantWhy    string
		want       []string
	}{
		{"seed", "eth0", 0, "the only other node", []string{
			"local irq 1:16-23,48-55 app 1:24-31,56-63 mem -",
			"local+membind irq 1:16-23,48-55 app 1:24-31,56-63 mem 1",
			"shared irq 1:16-23,48-55 app 1:16-23,48-55 mem -",
			"app-remote irq 1:16-23,48-55 app 0:8-15,40-47 mem -",
			"irq-remote irq 0:0-7,32-39 app 1:24-31,56-63 mem -",
			"remote irq 0:0-7,32-39 app 0:8-15,40-47 mem -",
		}},
		{"nps2", "enp65s0f0", 2, "the farthest from node 1, at distance 32", []string{
			"local irq 1:8-11 app 1:12-15 mem -",
			"local+membind irq 1:8-11 app 1:12-15 mem 1",
			"shared irq 1:8-11 app 1:8-11 mem -",
			"app-remote irq 1:8-11 app 2:20-23 mem -",
			"irq-remote irq 2:16-19 app 1:12-15 mem -",
			"remote irq 2:16-19 app 2:20-23 mem -",
		}},
		// Node 1: CPU 9 offline, 10-11 isolated; cores (8,12), (13), (10,14)
		// and (11,15) keep 8,12-15. Node 0: CPUs 1 and 5 offline.
		{"offline-2node", "ens1f0", 0, "the only other node", []string{
			"local irq 1:8,12-13 app 1:14-15 mem -",
			"local+membind irq 1:8,12-13 app 1:14-15 mem 1",
			"shared irq 1:8,12-13 app 1:8,12-13 mem -",
			"app-remote irq 1:8,12-13 app 0:3,7 mem -",
			"irq-remote irq 0:0,2,4,6 app 1:14-15 mem -",
			"remote irq 0:0,2,4,6 app 0:3,7 mem -",
		}},
		{"vm-virtio", "", -1, "this host has one NUMA node (node 0)", []string{
			"local irq 0:0 app 0:1 mem -",
			"local+membind irq 0:0 app 0:1 mem 0",
			"shared irq 0:0 app 0:0 mem -",
			"app-remote n/a: no remote node: this host has one NUMA node (node 0)",
			"irq-remote n/a: no remote node: this host has one NUMA node (node 0)",
			"remote n/a: no remote node: this host has one NUMA node (node 0)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.tree, func(t *testing.T) {
			res, err := dryRun(t, hosttest.Shared(t, tt.tree), tt.nic, "default", nil)
			if err != nil {
				t.Fatal(err)
			}
			p := res.Plan
			why := p.RemoteBy
			if !p.RemoteNode.Known() {
				why = p.RemoteNode.Why().Detail
			}
			if p.RemoteNode.Or(-1) != tt.wantRemote || why != tt.wantWhy {
				t.Errorf("remote node %v (%s), want %d (%s)", p.RemoteNode, why, tt.wantRemote, tt.wantWhy)
			}
			var got []string
			for _, c := range p.Cells {
				got = append(got, cellLine(c))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
			if len(res.Cells) != len(p.Cells) || len(res.StateFiles) != 0 || !res.DryRun {
				t.Errorf("dry run result: %d cells, state files %v, dry run %v", len(res.Cells), res.StateFiles, res.DryRun)
			}
		})
	}
}

// TestPlanChoices: --remote-node, every placement, a node of one core.
func TestPlanChoices(t *testing.T) {
	nps2 := hosttest.Shared(t, "nps2")
	three := 3
	res, err := dryRun(t, nps2, "enp65s0f0", "remote,app-remote+membind", &three)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{cellLine(res.Plan.Cells[0]), cellLine(res.Plan.Cells[1]), res.Plan.RemoteBy}
	want := []string{"remote irq 3:24-27 app 3:28-31 mem -", "app-remote+membind irq 1:8-11 app 3:28-31 mem 3", "--remote-node"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("--remote-node 3 (-want +got):\n%s", diff)
	}
	res, err = dryRun(t, nps2, "enp65s0f0", "all", nil)
	if err != nil || len(res.Plan.Cells) != 10 {
		t.Fatalf("all: %v, %d cells", err, len(res.Plan.Cells))
	}
	// Two nodes of one CPU each: nothing apart from the IRQs' core.
	root := hosttest.Synthetic(t, hosttest.SyntheticSpec{CPUs: 2, Nodes: 2, NICs: 1, QueuesPerNIC: 2})
	res, err = dryRun(t, root, "eth0", "local,shared,irq-remote", nil)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"local n/a: node 0 has one usable core (CPUs 0): no core apart from the IRQs' for the command",
		"shared irq 0:0 app 0:0 mem -",
		"irq-remote n/a: node 0 has one usable core (CPUs 0): no core apart from the IRQs' for the command",
	}
	got = nil
	for _, c := range res.Plan.Cells {
		got = append(got, cellLine(c))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("one-CPU nodes (-want +got):\n%s", diff)
	}
}

func TestPlanRefuses(t *testing.T) {
	one := 1
	tests := []struct {
		name, tree, nic, cells string
		remote                 *int
		want                   error
	}{
		{"several NICs, none chosen", "offline-2node", "", "default", nil, usage.ErrUsage},
		{"unknown NIC", "seed", "eth9", "default", nil, topology.ErrUnknownNIC},
		{"remote node is the NIC's", "nps2", "enp65s0f0", "default", &one, usage.ErrUsage},
		{"remote node that does not exist", "seed", "eth0", "default", &[]int{7}[0], usage.ErrUsage},
	}
	for _, tt := range tests {
		_, err := dryRun(t, hosttest.Shared(t, tt.tree), tt.nic, tt.cells, tt.remote)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	_, err := dryRun(t, hosttest.Shared(t, "vm-virtio"), "", "remote,irq-remote", nil)
	if err == nil || !strings.Contains(err.Error(), "no placement asked for can run on this host") {
		t.Errorf("only remote cells on a one-node host: %v", err)
	}
	for _, bad := range []string{"locl", "local,,shared", ""} {
		if _, err := ParseCells(bad); !usage.Is(err) {
			t.Errorf("ParseCells(%q) = %v, want usage.ErrUsage", bad, err)
		}
	}
}
