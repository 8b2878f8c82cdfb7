package sched

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestMain makes the test binary the trampoline when Start runs it as
// one (Placement.Join), and runs the tests with TMPDIR on a tmpfs
// (hosttest.Main) otherwise.
func TestMain(m *testing.M) {
	Trampoline()
	hosttest.Main(m)
}

// testGroup makes a control group under hierarchy (a mounted cgroup
// folder) for the test, writes files into it in order, and removes it
// when the test ends. It skips when the test may not.
func testGroup(t *testing.T, hierarchy string, files ...[2]string) (dir, path string) {
	t.Helper()
	hosttest.Writes(t, "control groups (a group made for the test, removed after)")
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup needs root")
	}
	if _, err := os.Stat(filepath.Join(hierarchy, "cgroup.procs")); err != nil {
		t.Skipf("no cgroup hierarchy at %s: %v", hierarchy, err)
	}
	name := fmt.Sprintf("irqnuma-sched-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	dir = filepath.Join(hierarchy, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var err error
		for range 50 { // the group empties once its last process is reaped
			if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("remove %s: %v", dir, err)
	})
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0); err != nil {
			t.Fatal(err)
		}
	}
	return dir, "/" + name
}

// v1Group is a v1 cpuset group holding cpus and memory node 0, and the
// Group that joins it.
func v1Group(t *testing.T, cpus cpuset.Set) (Group, string) {
	t.Helper()
	dir, path := testGroup(t, "/sys/fs/cgroup/cpuset", [2]string{"cpuset.mems", "0"}, [2]string{"cpuset.cpus", cpus.List()})
	procs, err := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { procs.Close() })
	return Group{Path: path, Procs: procs}, path
}

// v2Group is a group of the unified hierarchy (on /sys/fs/cgroup, or
// /sys/fs/cgroup/unified on a hybrid host, with no cpuset then), and the
// Group that clones into it.
func v2Group(t *testing.T) (Group, string) {
	t.Helper()
	hierarchy := "/sys/fs/cgroup"
	if _, err := os.Stat(hierarchy + "/cgroup.controllers"); err != nil {
		hierarchy = "/sys/fs/cgroup/unified"
	}
	dir, path := testGroup(t, hierarchy)
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return Group{Path: path, Dir: f}, path
}

// joined runs cat on /proc/self/status and /proc/self/cgroup with p and
// returns the child's Cpus_allowed_list and its cgroup lines.
func joined(t *testing.T, p Placement) (cpus cpuset.Set, cgroup string) {
	t.Helper()
	out := run(t, p, "sh", "-c", "cat /proc/self/status /proc/self/cgroup")
	cpus, err := cpuset.ParseList(hosttest.StatusField(t, out, "Cpus_allowed_list"))
	if err != nil {
		t.Fatal(err)
	}
	return cpus, out[strings.LastIndex(out, "\nMems_allowed_list"):]
}

func TestStartJoinedV1(t *testing.T) {
	all := allowed(t)
	g, path := v1Group(t, all)
	last := cpuset.New(func() int { m, _ := all.Max(); return m }())
	for _, give := range []cpuset.Set{last, all} {
		cpus, cg := joined(t, Placement{CPUs: give, MemNodes: cpuset.New(0), Join: &g})
		if !cpus.Equal(give) {
			t.Errorf("joined with CPUs %s: child Cpus_allowed_list = %s", give, cpus)
		}
		if !strings.Contains(cg, ":cpuset:"+path+"\n") {
			t.Errorf("joined with CPUs %s: child not in cpuset group %s:\n%s", give, path, cg)
		}
	}
}

func TestStartJoinedV2(t *testing.T) {
	g, path := v2Group(t)
	all := allowed(t)
	last := cpuset.New(func() int { m, _ := all.Max(); return m }())
	cpus, cg := joined(t, Placement{CPUs: last, Join: &g})
	if !cpus.Equal(last) {
		t.Errorf("child Cpus_allowed_list = %s, want %s", cpus, last)
	}
	if !strings.Contains(cg, "\n0::"+path+"\n") {
		t.Errorf("child not in group %s:\n%s", path, cg)
	}
}

