package bench

import (
	"errors"

	"github.com/irqnuma/irqnuma/internal/usage"
)

// Errors Run wraps, for callers that branch on them.
var (
	// ErrParse: a run's output does not hold the result the parser
	// looks for.
	ErrParse = errors.New("cannot read the result")
	// ErrIrqbalance: irqbalance runs and would move the IRQs bench
	// places in the middle of a run.
	ErrIrqbalance = errors.New("irqbalance is running")
	// ErrRun: a run of the command failed (its exit status, or its
	// output did not parse).
	ErrRun = errors.New("a benchmark run failed")
)

// usagef is a request error: the request itself is wrong (a placement
// that does not exist, no way to read the result, --repeat 0), the
// user's to fix (usage.ErrUsage).
func usagef(format string, args ...any) error {
	return usage.Errorf(format, args...)
}
