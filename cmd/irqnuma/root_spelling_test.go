package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/snapshot"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestRootSpellings: --root names a folder however it is spelt. Inside an
// unpacked capture, --root . failed with "open sys/devices/system/cpu/online:
// path is not under the root" while the absolute path worked.
func TestRootSpellings(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "seed.tar.gz")
	if _, stderr, code := runCLI(t, "--root", hosttest.Root("seed"), "snapshot", "-o", archive); code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, stderr)
	}
	capture, cleanup, err := snapshot.Open(context.Background(), archive, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanup() })
	capture, err = filepath.EvalSymlinks(capture)
	if err != nil {
		t.Fatal(err)
	}
	commands := [][]string{{"topology"}, {"topology", "-o", "json"}, {"irq", "list"}, {"audit", "--fail-on", "never"}, {"audit", "-o", "json", "--fail-on", "never"}}
	want := map[int]string{}
	for i, args := range commands {
		out, stderr, code := runCLI(t, append([]string{"--root", capture}, args...)...)
		if code != 0 || out == "" {
			t.Fatalf("--root %s %v: exit %d, stdout %q, stderr %s", capture, args, code, out, stderr)
		}
		want[i] = out
	}
	tests := []struct {
		in   string // the working folder, relative to the capture
		give string
	}{
		{".", "."},
		{".", "./"},
		{".", "./."},
		{"proc", ".."},
		{"proc", "../"},
		{"sys/devices", "../.."},
		{"..", filepath.Base(capture)},
		{"..", filepath.Base(capture) + "/"},
		{"..", "./" + filepath.Base(capture)},
		{"proc", "../proc/../sys/.."},
		{"proc", "../../" + filepath.Base(capture)},
	}
	for _, tt := range tests {
		t.Chdir(filepath.Join(capture, tt.in))
		for i, args := range commands {
			out, stderr, code := runCLI(t, append([]string{"--root", tt.give}, args...)...)
			if code != 0 || out != want[i] {
				t.Errorf("in %s, --root %s %v: exit %d, stderr %q; stdout differs from --root %s: %v",
					tt.in, tt.give, strings.Join(args, " "), code, stderr, capture, out != want[i])
			}
		}
	}
	// A snapshot named relatively is a root too.
	t.Chdir(dir)
	if out, stderr, code := runCLI(t, "--root", "./seed.tar.gz", "topology"); code != 0 || out != want[0] {
		t.Errorf("--root ./seed.tar.gz topology: exit %d, stderr %q, same output: %v", code, stderr, out == want[0])
	}
}

// TestRootMissing: a root that does not exist (or whose path runs through
// a file) is a usage error in one line, as an empty folder is, saying
// what a root is, where it was a bare "root: stat ...: no such file or
// directory" with exit 1.
func TestRootMissing(t *testing.T) {
	t.Parallel()
	for _, root := range []string{"/nonexistent", filepath.Join(hosttest.Root("seed"), "README", "x")} {
		for _, args := range [][]string{{"topology"}, {"audit"}, {"irq", "list"}, {"watch", "--count", "1"}, {"snapshot", "-o", filepath.Join(t.TempDir(), "s.tar.gz")}} {
			out, stderr, code := runCLI(t, append([]string{"--root", root}, args...)...)
			want := "irqnuma: root " + root + ": no such folder or snapshot (a root is a folder holding a host's proc/ and sys/"
			if code != cli.ExitUsage || out != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("--root %s %v: exit %d, stdout %q, stderr %q; want exit %d and one line starting %q", root, args, code, out, stderr, cli.ExitUsage, want)
			}
		}
	}
}

// TestRootWithoutHost: a folder holding neither proc/ nor sys/ is not a
// root, and the error says so and what a root holds, where every reader
// used to fail with a bare ENOENT on sys/devices/system/cpu/online. A
// folder one level above a capture is told which folder to use.
func TestRootWithoutHost(t *testing.T) {
	empty := t.TempDir()
	for _, args := range [][]string{{"topology"}, {"audit"}, {"irq", "list"}, {"snapshot", "-o", filepath.Join(t.TempDir(), "s.tar.gz")}} {
		_, stderr, code := runCLI(t, append([]string{"--root", empty}, args...)...)
		if code != cli.ExitUsage {
			t.Errorf("--root %s %v: exit %d, want %d (stderr %q)", empty, args, code, cli.ExitUsage, stderr)
		}
		for _, w := range []string{"root " + empty + ": holds neither proc/ nor sys/", "snapshot .tar.gz"} {
			if !strings.Contains(stderr, w) {
				t.Errorf("--root %s %v: stderr %q, want it to say %q", empty, args, stderr, w)
			}
		}
		if strings.Contains(stderr, "cpu/online") {
			t.Errorf("--root %s %v: stderr %q still names a file of the missing tree", empty, args, stderr)
		}
	}

	up := t.TempDir()
	capture := filepath.Join(up, "host")
	if err := os.Rename(hosttest.Copy(t, "seed"), capture); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "--root", up, "topology")
	if want := "; " + capture + " does (a root is"; code != cli.ExitUsage || !strings.Contains(stderr, want) {
		t.Errorf("--root %s (one level above a capture): exit %d, stderr %q; want exit %d saying %q", up, code, stderr, cli.ExitUsage, want)
	}
	// A tree holding only sys/ (the hwloc captures) or only proc/ is a root.
	for _, only := range []string{"proc", "sys"} {
		root := t.TempDir()
		os.Mkdir(filepath.Join(root, only), 0o755)
		if _, stderr, _ := runCLI(t, "--root", root, "topology"); strings.Contains(stderr, "holds neither proc/ nor sys/") {
			t.Errorf("--root holding %s/ only: %q", only, stderr)
		}
	}
}
