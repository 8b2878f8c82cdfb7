package bench

import (
	"errors"
	"fmt"

	"github.com/irqnuma/irqnuma/internal/usage"
)

// Errors Run wraps, for callers that branch on them.
var (
	// ErrUsage: the request itself is wrong (a placement that does not
	// exist, no way to read the result, --repeat 0): the user's to fix.
	// It is usage.ErrUsage too.
	ErrUsage = usage.New("bad bench request")
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

// usagef is a request error: its message is the user's, and it is
// ErrUsage.
func usagef(format string, args ...any) error {
	return usage.Kind(ErrUsage, fmt.Errorf(format, args...))
}
