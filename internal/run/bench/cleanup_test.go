package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
)

// liveExec runs the command as bench does on this host (execHere), on
// the CPUs this test may use instead of the seed's 64, which this
// machine may not have.
func liveExec(t *testing.T) Exec {
	t.Helper()
	cpus, err := sched.Affinity(0)
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, p sched.Placement, args []string, s sched.Streams) (int, error) {
		return execHere(ctx, sched.Placement{CPUs: cpus}, args, s)
	}
}

// newMarker is a sleep duration no other process on the machine sleeps
// for; the test kills what it left, should it fail.
func newMarker(t *testing.T) string {
	m := fmt.Sprintf("%d.%06d", 5000+rand.IntN(1000), rand.IntN(1_000_000))
	t.Cleanup(func() {
		for _, pid := range hosttest.LiveWithArg(t, m) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return m
}

// benchLive runs one cell once on a copy of the seed with the command
// run for real, and checks the tree is back as it was.
func benchLive(t *testing.T, timeout time.Duration, command ...string) (*Result, time.Duration, error) {
	t.Helper()
	root := hosttest.Copy(t, "seed")
	before := hosttest.Files(t, root)
	cells, _ := ParseCells("local")
	p, err := NewParser(command, `result (\d+)`, "")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	res, err := Run(context.Background(), Request{Root: hosttest.Open(t, root), NIC: "eth0", Cells: cells, Repeat: 1, Command: command,
		Parser: p, Writer: tune.FileWriter{}, Exec: liveExec(t), Timeout: timeout})
	took := time.Since(t0)
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("tree not as it was (-before +after):\n%s", diff)
	}
	if res == nil || len(res.Unrestored) != 0 || len(res.StateFiles) != 1 {
		t.Fatalf("Run = %+v, %v: want one pin, restored", res, err)
	}
	return res, took, err
}

// TestRunLeavesNothing: a benchmark that starts 1,000 sleepers holding
// its output (and one in a session of its own) and exits leaves none of
// them running, and its run is the benchmark's own time, not the
// sleepers'.
func TestRunLeavesNothing(t *testing.T) {
	marker := newMarker(t)
	script := fmt.Sprintf(`i=0; while [ $i -lt 1000 ]; do sleep %[1]s & i=$((i+1)); done
setsid sleep %[1]s &
echo result 7`, marker)
	res, _, err := benchLive(t, 0, "sh", "-c", script)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	r := res.Cells[0].Runs[0]
	if r.Error != "" || r.Result == nil || r.Result.Value != 7 {
		t.Errorf("run %+v: want result 7", r)
	}
	if left := hosttest.LiveWithArg(t, marker); len(left) > 0 {
		t.Errorf("%d of the benchmark's sleepers still run after bench returned (PIDs %v...)", len(left), left[:min(len(left), 5)])
	}
	if r.Seconds > 30 {
		t.Errorf("the run took %.1fs: the sleepers holding its output were counted", r.Seconds)
	}
}

// TestRunTimeout: a benchmark that never exits is stopped at --timeout,
// with everything it started; the run fails saying so and the IRQs are
// put back.
func TestRunTimeout(t *testing.T) {
	marker := newMarker(t)
	res, took, err := benchLive(t, 300*time.Millisecond, "sh", "-c", "sleep "+marker+" & sleep "+marker+"; echo result 1")
	if !errors.Is(err, ErrRun) {
		t.Errorf("Run = %v, want ErrRun", err)
	}
	r := res.Cells[0].Runs[0]
	if !strings.Contains(r.Error, "timed out: still running after 300ms (--timeout)") || r.ExitCode != 128+15 {
		t.Errorf("run error %q, exit %d; want timed out after 300ms, exit 143", r.Error, r.ExitCode)
	}
	if !strings.Contains(res.Stopped, "timed out") {
		t.Errorf("stopped %q, want the timeout", res.Stopped)
	}
	if took > 10*time.Second {
		t.Errorf("Run took %v with a 300ms timeout", took)
	}
	if left := hosttest.LiveWithArg(t, marker); len(left) > 0 {
		t.Errorf("sleepers %v still run", left)
	}
}
