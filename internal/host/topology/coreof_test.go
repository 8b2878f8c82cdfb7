package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestCoreOf holds the one rule for a CPU's core: the lowest online CPU
// of its thread siblings, the CPU itself when those are unknown.
func TestCoreOf(t *testing.T) {
	h, err := Read(hosttest.FS(t, "offline-2node"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		give, want int
	}{
		{0, 0}, {4, 0}, // siblings 0,4
		{12, 8},  // siblings 8,12: named by the lower
		{13, 13}, // sibling 9 offline: 13 alone
		{9, 9},   // offline: siblings unknown, its own core
		{1, 1},   // offline, its whole core offline
		{99, 99}, // no CPU of this host
	}
	for _, tt := range tests {
		if got := h.CoreOf(tt.give); got != tt.want {
			t.Errorf("CoreOf(%d) = %d, want %d", tt.give, got, tt.want)
		}
	}
	// Cores skips offline CPUs and names each core once, by CoreOf.
	got := h.Cores(cpuset.New(0, 1, 4, 8, 9, 12, 13))
	if diff := cmp.Diff([]int{0, 8, 13}, got); diff != "" {
		t.Errorf("Cores (-want +got):\n%s", diff)
	}

	// core_id repeats across packages on seed (CPU 50 has core_id 2 like
	// CPU 2); the core is still named by the lowest sibling.
	seed, err := Read(hosttest.FS(t, "seed"))
	if err != nil {
		t.Fatal(err)
	}
	if got := seed.CoreOf(50); got != 18 {
		t.Errorf("seed CoreOf(50) = %d, want 18", got)
	}
}
