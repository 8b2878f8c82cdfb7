package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// bigSnapshot writes a valid snapshot of the seed tree padded with n
// extra files, slow enough to unpack that a signal finds it under way.
func bigSnapshot(t *testing.T, n int) string {
	t.Helper()
	var buf bytes.Buffer
	// The fastest level: the archive is for unpacking slowly, and writing
	// it at the default level took most of the test's time.
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	file := snapshotOf(t, hosttest.Root("seed"))
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		tw.WriteHeader(h)
		if h.Typeflag == tar.TypeReg {
			b := make([]byte, h.Size)
			tr.Read(b)
			tw.Write(b)
		}
	}
	tw.WriteHeader(&tar.Header{Name: "proc/pad/", Typeflag: tar.TypeDir, Mode: 0o755})
	for i := range n {
		tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("proc/pad/f%d", i), Typeflag: tar.TypeReg, Mode: 0o444, Size: 1})
		tw.Write([]byte("x"))
	}
	tw.Close()
	zw.Close()
	out := filepath.Join(t.TempDir(), "big.tar.gz")
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// snapshotDirs lists the folders snapshots unpack into under tmp.
func snapshotDirs(t *testing.T, tmp string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(tmp, "irqnuma-snapshot-*"))
	return m
}

// handlesStopSignals reports whether the irqnuma process pid handles the
// stop signals: shutdown.NotifyContext ignores SIGPIPE right after it
// starts catching them, and /proc/PID/status shows the ignored set.
func handlesStopSignals(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	return ignoresSIGPIPE(t, string(b))
}

// ignoresSIGPIPE reads the SigIgn mask of a /proc/PID/status.
func ignoresSIGPIPE(t *testing.T, status string) bool {
	t.Helper()
	for line := range strings.SplitSeq(status, "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatalf("SigIgn %q: %v", v, err)
			}
			return mask&(1<<(syscall.SIGPIPE-1)) != 0
		}
	}
	t.Fatalf("no SigIgn in /proc/PID/status:\n%s", status)
	return false
}

// procState returns the state letter of /proc/PID/stat ("R", "S", "Z"
// once it has exited), "" when there is none.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if i := bytes.LastIndexByte(b, ')'); err == nil && i >= 0 && i+2 < len(b) {
		return string(b[i+2])
	}
	return ""
}

// hasChild reports whether a child of process pid (of any of its
// threads) has the comm name: a command it started, past its exec.
func hasChild(pid int, name string) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, child := range strings.Fields(string(b)) {
			if comm, err := os.ReadFile("/proc/" + child + "/comm"); err == nil && strings.TrimSpace(string(comm)) == name {
				return true
			}
		}
	}
	return false
}

// waitFor polls until ready, failing the test if the command exits
// first or it takes past 20 s (a machine far busier than any test run).
func waitFor(t *testing.T, cmd *exec.Cmd, what string, ready func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ready(); time.Sleep(2 * time.Millisecond) {
		if procState(cmd.Process.Pid) == "Z" {
			t.Fatalf("irqnuma %s exited before %s", strings.Join(cmd.Args[1:], " "), what)
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("irqnuma %s: no sign of %s after 20 s", strings.Join(cmd.Args[1:], " "), what)
		}
	}
}

// TestStopSignals: a stop signal ends any command within a second with
// 128+signo, and removes the folder a snapshot was being unpacked into;
// a folder left by a killed run is removed by the next one.
func TestStopSignals(t *testing.T) {
	t.Parallel()
	if self, err := os.ReadFile("/proc/self/status"); err != nil || ignoresSIGPIPE(t, string(self)) {
		t.Fatalf("this test process ignores SIGPIPE (or has no /proc: %v), so a child's SigIgn cannot show it handles stop signals", err)
	}
	bin := cliBinary(t)
	big := bigSnapshot(t, 250000) // under snapshot.DefaultMaxEntries
	tests := []struct {
		name string
		args []string
		sig  syscall.Signal
		want int
	}{
		{"unpacking a snapshot, SIGINT", []string{"--root", big, "topology"}, syscall.SIGINT, 130},
		{"unpacking a snapshot, SIGTERM", []string{"--root", big, "audit"}, syscall.SIGTERM, 143},
		{"unpacking a snapshot, SIGHUP", []string{"--root", big, "irq", "list"}, syscall.SIGHUP, 129},
		{"watch between samples, SIGTERM", []string{"--root", hosttest.Root("seed"), "watch", "--interval", "10s", "-o", "json"}, syscall.SIGTERM, 143},
		{"watch between samples, SIGINT", []string{"--root", hosttest.Root("seed"), "watch", "--interval", "10s"}, syscall.SIGINT, 130},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			cmd := exec.Command(bin, tt.args...)
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Signal once the command handles stop signals and, for a
			// snapshot, once its unpack is under way: a fixed wait
			// signalled a process still starting under load, which the
			// signal's default action killed.
			waitFor(t, cmd, "the stop signals handled", func() bool { return handlesStopSignals(t, cmd.Process.Pid) })
			if strings.Contains(tt.args[1], "big") {
				waitFor(t, cmd, "the snapshot being unpacked", func() bool { return len(snapshotDirs(t, tmp)) > 0 })
			}
			sent := time.Now()
			cmd.Process.Signal(tt.sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running 5 s after %v", tt.sig)
			}
			took := time.Since(sent)
			if code := cmd.ProcessState.ExitCode(); code != tt.want {
				t.Errorf("exit %d after %v, want %d (stderr %q)", code, tt.sig, tt.want, stderr.String())
			}
			if took > 1500*time.Millisecond {
				t.Errorf("took %v to stop after %v, want about a second at most", took, tt.sig)
			}
			if left := snapshotDirs(t, tmp); len(left) > 0 {
				t.Errorf("left %v behind", left)
			}
		})
	}
	t.Run("stale folder of a killed run", func(t *testing.T) {
		t.Parallel()
		tmp := t.TempDir()
		cmd := exec.Command(bin, "--root", big, "topology")
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Open counts the archive's entries before it unpacks: wait for
		// the first folder unpacked.
		unpacking := func() bool {
			m, _ := filepath.Glob(filepath.Join(tmp, "irqnuma-snapshot-*", "proc"))
			return len(m) > 0
		}
		for deadline := time.Now().Add(10 * time.Second); !unpacking() && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		cmd.Process.Kill()
		cmd.Wait()
		killed := snapshotDirs(t, tmp)
		if len(killed) == 0 {
			t.Skip("the unpack finished before SIGKILL")
		}
		small := snapshotOf(t, hosttest.Root("vm-virtio"))
		next := exec.Command(bin, "--root", small, "topology")
		next.Env = append(os.Environ(), "TMPDIR="+tmp)
		if out, err := next.CombinedOutput(); err != nil {
			t.Fatalf("next run: %v\n%s", err, out)
		}
		// The next run moves the folder aside and removes a bounded part
		// of it in the background; later runs remove the rest.
		for _, left := range snapshotDirs(t, tmp) {
			if !strings.HasPrefix(filepath.Base(left), "irqnuma-snapshot-stale-") {
				t.Errorf("the next run left the killed run's folder %s (killed run's: %v)", left, killed)
			}
		}
	})
}
