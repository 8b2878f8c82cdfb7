package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/shutdown"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

// TestMain makes the test binary the irqnuma binary when it is run under
// that name (cliBinary links it so), busybox style: a test that needs a
// real process (a shell script, signals, a pipe) runs the code under test
// without a go build of its own. Else it runs the tests with TMPDIR on
// a tmpfs (hosttest.Main).
func TestMain(m *testing.M) {
	sched.Trampoline() // exec --join starts this binary as its trampoline
	if filepath.Base(os.Args[0]) == "irqnuma" {
		ctx, stop := shutdown.NotifyContext(context.Background())
		code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		if p := os.Getenv("IRQNUMA_TEST_HWM"); p != "" {
			writeHWM(p)
		}
		os.Exit(code)
	}
	hosttest.Main(m) // TMPDIR on a tmpfs, whatever the caller's
}

// writeHWM writes this process's peak resident memory (VmHWM, in kB) to
// p. The rusage a parent gets from wait4 cannot say it: exec keeps the
// high-water mark of the memory it replaced, which after Go's vfork is
// the test process's own.
func writeHWM(p string) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			os.WriteFile(p, []byte(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))), 0o644)
		}
	}
}

// cliBinary returns the path of an "irqnuma" that runs this test binary
// as the command (see TestMain).
func cliBinary(t testing.TB) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "irqnuma")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// runCLI runs irqnuma with args in-process and returns its stdout, stderr
// and exit code.
func runCLI(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	s := hostSys()
	s.getenv = func(string) string { return "" } // no COLUMNS: goldens are not wrapped
	return runCLISys(t, s, args...)
}

// runCLISys is runCLI with the given process facts (writer, user, clock).
func runCLISys(t testing.TB, s sys, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = runSys(context.Background(), s, args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// moduleRoot returns the repository root, from this file's location.
func moduleRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// golden compares got with testdata/golden/<name>, or rewrites it with -update.
func golden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join(moduleRoot(t), "testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test ./cmd/irqnuma -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}
