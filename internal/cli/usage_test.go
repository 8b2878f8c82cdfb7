package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/snapshot"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/run/bench"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// TestUsageErrors holds the one rule: every error a library marks as the
// user's to fix exits 2 however it is wrapped, with no list of sentinels
// in the CLI, and the library errors that are not the user's exit 1.
func TestUsageErrors(t *testing.T) {
	_, pickErr := tune.PickOptions{}.Request()
	_, benchErr := bench.Options{Repeat: 1}.Request(kfile.FS{}, nil)
	tests := []struct {
		name string
		give error
		want int
	}{
		{"topology.ErrUnknownNIC", topology.ErrUnknownNIC, ExitUsage},
		{"a locality the user can choose instead", fmt.Errorf("pick: %w", tune.ErrLocalityUnknown), ExitUsage},
		{"tune.ErrLocalityUnknown", tune.ErrLocalityUnknown, ExitUsage},
		{"tune.ErrBadPick", tune.ErrBadPick, ExitUsage},
		{"tune.ErrNoSuchNode", tune.ErrNoSuchNode, ExitUsage},
		{"tune.ErrNoSuchCPU", tune.ErrNoSuchCPU, ExitUsage},
		{"tune.ErrConfig", tune.ErrConfig, ExitUsage},
		{"snapshot.ErrName", snapshot.ErrName, ExitUsage},
		{"kfile.ErrNotHost", kfile.ErrNotHost, ExitUsage},
		{"usage.Errorf", usage.Errorf("--x %d: bad", 1), ExitUsage},
		{"usage.Wrap", usage.Wrap(errors.New("bad")), ExitUsage},
		{"a PickOptions refusal", pickErr, ExitUsage},
		{"a bench.Options refusal", benchErr, ExitUsage},
		{"tune.ErrNothingLeft", tune.ErrNothingLeft, ExitError},
		{"tune.ErrNoCPUs", tune.ErrNoCPUs, ExitError},
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
}
