package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
)

// skipUnlessLive skips tests that start processes on this host.
func skipUnlessLive(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if _, err := os.Stat("/sys/devices/system/cpu/online"); err != nil {
		t.Skipf("no /sys: %v", err)
	}
}

// allowedCPUs is where this test may run.
func allowedCPUs(t *testing.T) cpuset.Set {
	t.Helper()
	s, err := sched.Affinity(0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExecAffinity(t *testing.T) {
	t.Parallel()
	skipUnlessLive(t)
	all := allowedCPUs(t)
	last, _ := all.Max()
	one := cpuset.New(last)
	stdout, stderr, code := runCLI(t, "exec", "--cpus", one.List(), "--", "cat", "/proc/self/status")
	if code != 0 {
		t.Fatalf("exec: exit %d: %s", code, stderr)
	}
	if got := hosttest.StatusField(t, stdout, "Cpus_allowed_list"); got != one.List() {
		t.Errorf("child Cpus_allowed_list = %s, want %s", got, one)
	}
	if !strings.HasPrefix(stderr, "irqnuma: running on CPU "+one.List()+" (") || strings.Count(stderr, "running on") != 1 {
		t.Errorf("stderr = %q, want one \"irqnuma: running on CPU %s (...)\" line", stderr, one)
	}
	// A root naming / by a link is this host: exec runs there too.
	stdout, stderr, code = runCLI(t, "--root", slashLink(t), "exec", "--cpus", one.List(), "--", "cat", "/proc/self/status")
	if code != 0 || hosttest.StatusField(t, stdout, "Cpus_allowed_list") != one.List() {
		t.Errorf("exec --root (a link to /): exit %d, stderr %q", code, stderr)
	}
}

// TestExecNIC runs through exec what mask picks on this host, and checks
// the child got exactly that.
func TestExecNIC(t *testing.T) {
	t.Parallel()
	skipUnlessLive(t)
	want, stderr, code := runCLI(t, "mask", "--nic", "eth0")
	if code != 0 {
		t.Skipf("mask --nic eth0 on this host: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "exec", "--nic", "eth0", "--", "cat", "/proc/self/status")
	if code != 0 {
		t.Fatalf("exec: exit %d: %s", code, stderr)
	}
	if got := hosttest.StatusField(t, stdout, "Cpus_allowed_list"); got != strings.TrimSpace(want) {
		t.Errorf("child Cpus_allowed_list = %s, want %s (mask --nic eth0)", got, strings.TrimSpace(want))
	}
}

// TestExecMembind checks the child's memory policy. Mems_allowed_list is
// the cpuset's and set_mempolicy leaves it alone, so the policy itself is
// read from numa_maps, where every mapping of a task with an MPOL_BIND
// policy shows "bind:<nodes>".
func TestExecMembind(t *testing.T) {
	t.Parallel()
	skipUnlessLive(t)
	if _, err := os.Stat("/proc/self/numa_maps"); err != nil {
		t.Skipf("no numa_maps (kernel without NUMA): %v", err)
	}
	cpu := allowedCPUs(t).First(1)
	stdout, stderr, code := runCLI(t, "exec", "--cpus", cpu.List(), "--membind", "--", "cat", "/proc/self/status")
	if code != 0 {
		t.Fatalf("exec --membind: exit %d: %s", code, stderr)
	}
	h, err := topology.Read(hosttest.Open(t, "/"))
	if err != nil {
		t.Fatal(err)
	}
	id, _ := cpu.Min()
	if !h.NodeOf(id).Known() {
		t.Skipf("node of CPU %d unknown", id)
	}
	node := h.NodeOf(id).String()
	if want := "irqnuma: running on CPU " + cpu.List() + " (node " + node + ")\n"; stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
	if got := hosttest.StatusField(t, stdout, "Mems_allowed_list"); !mustParseList(t, node).IsSubsetOf(mustParseList(t, got)) {
		t.Errorf("Mems_allowed_list = %s, does not hold node %s", got, node)
	}
	stdout, stderr, code = runCLI(t, "exec", "--cpus", cpu.List(), "--membind", "--", "cat", "/proc/self/numa_maps")
	if code != 0 {
		t.Fatalf("exec --membind: exit %d: %s", code, stderr)
	}
	for l := range strings.Lines(stdout) {
		if f := strings.Fields(l); len(f) < 2 || f[1] != "bind:"+node {
			t.Errorf("numa_maps line %q: want policy bind:%s", strings.TrimSpace(l), node)
		}
	}
	stdout, _, _ = runCLI(t, "exec", "--cpus", cpu.List(), "--", "cat", "/proc/self/numa_maps")
	if strings.Contains(stdout, "bind:") {
		t.Errorf("without --membind the child has a bind policy:\n%s", stdout)
	}
}

func TestExecStatus(t *testing.T) {
	t.Parallel()
	skipUnlessLive(t)
	cpu := allowedCPUs(t).First(1).List()
	notExec := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		give       []string
		wantCode   int
		wantStderr string
	}{
		{"success", []string{"true"}, 0, "irqnuma: running on CPU " + cpu},
		{"exit status", []string{"sh", "-c", "exit 3"}, 3, "irqnuma: running on"},
		{"killed by SIGTERM", []string{"sh", "-c", "kill -TERM $$"}, 128 + 15, "irqnuma: running on"},
		{"killed by SIGKILL", []string{"sh", "-c", "kill -KILL $$"}, 128 + 9, "irqnuma: running on"},
		{"not found", []string{"no-such-command-irqnuma"}, 127, `irqnuma: exec: "no-such-command-irqnuma": executable file not found in $PATH`},
		{"not executable", []string{notExec}, 126, "permission denied"},
		{"flags after the command are its own", []string{"sh", "-c", "exit 4", "--cpus"}, 4, "irqnuma: running on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"exec", "--cpus", cpu, "--"}, tt.give...)
			_, stderr, code := runCLI(t, args...)
			if code != tt.wantCode || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("irqnuma %s: exit %d, stderr %q; want exit %d, stderr with %q", strings.Join(args, " "), code, stderr, tt.wantCode, tt.wantStderr)
			}
		})
	}
}

func TestExecUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		give       []string
		wantStderr string
	}{
		{"root", []string{"--root", hosttest.Root("seed"), "exec", "--nic", "eth0", "--", "true"}, "exec runs the command on this host, so it reads / only"},
		{"no command", []string{"exec", "--cpus", "0"}, "exec needs a COMMAND to run, after --"},
		{"no selection", []string{"exec", "--", "true"}, "exactly one of --nic, --node or --cpus"},
		{"bad list", []string{"exec", "--cpus", "0-", "--", "true"}, `--cpus: cpu list "0-"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tt.give...)
			if code != cli.ExitUsage || stdout != "" || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("irqnuma %s: exit %d, stdout %q, stderr %q; want exit 2, stderr with %q", strings.Join(tt.give, " "), code, stdout, stderr, tt.wantStderr)
			}
		})
	}
}

func TestExecStdin(t *testing.T) {
	t.Parallel()
	skipUnlessLive(t)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"exec", "--cpus", allowedCPUs(t).First(1).List(), "--", "tr", "a-z", "A-Z"},
		strings.NewReader("through irqnuma\n"), &out, &errb)
	if code != 0 || out.String() != "THROUGH IRQNUMA\n" {
		t.Errorf("exec tr: exit %d, stdout %q, stderr %q; want THROUGH IRQNUMA", code, out.String(), errb.String())
	}
}

// TestExecForwardsSignals sends each signal to an irqnuma exec running a
// shell that traps it: the shell must see it and exit 7. The signal goes
// to an irqnuma process of its own, once the shell says it has set its
// trap, not to this test process, which a signal no handler caught would
// end with every test in it.
func TestExecForwardsSignals(t *testing.T) {
	skipUnlessLive(t)
	bin := cliBinary(t)
	cpu := allowedCPUs(t).First(1).List()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			ready := filepath.Join(t.TempDir(), "ready")
			name := strings.TrimPrefix(signalName(sig), "SIG")
			script := "trap 'exit 7' " + name + "; echo $$ > " + ready + ".tmp; mv " + ready + ".tmp " + ready + "; while :; do sleep 0.05; done"
			cmd := exec.Command(bin, "exec", "--cpus", cpu, "--", "sh", "-c", script)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			killShell := func() {
				if b, err := os.ReadFile(ready); err == nil {
					if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
						syscall.Kill(pid, syscall.SIGKILL) // the shell this test started
					}
				}
			}
			defer killShell()
			waitFor(t, cmd, "the shell's trap set", func() bool {
				_, err := os.Stat(ready)
				return err == nil
			})
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
				if code := cmd.ProcessState.ExitCode(); code != 7 {
					t.Errorf("exec: exit %d (%v, stderr %q), want 7 from the shell's %s trap", code, cmd.ProcessState, stderr.String(), name)
				}
			case <-time.After(10 * time.Second):
				killShell()
				cmd.Process.Kill()
				<-done
				t.Fatalf("%s was not passed on: the shell was still running", name)
			}
		})
	}
}

func signalName(s syscall.Signal) string {
	return map[syscall.Signal]string{
		syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP", syscall.SIGQUIT: "SIGQUIT",
	}[s]
}
