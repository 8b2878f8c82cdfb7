package tune

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// TestWithinCgroup: a group's effective CPUs, named by the file of its
// version.
func TestWithinCgroup(t *testing.T) {
	tests := []struct {
		give *proc.Cgroup
		want Within
	}{
		{&proc.Cgroup{Path: "/pods/a", Version: proc.CgroupVersionV2, CPUs: unknown.Of(cpuset.New(2, 3))},
			Within{CPUs: cpuset.New(2, 3), From: "cgroup /pods/a (cpuset.cpus.effective 2-3)"}},
		{&proc.Cgroup{Path: "/bench", Version: proc.CgroupVersionV1, CPUs: unknown.Of(cpuset.New(4, 6))},
			Within{CPUs: cpuset.New(4, 6), From: "cgroup /bench (cpuset.effective_cpus 4,6)"}},
	}
	for _, tt := range tests {
		got := withinCgroup(tt.give)
		if got.From != tt.want.From || !got.CPUs.Equal(tt.want.CPUs) {
			t.Errorf("withinCgroup(%s) = %s %q, want %s %q", tt.give.Path, got.CPUs, got.From, tt.want.CPUs, tt.want.From)
		}
	}
}

// TestWithinMatches: a pod may use what any of its containers' groups may
// (the sandbox's included), each said with its name; a v1 group names
// v1's file; a container without a group, or whose CPUs are unknown, is
// the user's to fix.
func TestWithinMatches(t *testing.T) {
	pod := proc.Selector{Kind: proc.SelectorKindPod, Pod: "ns/web"}
	group := func(v proc.CgroupVersion, container string, cpus ...int) *proc.Cgroup {
		return &proc.Cgroup{Version: v, CPUs: unknown.Of(cpuset.New(cpus...)), Pod: &proc.PodRef{Container: container, ContainerID: "c-" + container}}
	}
	w, err := withinMatches([]proc.Match{
		{Selector: pod, Group: group(proc.CgroupVersionV2, "app", 2, 3)},
		{Selector: pod, Group: group(proc.CgroupVersionV2, "", 0, 1)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "--pod ns/web (cpuset.cpus.effective of app 2-3, sandbox 0-1)"; w.From != want || w.CPUs.String() != "0-3" {
		t.Errorf("withinMatches = %s %q, want 0-3 %q", w.CPUs, w.From, want)
	}
	ctr := proc.Selector{Kind: proc.SelectorKindContainer, Pod: "c-app"}
	w, err = withinMatches([]proc.Match{{Selector: ctr, Group: group(proc.CgroupVersionV1, "app", 5)}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("--container c-app (cpuset.effective_cpus of app 5)", w.From); diff != "" {
		t.Errorf("v1 container (-want +got):\n%s", diff)
	}
	noCPUs := group(proc.CgroupVersionV2, "app")
	noCPUs.CPUs = unknown.NotAs[cpuset.Set](unknown.KindNotReported, "no cpuset.cpus.effective")
	for name, m := range map[string]proc.Match{
		"no group":     {Selector: pod, Missing: unknown.Because(unknown.KindNotReported, "no such pod")},
		"CPUs unknown": {Selector: pod, Group: noCPUs},
	} {
		if _, err := withinMatches([]proc.Match{m}); !errors.Is(err, usage.ErrUsage) {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
	if _, err := withinMatches([]proc.Match{{Selector: pod, Missing: unknown.Because(unknown.KindNotReported, "no such pod")}}); !errors.Is(err, proc.ErrNoPod) {
		t.Errorf("no group: %v, want proc.ErrNoPod", err)
	}
}

// groupTree is a unified host with a group whose CPUs are 2-3 and one
// without the cpuset controller.
func groupTree(t *testing.T) string {
	root := t.TempDir()
	for name, data := range map[string]string{
		"sys/fs/cgroup/cgroup.controllers":          "cpuset cpu memory\n",
		"sys/fs/cgroup/cgroup.procs":                "1\n",
		"sys/fs/cgroup/cpuset.cpus.effective":       "0-3\n",
		"sys/fs/cgroup/bench/cgroup.procs":          "",
		"sys/fs/cgroup/bench/cpuset.cpus.effective": "2-3\n",
		"sys/fs/cgroup/nocpuset/cgroup.procs":       "",
		"proc/1/comm":                               "systemd\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestWithinGroup: a --cgroup's CPUs; a group the host lacks, or whose
// CPUs are unknown, is the user's to fix, naming it.
func TestWithinGroup(t *testing.T) {
	fsys := hosttest.Open(t, groupTree(t))
	w, g, err := WithinGroup(fsys, "/bench")
	if err != nil || g == nil || g.Path != "/bench" || w.From != "cgroup /bench (cpuset.cpus.effective 2-3)" {
		t.Fatalf("WithinGroup(/bench) = %+v, %+v, %v", w, g, err)
	}
	for _, tt := range []struct{ group, want string }{
		{"/gone", "--cgroup: "},
		{"/nocpuset", "--cgroup /nocpuset: its CPUs are unknown: "},
	} {
		_, _, err := WithinGroup(fsys, tt.group)
		if !usage.Is(err) || !strings.HasPrefix(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.group) {
			t.Errorf("WithinGroup(%s) = %v, want a usage error starting %q and naming it", tt.group, err, tt.want)
		}
	}
}

// TestOpenJoin: a v2 group is joined by its folder (clone3), a v1 group
// by its cgroup.procs, opened for writing; opening writes nothing.
func TestOpenJoin(t *testing.T) {
	root := groupTree(t)
	fsys := hosttest.Open(t, root)
	before := hosttest.Files(t, root)
	_, g, err := WithinGroup(fsys, "/bench")
	if err != nil {
		t.Fatal(err)
	}
	j, release, err := OpenJoin(fsys, g)
	if err != nil || j.Dir == nil || j.Procs != nil || j.Path != "/bench" {
		t.Fatalf("OpenJoin(v2) = %+v, %v; want the group's folder", j, err)
	}
	release()
	v1 := &proc.Cgroup{Path: "/bench", Version: proc.CgroupVersionV1, Dir: g.Dir}
	j, release, err = OpenJoin(fsys, v1)
	if err != nil || j.Procs == nil || j.Dir != nil {
		t.Fatalf("OpenJoin(v1) = %+v, %v; want its cgroup.procs", j, err)
	}
	release()
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("OpenJoin changed the tree (-before +after):\n%s", diff)
	}
	gone := &proc.Cgroup{Path: "/gone", Version: proc.CgroupVersionV2, Dir: filepath.Join(root, "sys/fs/cgroup/gone")}
	if _, _, err := OpenJoin(fsys, gone); err == nil || !strings.HasPrefix(err.Error(), "--join /gone: ") {
		t.Errorf("OpenJoin(gone) = %v, want an error naming the group", err)
	}
}
