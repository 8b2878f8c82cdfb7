package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestZCPrepareRefuses: a NIC that cannot bind zero-copy receive is
// refused with the first reason, in a dry run and without one, and a
// captured root is never changed (--partial on a tree: not live).
func TestZCPrepareRefuses(t *testing.T) {
	root := hosttest.Copy(t, "vm-virtio")
	before := hosttest.Files(t, root)
	out, stderr, code := runCLI(t, "--root", root, "zc", "prepare", "eth0", "--queue", "1", "--port", "9000", "--dry-run")
	if code != cli.ExitError || !strings.Contains(stderr, "eth0 cannot do zero-copy receive: ") || !strings.Contains(out, "application CPUs") {
		t.Errorf("dry run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	_, stderr, code = runCLI(t, "--root", root, "zc", "prepare", "eth0", "--queue", "1", "--port", "9000")
	if code != cli.ExitError || !strings.Contains(stderr, "nothing was changed") {
		t.Errorf("without --partial: exit %d, stderr %s", code, stderr)
	}
	_, stderr, code = runCLI(t, "--root", root, "zc", "prepare", "eth0", "--queue", "1", "--port", "9000", "--partial")
	if code == 0 || !strings.Contains(stderr, "only on the live root") {
		t.Errorf("--partial on a tree: exit %d, stderr %s", code, stderr)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("the tree changed (-before +after):\n%s", diff)
	}
	for _, args := range [][]string{{"--queue", "1"}, {"--port", "9000"}, {"--queue", "-1", "--port", "1"}, {"--queue", "1", "--port", "70000"}} {
		_, _, code := runCLI(t, append([]string{"--root", root, "zc", "prepare", "eth0"}, args...)...)
		if code != cli.ExitUsage {
			t.Errorf("zc prepare eth0 %v: exit %d, want %d", args, code, cli.ExitUsage)
		}
	}
}
