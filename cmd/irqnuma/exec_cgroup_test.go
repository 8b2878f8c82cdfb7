package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// TestExecCgroupLive: exec --cgroup runs the command on the CPUs of a
// cpuset group made for the test (one CPU), and leaves it out of the
// group itself. The group is removed when the test ends.
func TestExecCgroupLive(t *testing.T) {
	hosttest.Live(t)
	skipUnlessLive(t)
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup needs root")
	}
	last, _ := allowedCPUs(t).Max()
	name, _ := cpusetGroup(t, strconv.Itoa(last))
	stdout, stderr, code := runCLI(t, "exec", "--cgroup", "/"+name, "--", "sh", "-c", "cat /proc/self/status /proc/self/cgroup")
	if code != 0 {
		t.Fatalf("exec --cgroup: exit %d: %s", code, stderr)
	}
	if got := hosttest.StatusField(t, stdout, "Cpus_allowed_list"); got != strconv.Itoa(last) {
		t.Errorf("child Cpus_allowed_list = %s, want the group's %d", got, last)
	}
	if strings.Contains(stdout, name) {
		t.Errorf("the child joined the group:\n%s", stdout)
	}
}

// cpusetGroup makes a cpuset group for the test holding cpus and memory
// node 0 (cgroup v2 where the root's subtree_control has cpuset, else the
// v1 cpuset hierarchy), removed when the test ends; it returns its name
// and its version. It skips where there is no cpuset to use.
func cpusetGroup(t *testing.T, cpus string) (name string, v2 bool) {
	t.Helper()
	hosttest.Writes(t, "control groups (a cpuset group made for the test, removed after)")
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup needs root")
	}
	name = fmt.Sprintf("irqnuma-exec-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	var dir string
	switch {
	case fileHas("/sys/fs/cgroup/cgroup.subtree_control", "cpuset"):
		dir, v2 = filepath.Join("/sys/fs/cgroup", name), true
	case exists("/sys/fs/cgroup/cpuset/cgroup.procs"):
		dir = filepath.Join("/sys/fs/cgroup/cpuset", name)
	default:
		t.Skip("no cpuset controller this test may use without enabling one (v2 root's subtree_control lacks cpuset, no v1 cpuset)")
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var err error
		for range 50 {
			if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("remove %s: %v", dir, err)
	})
	for _, f := range [][2]string{{"cpuset.mems", "0"}, {"cpuset.cpus", cpus}} {
		if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0); err != nil {
			t.Fatal(err)
		}
	}
	return name, v2
}

// TestExecJoinLive: exec --cgroup --join starts the command inside the
// group, on a strict subset of the group's CPUs (--count 1) and with
// its memory bound (--membind).
func TestExecJoinLive(t *testing.T) {
	hosttest.Live(t)
	skipUnlessLive(t)
	all := allowedCPUs(t)
	if all.Len() < 2 {
		t.Skip("needs two CPUs: the pick must be a strict subset of the group's")
	}
	name, v2 := cpusetGroup(t, all.List())
	stdout, stderr, code := runCLI(t, "exec", "--cgroup", "/"+name, "--join", "--count", "1", "--membind", "--",
		"sh", "-c", "cat /proc/self/status /proc/self/cgroup /proc/self/numa_maps")
	if code != 0 {
		t.Fatalf("exec --cgroup --join: exit %d: %s", code, stderr)
	}
	first := all.First(1)
	if got := hosttest.StatusField(t, stdout, "Cpus_allowed_list"); got != first.List() {
		t.Errorf("child Cpus_allowed_list = %s, want %s (--count 1 of the group's %s)", got, first, all)
	}
	want := ":cpuset:/" + name + "\n"
	if v2 {
		want = "0::/" + name + "\n"
	}
	if !strings.Contains(stdout, want) {
		t.Errorf("child not in the group (want a line ending %q):\n%s", want, stdout)
	}
	if !strings.Contains(stdout, " bind:0 ") {
		t.Errorf("child memory not bound to node 0 (numa_maps):\n%s", stdout)
	}
	if !strings.Contains(stderr, ", inside cgroup /"+name+"\n") {
		t.Errorf("stderr = %q, want the running-on line to name the group", stderr)
	}
}

// TestExecJoinUsage: --join without a group is the user's to fix.
func TestExecJoinUsage(t *testing.T) {
	skipUnlessLive(t)
	_, stderr, code := runCLI(t, "exec", "--cpus", "0", "--join", "--", "true")
	if code != 2 || !strings.Contains(stderr, "--join needs --cgroup") {
		t.Errorf("exec --join without --cgroup: exit %d, stderr %q; want 2 and why", code, stderr)
	}
}

// TestExecOutsideGroup: CPUs the kernel will not give irqnuma (as a
// partition root's, outside the group) are one error naming the group
// and --join, not a bare EINVAL. CPU MaxID is one no cpuset allows.
func TestExecOutsideGroup(t *testing.T) {
	skipUnlessLive(t)
	var out, errb strings.Builder
	a := &app{sys: hostSys(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	g := &proc.Cgroup{Path: "/lab", Version: proc.CgroupVersionV2, Partition: unknown.Of(proc.PartitionRoot), Exclusive: true}
	err := a.execOn(sched.Placement{CPUs: cpuset.New(cpuset.MaxID)}, "CPU x", []string{"true"}, g)
	if !errors.Is(err, sched.ErrNotAllowed) || !errors.Is(err, usage.ErrUsage) {
		t.Fatalf("execOn(CPU %d) = %v, want ErrNotAllowed as a usage error", cpuset.MaxID, err)
	}
	for _, w := range []string{"exec --cgroup /lab:", "partition root", "--join"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	// Without a group the kernel's refusal is the command's start error
	// (cli.Exit's, which keeps the text only).
	err = a.execOn(sched.Placement{CPUs: cpuset.New(cpuset.MaxID)}, "CPU x", []string{"true"}, nil)
	if err == nil || errors.Is(err, usage.ErrUsage) || strings.Contains(err.Error(), "--join") {
		t.Errorf("execOn without a group = %v, want the start error, no usage error", err)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func fileHas(p, word string) bool {
	b, err := os.ReadFile(p)
	return err == nil && strings.Contains(" "+strings.TrimSpace(string(b))+" ", " "+word+" ")
}
