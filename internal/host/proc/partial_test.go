package proc

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestSelectPartial: a tree holding a process's comm but not its status
// (a snapshot taken without naming it) is not an error: the process is
// left out and its match says it was captured only in part.
func TestSelectPartial(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "proc", "4242")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "comm"), []byte("iperf3\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	procs, matches, err := SelectPresent(hosttest.Open(t, root), Selection{PIDs: []int{4242, 77}, Comms: []string{"iperf3"}})
	if err != nil {
		t.Fatalf("SelectPresent: %v", err)
	}
	if len(procs) != 0 {
		t.Errorf("read %d processes, want none", len(procs))
	}
	want := []Match{{Selector: PIDSelector(4242), PIDs: []int{}, Partial: []int{4242}}, {Selector: PIDSelector(77), PIDs: []int{}}, {Selector: CommSelector("iperf3"), PIDs: []int{}, Partial: []int{4242}}}
	if !slices.EqualFunc(matches, want, func(a, b Match) bool {
		return a.Selector == b.Selector && slices.Equal(a.PIDs, b.PIDs) && slices.Equal(a.Partial, b.Partial)
	}) {
		t.Errorf("matches %+v, want %+v", matches, want)
	}
	if _, err := Read(hosttest.Open(t, root), 4242); !errors.Is(err, ErrPartial) {
		t.Errorf("Read(4242) = %v, want %v", err, ErrPartial)
	}
}
