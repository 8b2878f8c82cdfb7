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

	"github.com/irqnuma/irqnuma/internal/hosttest"
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
	name := fmt.Sprintf("irqnuma-exec-test-%d", os.Getpid())
	var dir string
	switch {
	case fileHas("/sys/fs/cgroup/cgroup.subtree_control", "cpuset"):
		dir = filepath.Join("/sys/fs/cgroup", name)
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
	for _, f := range []string{"cpuset.mems", "cpuset.cpus"} {
		v := "0"
		if f == "cpuset.cpus" {
			v = strconv.Itoa(last)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, code := runCLI(t, "exec", "--cgroup", "/"+name, "--", "sh", "-c", "cat /proc/self/status /proc/self/cgroup")
	if code != 0 {
		t.Fatalf("exec --cgroup: exit %d: %s", code, stderr)
	}
	if got := statusField(t, stdout, "Cpus_allowed_list"); got != strconv.Itoa(last) {
		t.Errorf("child Cpus_allowed_list = %s, want the group's %d", got, last)
	}
	if strings.Contains(stdout, name) {
		t.Errorf("the child joined the group:\n%s", stdout)
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
