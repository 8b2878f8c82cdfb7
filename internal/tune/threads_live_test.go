package tune

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// liveThreaded turns threaded NAPI on for nic on the live host (its
// napi/NIC-N threads start) and back to what it was when the test ends.
// It skips without root or without the file.
func liveThreaded(t *testing.T, nic string) {
	t.Helper()
	hosttest.Writes(t, nic+"'s threaded NAPI (/sys/class/net/"+nic+"/threaded)")
	if os.Geteuid() != 0 {
		t.Skip("not root: the test writes /sys/class/net/" + nic + "/threaded")
	}
	p := filepath.Join("/sys/class/net", nic, "threaded")
	old, err := os.ReadFile(p)
	if err != nil {
		t.Skipf("no threaded NAPI switch: %v", err)
	}
	if err := os.WriteFile(p, []byte("1\n"), 0o644); err != nil {
		t.Skipf("threaded NAPI cannot be turned on: %v", err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(p, old, 0o644); err != nil {
			t.Errorf("put %s back to %q: %v", p, strings.TrimSpace(string(old)), err)
		}
	})
}

// statusCPUs reads Cpus_allowed_list of a task from /proc.
func statusCPUs(t *testing.T, pid int) cpuset.Set {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			s, err := cpuset.ParseList(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	t.Fatalf("pid %d: no Cpus_allowed_list", pid)
	return cpuset.Set{}
}

// TestLiveThreads moves a NAPI kernel thread of this machine with
// LiveThreads and back, checking each step in /proc/PID/status.
func TestLiveThreads(t *testing.T) {
	hosttest.Live(t)
	liveThreaded(t, "eth0")
	fsys := hosttest.Open(t, "/")
	pids, err := proc.FindByCommPrefix(fsys, "napi/eth0-")
	if err != nil || len(pids) == 0 {
		t.Fatalf("no napi/eth0-N thread with threaded NAPI on: %v", err)
	}
	pid := pids[0]
	var lt LiveThreads
	before, err := lt.Get(pid)
	if err != nil {
		t.Fatal(err)
	}
	if want := statusCPUs(t, pid); !before.Equal(want) {
		t.Errorf("Get(%d) = %s, /proc says %s", pid, before, want)
	}
	last, _ := before.Max()
	to := cpuset.New(last)
	if err := lt.Set(pid, to); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lt.Set(pid, before) })
	if got := statusCPUs(t, pid); !got.Equal(to) {
		t.Errorf("after Set(%d, %s) /proc says %s", pid, to, got)
	}
	if err := lt.Set(pid, before); err != nil {
		t.Fatal(err)
	}
	if got := statusCPUs(t, pid); !got.Equal(before) {
		t.Errorf("after Set back /proc says %s, want %s", got, before)
	}
	if err := lt.Set(pid, cpuset.New(cpuset.MaxID)); err == nil {
		t.Errorf("Set to CPU %d: no error", cpuset.MaxID)
	}
}
