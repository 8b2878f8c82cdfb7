package main

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestBenchLeavesNothing: whatever a benchmark starts is gone when bench
// returns, and the IRQs are back: 1,000 sleepers left behind by a
// command that exits, a command that never exits stopped by --timeout,
// and a command with a child stopped by SIGINT, which reaches them both.
func TestBenchLeavesNothing(t *testing.T) {
	t.Parallel()
	nic, before := liveBench(t)
	bin := cliBinary(t)
	marker := fmt.Sprintf("%d.%06d", 6000+rand.IntN(1000), rand.IntN(1_000_000))
	t.Cleanup(func() {
		for _, pid := range hosttest.LiveWithArg(t, marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	sleep := "sleep " + marker
	tests := []struct {
		name    string
		flags   []string
		script  string
		sig     syscall.Signal
		want    int
		wantErr string // in stderr
		within  time.Duration
	}{
		{name: "1,000 sleepers left behind", script: `i=0; while [ $i -lt 1000 ]; do ` + sleep + ` & i=$((i+1)); done
setsid ` + sleep + ` &
echo result 7`, want: 0, within: 60 * time.Second},
		{name: "a command that never exits", flags: []string{"--timeout", "1s"}, script: sleep + " & " + sleep + "; echo result 1",
			want: cli.ExitError, wantErr: "timed out: still running after 1s (--timeout)", within: 20 * time.Second},
		{name: "SIGINT reaches the command's children", script: sleep + " & " + sleep + "; echo result 1",
			sig: syscall.SIGINT, want: 130, within: 20 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"bench", "--nic", nic, "--repeat", "1", "--placements", "local", "--regexp", `result (\d+)`}, tt.flags...)
			cmd := exec.Command(bin, append(args, "--", "sh", "-c", tt.script)...)
			said := &signalAt{cmd: cmd, sig: tt.sig, at: "run 1/1: local #1"}
			cmd.Stderr = said
			// A regression leaves processes holding bench's stderr: Wait
			// then returns this long after bench exits, and the test fails.
			cmd.WaitDelay = 5 * time.Second
			t0 := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			took := time.Since(t0)
			if code := cmd.ProcessState.ExitCode(); code != tt.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.want, said.text())
			}
			if !strings.Contains(said.text(), tt.wantErr) {
				t.Errorf("stderr does not say %q:\n%s", tt.wantErr, said.text())
			}
			if left := hosttest.LiveWithArg(t, marker); len(left) > 0 {
				t.Errorf("%d of the command's sleepers still run after bench exited (PIDs %v...)", len(left), left[:min(len(left), 5)])
			}
			if diff := cmp.Diff(before, liveAffinities(t)); diff != "" {
				t.Errorf("IRQ affinity not as it was (-before +after):\n%s\nstderr:\n%s", diff, said.text())
			}
			if took > tt.within {
				t.Errorf("bench took %v, want under %v", took, tt.within)
			}
		})
	}
}

// signalAt collects a command's stderr and sends it sig 300 ms after
// the line starting with at, when sig is not 0.
type signalAt struct {
	cmd  *exec.Cmd
	sig  syscall.Signal
	at   string
	mu   sync.Mutex
	b    strings.Builder
	sent bool
}

func (s *signalAt) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Write(p)
	if s.sig != 0 && !s.sent && strings.Contains("\n"+s.b.String(), "\n"+s.at) {
		s.sent = true
		time.AfterFunc(300*time.Millisecond, func() { s.cmd.Process.Signal(s.sig) }) // the command has started its child
	}
	return len(p), nil
}

func (s *signalAt) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
