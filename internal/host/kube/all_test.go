package kube

import (
	"context"
	"slices"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

const (
	uidC = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d" // monitoring/node-agent, BestEffort
	idC  = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"
)

// threePodTree is v2SystemdTree with a third pod, a BestEffort one under
// its QoS slice, and two log folders that are no running pod: one whose
// pod has no group any more, one whose name the kubelet never writes.
func threePodTree(t *testing.T) string {
	root := v2SystemdTree(t, ckV2Text)
	files := map[string]string{}
	podC := "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1a2b3c4d_5e6f_4a7b_8c9d_0e1f2a3b4c5d.slice"
	group(files, podC+"/crio-"+idC+".scope", "0-1,4-7", 4501)
	process(files, 4501, "agent", "/"+podC+"/crio-"+idC+".scope")
	logs(files, "monitoring", "node-agent", uidC, map[string]string{"agent": idC})
	files["var/log/pods/default_finished_00000000-0000-4000-8000-000000000001/job/0.log"] = ""
	files["var/log/pods/Default_BAD_"+uidC+"/agent/0.log"] = ""
	writeTree(t, root, files)
	return root
}

// TestResolveAll: every running pod of the node is added, sorted, once
// (not again when --pod names it), and resolved to its containers; a
// bound keeps the first and counts the rest; the caller's Pods are not
// written to.
func TestResolveAll(t *testing.T) {
	fsys := hosttest.Open(t, threePodTree(t))
	all := []string{"default/iperf-server", "kube-system/burst-0", "monitoring/node-agent"}
	tests := []struct {
		give        []string // --pod
		limit       int
		want        []string
		wantDropped int
	}{
		{limit: 0, want: all},
		{limit: 3, want: all},
		{limit: 2, want: all[:2], wantDropped: 1},
		{give: []string{"monitoring/node-agent"}, limit: 1, want: []string{"monitoring/node-agent", "default/iperf-server"}, wantDropped: 1},
	}
	for _, tt := range tests {
		given := slices.Clip(append(make([]string, 0, 8), tt.give...))
		sel := proc.Selection{Pods: given}
		dropped, err := ResolveAll(context.Background(), fsys, &sel, "", tt.limit)
		if err != nil {
			t.Fatalf("ResolveAll(--pod %q, %d): %v", tt.give, tt.limit, err)
		}
		if !slices.Equal(sel.Pods, tt.want) || dropped != tt.wantDropped {
			t.Errorf("ResolveAll(--pod %q, %d) = %q, dropped %d; want %q, dropped %d", tt.give, tt.limit, sel.Pods, dropped, tt.want, tt.wantDropped)
		}
		if !slices.Equal(given, tt.give) || len(given) != len(tt.give) {
			t.Errorf("ResolveAll(--pod %q) wrote the caller's Pods: %q", tt.give, given)
		}
		for _, p := range sel.Pods {
			if res := sel.Resolved[proc.PodSelector(p)]; len(res.Groups) == 0 {
				t.Errorf("ResolveAll: %s has no group: %s", p, res.Missing)
			}
		}
	}
	sel := proc.Selection{}
	if _, err := ResolveAll(context.Background(), fsys, &sel, "", 0); err != nil {
		t.Fatal(err)
	}
	_, matches, err := proc.SelectPresent(fsys, sel)
	if err != nil {
		t.Fatal(err)
	}
	checkIperf(t, matches, "cpu_manager_state, v2 layout")
	if m := byContainer(t, matches, proc.PodSelector("monitoring/node-agent"))["agent"]; !slices.Equal(m.PIDs, []int{4501}) {
		t.Errorf("monitoring/node-agent agent: PIDs %v, want [4501]", m.PIDs)
	}
}

// TestResolveAllNoPods: a node without kubelet folders has no pod, and
// nothing to resolve.
func TestResolveAllNoPods(t *testing.T) {
	sel := proc.Selection{}
	dropped, err := ResolveAll(context.Background(), hosttest.Open(t, hosttest.Root("seed")), &sel, "", 5)
	if err != nil || dropped != 0 || len(sel.Pods) != 0 || sel.Resolved != nil {
		t.Errorf("ResolveAll on seed = %q, dropped %d, resolved %v, %v; want none", sel.Pods, dropped, sel.Resolved, err)
	}
}
