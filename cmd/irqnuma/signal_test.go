package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/hosttest"
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

// TestStopSignals: a stop signal ends any command within a second with
// 128+signo, and removes the folder a snapshot was being unpacked into;
// a folder left by a killed run is removed by the next one.
func TestStopSignals(t *testing.T) {
	t.Parallel()
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
		{"serve, SIGTERM", []string{"--root", hosttest.Root("seed"), "serve", "--listen", "127.0.0.1:0"}, syscall.SIGTERM, 143},
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
			time.Sleep(300 * time.Millisecond)
			if strings.Contains(tt.args[1], "big") && len(snapshotDirs(t, tmp)) == 0 {
				t.Log("the unpack had not started or had finished when the signal was sent")
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
