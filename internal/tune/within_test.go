package tune

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// TestWithinCgroup: a group's effective CPUs, named by the file of its
// version.
func TestWithinCgroup(t *testing.T) {
	tests := []struct {
		give *proc.Cgroup
		want Within
	}{
		{&proc.Cgroup{Path: "/pods/a", Version: proc.CgroupVersionV2, CPUs: cpuset.New(2, 3), CPUsKnown: true},
			Within{CPUs: cpuset.New(2, 3), From: "cgroup /pods/a (cpuset.cpus.effective 2-3)"}},
		{&proc.Cgroup{Path: "/bench", Version: proc.CgroupVersionV1, CPUs: cpuset.New(4, 6), CPUsKnown: true},
			Within{CPUs: cpuset.New(4, 6), From: "cgroup /bench (cpuset.effective_cpus 4,6)"}},
	}
	for _, tt := range tests {
		got := WithinCgroup(tt.give)
		if got.From != tt.want.From || !got.CPUs.Equal(tt.want.CPUs) {
			t.Errorf("WithinCgroup(%s) = %s %q, want %s %q", tt.give.Path, got.CPUs, got.From, tt.want.CPUs, tt.want.From)
		}
	}
}

// TestWithinPod: a pod may use what any of its containers' groups may
// (the sandbox's included), each said with its name; a v1 group names
// v1's file; a container without a group, or whose CPUs are unknown, is
// the user's to fix.
func TestWithinPod(t *testing.T) {
	pod := proc.Selector{Kind: proc.SelectorKindPod, Pod: "ns/web"}
	group := func(v proc.CgroupVersion, container string, cpus ...int) *proc.Cgroup {
		return &proc.Cgroup{Version: v, CPUs: cpuset.New(cpus...), CPUsKnown: true, Pod: &proc.PodRef{Container: container, ContainerID: "c-" + container}}
	}
	w, err := WithinPod([]proc.Match{
		{Selector: pod, Group: group(proc.CgroupVersionV2, "app", 2, 3)},
		{Selector: pod, Group: group(proc.CgroupVersionV2, "", 0, 1)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "--pod ns/web (cpuset.cpus.effective of app 2-3, sandbox 0-1)"; w.From != want || w.CPUs.String() != "0-3" {
		t.Errorf("WithinPod = %s %q, want 0-3 %q", w.CPUs, w.From, want)
	}
	ctr := proc.Selector{Kind: proc.SelectorKindContainer, Pod: "c-app"}
	w, err = WithinPod([]proc.Match{{Selector: ctr, Group: group(proc.CgroupVersionV1, "app", 5)}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("--container c-app (cpuset.effective_cpus of app 5)", w.From); diff != "" {
		t.Errorf("v1 container (-want +got):\n%s", diff)
	}
	unknown := group(proc.CgroupVersionV2, "app")
	unknown.CPUsKnown, unknown.Why = false, "no cpuset.cpus.effective"
	for name, m := range map[string]proc.Match{
		"no group":     {Selector: pod, Why: "no such pod"},
		"CPUs unknown": {Selector: pod, Group: unknown},
	} {
		if _, err := WithinPod([]proc.Match{m}); !errors.Is(err, usage.ErrUsage) {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
	if _, err := WithinPod([]proc.Match{{Selector: pod, Why: "no such pod"}}); !errors.Is(err, proc.ErrNoPod) {
		t.Errorf("no group: %v, want proc.ErrNoPod", err)
	}
}