// TestStartJoinedRefused: what the group does not allow is refused with
// the sentinel of why, and the command never runs.
func TestStartJoinedRefused(t *testing.T) {
	all := allowed(t)
	if all.Len() < 2 {
		t.Skip("needs two CPUs")
	}
	first := all.First(1)
	g, _ := v1Group(t, first)
	rest := all.Difference(first)
	tests := []struct {
		name string
		give Placement
		want error
	}{
		{"CPU outside the group", Placement{CPUs: rest, Join: &g}, ErrNotAllowed},
		{"CPUs partly outside", Placement{CPUs: all, Join: &g}, ErrNarrowed},
		{"node that does not exist", Placement{CPUs: first, MemNodes: cpuset.New(200), Join: &g}, ErrTrampoline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ran")
			cmd := exec.Command("touch", marker)
			err := start(cmd, tt.give)
			if !errors.Is(err, tt.want) || !errors.Is(err, ErrTrampoline) {
				t.Fatalf("start(CPUs %s) = %v, want %v inside the group", tt.give.CPUs, err, tt.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the command ran")
			}
		})
	}
	t.Run("command not executable", func(t *testing.T) {
		cmd := exec.Command(t.TempDir())
		err := start(cmd, Placement{CPUs: first, Join: &g})
		if !errors.Is(err, os.ErrPermission) || !errors.Is(err, ErrTrampoline) {
			t.Fatalf("start(a folder) = %v, want EACCES inside the group", err)
		}
	})
}

// TestStartJoinedBadGroup: a Group with neither or both handles, or a
// command with its own SysProcAttr, is refused before anything starts.
func TestStartJoinedBadGroup(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all := allowed(t)
	for _, g := range []Group{{Path: "/x"}, {Path: "/x", Dir: f, Procs: f}} {
		cmd := exec.Command("true")
		if err := start(cmd, Placement{CPUs: all, Join: &g}); err == nil || cmd.Process != nil {
			t.Errorf("Start with %+v = %v, want an error and no process", g, err)
		}
	}
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := start(cmd, Placement{CPUs: all, Join: &Group{Path: "/x", Dir: f}}); err == nil || cmd.Process != nil {
		t.Errorf("Start of a command with its own SysProcAttr = %v, want an error", err)
	}
}

// TestStatusRoundTrip: the trampoline's status keeps each sentinel.
func TestStatusRoundTrip(t *testing.T) {
	tests := []struct {
		give error
		want []error
	}{
		{fmt.Errorf("%w: asked for CPUs 1, got 0", ErrNarrowed), []error{ErrNarrowed}},
		{notAllowedError(), []error{ErrNotAllowed}},
		{fmt.Errorf("exec /bin/x: %w", syscall.ENOENT), []error{os.ErrNotExist}},
		{errors.New("join: write 0 to its cgroup.procs: no space left on device"), nil},
	}
	for _, tt := range tests {
		got := statusError(statusMessage(tt.give), "/bin/x", "/g")
		for _, w := range append(tt.want, ErrTrampoline) {
			if !errors.Is(got, w) {
				t.Errorf("statusError(statusMessage(%v)) = %v, want it to wrap %v", tt.give, got, w)
			}
		}
	}
	if got := statusError("garbage", "/bin/x", "/g"); !errors.Is(got, ErrTrampoline) || bytes.Contains([]byte(got.Error()), []byte("\n")) {
		t.Errorf("statusError(garbage) = %q", got)
	}
}

// notAllowedError is SetAffinity's error for a CPU no process may have.
func notAllowedError() error {
	return setAffinity(0, cpuset.New(cpuset.MaxID))
}

// FuzzStatusError: whatever the status pipe carries is one error that
// wraps ErrTrampoline, never a panic.
func FuzzStatusError(f *testing.F) {
	for _, s := range []string{
		statusMessage(fmt.Errorf("%w: asked for CPUs 1, got 0", ErrNarrowed)),
		statusMessage(notAllowedError()),
		statusMessage(fmt.Errorf("exec /bin/x: %w", syscall.EACCES)),
		"exec\n-1", "exec\n99999999999999999999", "narrowed", "", "\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		if err := statusError(msg, "/bin/x", "/g"); !errors.Is(err, ErrTrampoline) {
			t.Fatalf("statusError(%q) = %v, want it to wrap ErrTrampoline", msg, err)
		}
	})
}
