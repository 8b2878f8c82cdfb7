package sched

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// sleepMarker is a sleep duration no other process on the machine
// sleeps for, to find the sleepers a test started.
func sleepMarker() string {
	return fmt.Sprintf("%d.%06d", 4000+rand.IntN(1000), rand.IntN(1_000_000))
}

// killMarked ends what a failed test left behind.
func killMarked(t *testing.T, marker string) {
	for _, pid := range hosttest.LiveWithArg(t, marker) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// TestRunGroupLeavesNothing: a command that starts 1,000 sleepers in its
// group, one in a session of its own and one that is killed along with
// the pipe it holds, then exits, leaves none of them running, and its
// run ends when it exits, not when the sleepers would have.
func TestRunGroupLeavesNothing(t *testing.T) {
	marker := sleepMarker()
	t.Cleanup(func() { killMarked(t, marker) })
	script := fmt.Sprintf(`i=0; while [ $i -lt 1000 ]; do sleep %[1]s & i=$((i+1)); done
setsid sleep %[1]s &
(env -u IRQNUMA_RUN setsid sleep %[1]s >/dev/null 2>&1 </dev/null &) 
echo result 42`, marker)
	var out bytes.Buffer
	t0 := time.Now()
	code, err := RunGroup(context.Background(), Placement{CPUs: allowed(t)}, []string{"sh", "-c", script},
		Streams{Stdout: &out, Stderr: &out})
	took := time.Since(t0)
	if err != nil || code != 0 {
		t.Fatalf("RunGroup = %d, %v; output %q", code, err, out.String())
	}
	if out.String() != "result 42\n" {
		t.Errorf("output %q, want %q", out.String(), "result 42\n")
	}
	// The one that left the group and cleared its environment is the
	// documented limit: it is the only one allowed to be left.
	left := hosttest.LiveWithArg(t, marker)
	if len(left) > 1 {
		t.Errorf("%d sleepers still run after RunGroup returned, want at most the one that hid (PIDs %v...)", len(left), left[:min(len(left), 5)])
	}
	if len(left) == 1 {
		env, _ := os.ReadFile("/proc/" + strconv.Itoa(left[0]) + "/environ")
		if bytes.Contains(env, []byte(TokenEnv+"=")) {
			t.Errorf("PID %d carries %s but was left running", left[0], TokenEnv)
		}
	}
	if took > 30*time.Second {
		t.Errorf("RunGroup took %v: the sleepers' pipes lengthened the run", took)
	}
}

// TestRunGroupReturnsAtExit: a process left holding the command's
// output does not lengthen the run: RunGroup returns when the command
// exits, not when the holder would close the pipe.
func TestRunGroupReturnsAtExit(t *testing.T) {
	marker := sleepMarker()
	t.Cleanup(func() { killMarked(t, marker) })
	var out bytes.Buffer
	t0 := time.Now()
	code, err := RunGroup(context.Background(), Placement{CPUs: allowed(t)},
		[]string{"sh", "-c", "sleep " + marker + " & setsid sleep " + marker + " & echo done"}, Streams{Stdout: &out, Stderr: &out})
	if took := time.Since(t0); took > 3*time.Second {
		t.Errorf("RunGroup took %v with processes holding its stdout, want the command's own time", took)
	}
	if err != nil || code != 0 || out.String() != "done\n" {
		t.Errorf("RunGroup = %d, %v, output %q; want 0, nil, %q", code, err, out.String(), "done\n")
	}
	if left := hosttest.LiveWithArg(t, marker); len(left) > 0 {
		t.Errorf("sleepers %v still run", left)
	}
}

// TestRunGroupStops: when ctx is done the whole group gets SIGTERM, and
// SIGKILL once it has ignored that for the grace; nothing is left.
func TestRunGroupStops(t *testing.T) {
	old := killGrace
	killGrace = 300 * time.Millisecond
	defer func() { killGrace = old }()
	marker := sleepMarker()
	t.Cleanup(func() { killMarked(t, marker) })
	tests := []struct {
		name   string
		script string
		want   int
	}{
		{"exits on SIGTERM", "exec sleep " + marker, 128 + 15},
		{"with a child", "sleep " + marker + " & exec sleep " + marker, 128 + 15},
		{"ignores SIGTERM, its child too", `trap "" TERM; sleep ` + marker + ` & sleep ` + marker + `; echo never`, 128 + 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			var out bytes.Buffer
			t0 := time.Now()
			code, err := RunGroup(ctx, Placement{CPUs: allowed(t)}, []string{"sh", "-c", tt.script}, Streams{Stdout: &out, Stderr: &out})
			if err != nil || code != tt.want {
				t.Errorf("RunGroup = %d, %v; want %d (output %q)", code, err, tt.want, out.String())
			}
			if took := time.Since(t0); took > 3*time.Second {
				t.Errorf("took %v to stop, want well under the command's", took)
			}
			if strings.Contains(out.String(), "never") {
				t.Errorf("the script carried on after SIGKILL: %q", out.String())
			}
			if left := hosttest.LiveWithArg(t, marker); len(left) > 0 {
				t.Errorf("sleepers %v still run", left)
			}
		})
	}
}
