package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// liveGroup makes the group dir, moves a new child process into it and
// returns the child's PID; the child is killed and the group removed
// when the test ends.
func liveGroup(t *testing.T, dir string, setup map[string]string) int {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("make a cgroup: %v", err)
	}
	t.Cleanup(func() {
		var err error
		for range 50 { // the group is busy until the killed child is gone
			if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("remove %s: %v", dir, err)
	})
	for _, name := range []string{"cpuset.mems", "cpuset.cpus"} { // mems first: v1 takes no task without both
		if v, ok := setup[name]; ok {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0); err != nil {
				t.Fatalf("write %s: %v", name, err)
			}
		}
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		t.Fatalf("move %d into %s: %v", pid, dir, err)
	}
	return pid
}

// TestCgroupLive: on this machine, a group made for the test (v1 cpuset
// with one CPU where the host has v1 cpusets, else v2) with a child in
// it is read as the kernel shows it and selects exactly that child.
func TestCgroupLive(t *testing.T) {
	hosttest.Writes(t, "control groups (a group made for the test, removed after)")
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup needs root")
	}
	fsys := hosttest.Open(t, "/")
	name := fmt.Sprintf("irqnuma-test-%d", os.Getpid())
	online, err := fsys.List("/sys/devices/system/cpu/online")
	if err != nil {
		t.Fatal(err)
	}
	last, _ := online.Max()
	var dir string
	var want cpuset.Set
	v2 := fileExists(fsys, "/sys/fs/cgroup/cgroup.controllers")
	switch {
	case v2:
		dir = filepath.Join("/sys/fs/cgroup", name)
	case fileExists(fsys, "/sys/fs/cgroup/cpuset/cgroup.procs"):
		dir, want = filepath.Join("/sys/fs/cgroup/cpuset", name), cpuset.New(last)
	default:
		t.Skip("no cgroup v2 hierarchy and no v1 cpuset one on /sys/fs/cgroup")
	}
	setup := map[string]string{"cpuset.mems": "0", "cpuset.cpus": strconv.Itoa(last)}
	if v2 {
		setup = nil // the test enables no controller: the machine stays as it was
	}
	pid := liveGroup(t, dir, setup)
	g, err := ReadCgroup(fsys, "/"+name)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.PIDs, []int{pid}) || g.Path != "/"+name {
		t.Errorf("ReadCgroup(/%s) = %+v, want its one process %d", name, g, pid)
	}
	if !v2 && (!g.CPUs.Known() || !g.CPUs.Or(cpuset.Set{}).Equal(want) || g.Version != CgroupVersionV1 || !g.Mems.Or(cpuset.Set{}).Equal(cpuset.New(0))) {
		t.Errorf("ReadCgroup(/%s) = CPUs %v (known %v) mems %v %s, want %v on node 0, v1", name, g.CPUs, g.CPUs.Known(), g.Mems, g.Version, want)
	}
	if v2 && g.CPUs.Known() != fileExists(fsys, filepath.Join(dir, "cpuset.cpus.effective")) {
		t.Errorf("ReadCgroup(/%s): CPUs known %v, the file says otherwise", name, g.CPUs.Known())
	}
	if p, err := cgroupOf(fsys, pid); err != nil || p != "/"+name {
		t.Errorf("cgroupOf(%d) = %q, %v, want /%s", pid, p, err, name)
	}
	procs, matches, err := SelectPresent(fsys, Selection{Cgroups: []string{dir}})
	if err != nil || len(procs) != 1 || procs[0].PID != pid || matches[0].Group == nil {
		t.Fatalf("SelectPresent(--cgroup %s) = %v, %+v, %v", dir, procs, matches, err)
	}
	if !v2 && !procs[0].Allowed.Equal(want) {
		t.Errorf("process %d may run on %v, want the group's %v", pid, procs[0].Allowed, want)
	}
}

// TestCgroupHybridLive: on a hybrid host (v1 controllers, the unified
// hierarchy on /sys/fs/cgroup/unified, as this project's VM has), a v2
// group made there is read as v2, its CPUs unknown with why (the cpuset
// controller is on v1), and selects its one child.
func TestCgroupHybridLive(t *testing.T) {
	hosttest.Writes(t, "control groups (a group made for the test, removed after)")
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup needs root")
	}
	fsys := hosttest.Open(t, "/")
	if !fileExists(fsys, "/sys/fs/cgroup/unified/cgroup.controllers") {
		t.Skip("not a hybrid host: no /sys/fs/cgroup/unified")
	}
	name := fmt.Sprintf("irqnuma-test-v2-%d", os.Getpid())
	pid := liveGroup(t, filepath.Join("/sys/fs/cgroup/unified", name), nil)
	g, err := ReadCgroup(fsys, "/"+name)
	if err != nil {
		t.Fatal(err)
	}
	if g.Version != CgroupVersionV2 || g.CPUs.Known() || g.CPUs.Why().Detail == "" || !slices.Equal(g.PIDs, []int{pid}) {
		t.Errorf("ReadCgroup(/%s) = %+v, want v2 with process %d, CPUs unknown saying why", name, g, pid)
	}
}
