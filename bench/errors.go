package bench

import (
	"errors"
	"fmt"
)

// Errors Run wraps, for callers that branch on them.
var (
	// ErrUsage: the request itself is wrong (a placement that does not
	// exist, no way to read the result, --repeat 0): the user's to fix.
	ErrUsage = errors.New("bad bench request")
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

// usageError is a request error: its message is the user's, and it is
// ErrUsage.
type usageError struct{ err error }

func (e usageError) Error() string        { return e.err.Error() }
func (e usageError) Unwrap() error        { return e.err }
func (e usageError) Is(target error) bool { return target == ErrUsage }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}
