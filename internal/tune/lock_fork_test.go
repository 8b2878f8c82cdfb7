package tune

import (
	"os"
	"os/exec"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestReleaseWhileAChildHoldsTheFile: a child forked while the lock is
// held shares its open file (until it execs; here it keeps it, as a
// child still between fork and exec does). Release must free the lock
// all the same, so a restore right after a pin is not refused as
// "another irqnuma is running" (TestPinNICTwice failed so under load).
func TestReleaseWhileAChildHoldsTheFile(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	l, err := AcquireLock(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "30")
	child.ExtraFiles = []*os.File{l.f}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		child.Process.Kill()
		child.Wait()
	})
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := AcquireLock(hosttest.Open(t, root))
	if err != nil {
		t.Fatalf("AcquireLock after Release, with a child holding the old file: %v", err)
	}
	l2.Release()
}
