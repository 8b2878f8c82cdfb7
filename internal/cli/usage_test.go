package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/irqnuma/irqnuma/affinity"
	"github.com/irqnuma/irqnuma/bench"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/usage"
	"github.com/irqnuma/irqnuma/snapshot"
	"github.com/irqnuma/irqnuma/topology"
)

// TestUsageErrors holds the one rule: every error a library marks as the
// user's to fix exits 2 however it is wrapped, with no list of sentinels
// in the CLI, and the library errors that are not the user's exit 1.
func TestUsageErrors(t *testing.T) {
	_, pickErr := affinity.PickOptions{}.Request()
	_, benchErr := bench.Options{Repeat: 1}.Request(kfile.FS{}, nil)
	tests := []struct {
		name string
		give error
		want int
	}{
		{"topology.ErrUnknownNIC", topology.ErrUnknownNIC, ExitUsage},
		{"affinity.ErrLocalityUnknown", affinity.ErrLocalityUnknown, ExitUsage},
		{"affinity.ErrBadPick", affinity.ErrBadPick, ExitUsage},
		{"affinity.ErrUsage", affinity.ErrUsage, ExitUsage},
		{"affinity.ErrNoSuchNode", affinity.ErrNoSuchNode, ExitUsage},
		{"affinity.ErrNoSuchCPU", affinity.ErrNoSuchCPU, ExitUsage},
		{"affinity.ErrNICLocalityUnknown", affinity.ErrNICLocalityUnknown, ExitUsage},
		{"affinity.ErrConfig", affinity.ErrConfig, ExitUsage},
		{"snapshot.ErrName", snapshot.ErrName, ExitUsage},
		{"bench.ErrUsage", bench.ErrUsage, ExitUsage},
		{"kfile.ErrNotHost", kfile.ErrNotHost, ExitUsage},
		{"usage.Errorf", usage.Errorf("--x %d: bad", 1), ExitUsage},
		{"usage.Wrap", usage.Wrap(errors.New("bad")), ExitUsage},
		{"a PickOptions refusal", pickErr, ExitUsage},
		{"a bench.Options refusal", benchErr, ExitUsage},
		{"affinity.ErrNothingLeft", affinity.ErrNothingLeft, ExitError},
		{"affinity.ErrNoCPUs", affinity.ErrNoCPUs, ExitError},
		{"bench.ErrRun", bench.ErrRun, ExitError},
		{"snapshot.ErrUnsafe", snapshot.ErrUnsafe, ExitError},
	}
	for _, tt := range tests {
		if tt.give == nil {
			t.Fatalf("%s: no error to test", tt.name)
		}
		for _, err := range []error{tt.give, fmt.Errorf("pin eth0: %w", tt.give), errors.Join(errors.New("other"), fmt.Errorf("x: %w", tt.give))} {
			if got := Code(context.Background(), err, io.Discard); got != tt.want {
				t.Errorf("Code(%s: %q) = %d, want %d", tt.name, err, got, tt.want)
			}
		}
	}
	// The marked refusals are still the library's own sentinel.
	if !errors.Is(pickErr, affinity.ErrUsage) || !errors.Is(benchErr, bench.ErrUsage) {
		t.Errorf("refusals %v, %v: not their package's ErrUsage", pickErr, benchErr)
	}
	if errors.Is(pickErr, bench.ErrUsage) || errors.Is(benchErr, affinity.ErrUsage) {
		t.Errorf("a refusal is another package's ErrUsage")
	}
}
