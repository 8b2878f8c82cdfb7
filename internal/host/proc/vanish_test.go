package proc

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"

	"github.com/google/go-cmp/cmp/cmpopts"
)

// putTree writes files (path relative to root: content) under root.
func putTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o444); err != nil {
			t.Fatal(err)
		}
	}
}

func statusText(comm, state string) string {
	return "Name:\t" + comm + "\nState:\t" + state + "\nCpus_allowed_list:\t0-3\nMems_allowed_list:\t0\n"
}

func statText(tid int, comm, state string, cpu int) string {
	return fmt.Sprintf("%d (%s) %s 1 %d %d 0 -1 4194560 221 0 0 0 90 6 0 0 20 0 2 0 2869 "+
		"12345678 340 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 %d 0 0 0 0 0 0 0 0 0 0 0 0 0\n", tid, comm, state, tid, tid, cpu)
}

// task writes one thread of process pid.
func task(files map[string]string, pid, tid int, comm, state string, cpu int) {
	dir := fmt.Sprintf("proc/%d/task/%d/", pid, tid)
	files[dir+"stat"] = statText(tid, comm, state, cpu)
	files[dir+"status"] = statusText(comm, state)
}

// TestSelectPresentZombies: of the processes a selection names, one
// that has exited and is a zombie is left out, which its Match says, and
// a zombie thread of a live process is left out of its threads. Neither
// is an error. A folder that lacks a process's files while it stays (a
// snapshot that captured only its comm) is still an error naming them.
func TestSelectPresentZombies(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		// 4244 is a zombie; 4245's main thread exited, not its other one.
		"proc/4244/comm": "iperf3\n", "proc/4244/status": statusText("iperf3", "Z (zombie)"),
		"proc/4245/comm": "iperf3\n", "proc/4245/status": statusText("iperf3", "Z (zombie)"),
		"proc/4247/comm": "netperf\n",
	}
	task(files, 4244, 4244, "iperf3", "Z", 3)
	task(files, 4245, 4245, "iperf3", "Z", 1)
	task(files, 4245, 4246, "iperf3", "R", 2)
	putTree(t, root, files)

	procs, matches, err := SelectPresent(hosttest.Open(t, root), Selection{PIDs: []int{4244}, Comms: []string{"iperf3"}})
	if err != nil {
		t.Fatalf("SelectPresent: %v", err)
	}
	var got []string
	for _, p := range procs {
		for _, th := range p.Threads {
			got = append(got, fmt.Sprintf("%d/%d %s on %s", p.PID, th.TID, th.State, th.LastCPU))
		}
	}
	if diff := cmpDiff([]string{"4245/4246 R on 2"}, got); diff != "" {
		t.Errorf("processes/threads read (-want +got):\n%s", diff)
	}
	want := []Match{{Selector: PIDSelector(4244), Exited: []int{4244}}, {Selector: CommSelector("iperf3"), PIDs: []int{4245}, Exited: []int{4244}}}
	if diff := cmpDiff(want, matches, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("matches (-want +got):\n%s", diff)
	}
	if err := matches[0].Err(); !errors.Is(err, ErrZombie) || !errors.Is(err, ErrNoProcess) || !strings.Contains(err.Error(), "--pid 4244") {
		t.Errorf("the zombie's Match.Err() = %v, want ErrZombie (an ErrNoProcess) naming --pid 4244", err)
	}
	if err := matches[1].Err(); err != nil {
		t.Errorf("Match.Err() = %v for a selector that matched", err)
	}
	if _, err := Read(hosttest.Open(t, root), 4244); !errors.Is(err, ErrZombie) {
		t.Errorf("Read(4244) = %v, want ErrZombie", err)
	}
	// A folder that stays without its status is no exit: the tree holds
	// the process only in part, and its match says so.
	_, pm, err := SelectPresent(hosttest.Open(t, root), Selection{Comms: []string{"netperf"}})
	if err != nil || len(pm) != 1 || len(pm[0].Partial) != 1 || pm[0].Partial[0] != 4247 {
		t.Errorf("SelectPresent of a process folder with only its comm = %+v, %v; want its match to hold it as Partial", pm, err)
	} else if err := pm[0].Err(); !errors.Is(err, ErrPartial) || errors.Is(err, ErrNoProcess) || !strings.Contains(err.Error(), "process 4247") {
		t.Errorf("its Match.Err() = %v, want ErrPartial naming process 4247", err)
	}
	if _, err := ReadThreadStats(hosttest.Open(t, root), 4244); !errors.Is(err, ErrZombie) {
		t.Errorf("ReadThreadStats of a zombie = %v, want ErrZombie", err)
	}
	if ts, err := ReadThreadStats(hosttest.Open(t, root), 4245); err != nil || len(ts) != 1 || ts[0].TID != 4246 {
		t.Errorf("ReadThreadStats(4245) = %+v, %v; want its one live thread, 4246", ts, err)
	}
}

// TestReadLiveZombie: a child that has exited and is not reaped yet is
// ErrZombie to Read and ReadThreadStats, not a process that runs.
func TestReadLiveZombie(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		if st, err := parseTaskStat("stat", b); err == nil && st.state == "Z" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("PID %d is not a zombie after 10 s: %s", pid, b)
		}
	}
	if p, err := Read(hosttest.Open(t, "/"), pid); !errors.Is(err, ErrZombie) {
		t.Errorf("Read of zombie %d = %+v, %v; want ErrZombie", pid, p, err)
	}
	if ts, err := ReadThreadStats(hosttest.Open(t, "/"), pid); !errors.Is(err, ErrZombie) {
		t.Errorf("ReadThreadStats of zombie %d = %+v, %v; want ErrZombie", pid, ts, err)
	}
	_, matches, err := SelectPresent(hosttest.Open(t, "/"), Selection{PIDs: []int{pid}})
	if err != nil || len(matches) != 1 || !slices.Equal(matches[0].Exited, []int{pid}) || !errors.Is(matches[0].Err(), ErrZombie) {
		t.Errorf("SelectPresent(--pid %d) = %+v, %v; want it exited", pid, matches, err)
	}
}

// TestSelectPresentChurn: --comm of a name whose processes come and go
// all the time (each exits at once) never fails: a process that exits
// between the listing and the reading (ENOENT on its task/, ESRCH on its
// numa_maps or a thread's stat) is left out.
func TestSelectPresentChurn(t *testing.T) {
	self, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("vanish%06d", rand.IntN(1_000_000)) // the comm: 12 bytes
	bin := filepath.Join(t.TempDir(), name)
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err == nil {
		_, err = io.Copy(dst, src)
		err = errors.Join(err, dst.Close())
	}
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = exec.Command(bin).Run()
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	found := 0
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		procs, _, err := SelectPresent(hosttest.Open(t, "/"), Selection{Comms: []string{name}})
		if err != nil {
			t.Fatalf("SelectPresent(--comm %s) while its processes come and go: %v", name, err)
		}
		found += len(procs)
	}
	t.Logf("%d processes read whole while they came and went", found)
}
