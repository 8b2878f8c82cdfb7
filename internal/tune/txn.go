package tune

import (
	"context"
	"errors"
)

// A step is one change of a host: an IRQ's affinity file or a queue's
// xps_cpus (affinityStep), a NAPI kernel thread's CPUs (threadStep), one
// change of a NIC's steering (steerStep), or a restore's put-back of a
// saved steering value (steerBackStep). Each records what became of it in
// its own row; the transaction (txn) only orders them.
type step interface {
	// do makes the change.
	do() error
	// done records do's outcome in the step's row and reports whether
	// it is a failure: an error that is not one (a managed IRQ the
	// kernel keeps, skipped) is recorded and the transaction goes on.
	done(err error) (failed bool)
	// undo puts back what do replaced.
	undo() error
	// undone records undo's outcome: rolled back, or a *RollbackError.
	undone(err error)
	// strict says that a failure of this step ends the transaction even
	// when it keeps going past failed writes.
	strict() bool
}

// txn runs steps in order, all or nothing: a failed step (unless
// keepGoing and the step is not strict) or a cancelled ctx, noticed
// between steps, ends it, and every step made is undone, newest first,
// whatever ctx says. afterUndo, when set, runs after the undo with the
// indexes of the steps that had been made.
//
// A final txn is a restore's: it puts a host back, so there is nothing
// older to undo to. Every step is tried, whatever fails or ctx says,
// nothing is undone, and run says StopFailed when any step failed.
type txn struct {
	steps     []step
	keepGoing bool
	final     bool
	afterUndo func(made []int)
	// reached is the index of the step the run ended at: the one that
	// failed, or the one it stopped before when interrupted; len(steps)
	// when it tried them all. The steps after it were never tried.
	reached int
}

// run makes the steps and says why it stopped.
func (t *txn) run(ctx context.Context) Stop {
	var made []int
	stop := StopCompleted
	t.reached = len(t.steps)
	if t.final {
		for _, s := range t.steps {
			if s.done(s.do()) {
				stop = StopFailed
			}
		}
		return stop
	}
	for i, s := range t.steps {
		if ctx.Err() != nil {
			stop, t.reached = StopInterrupted, i
			break
		}
		if txnFault != nil && txnFault(i) != nil {
			stop, t.reached = StopFailed, i
			break
		}
		err := s.do()
		if !s.done(err) {
			if err == nil {
				made = append(made, i)
			}
			continue
		}
		if t.keepGoing && !s.strict() {
			continue
		}
		stop, t.reached = StopFailed, i
		break
	}
	if stop == StopCompleted {
		return stop
	}
	for k := len(made) - 1; k >= 0; k-- {
		s := t.steps[made[k]]
		s.undone(s.undo())
	}
	if t.afterUndo != nil {
		t.afterUndo(made)
	}
	return stop
}

// txnFault, when set, is called before step i of every transaction that
// can roll back; an error it returns fails the transaction there, before
// that step, as a failed write would. The lab's guest binary sets it
// through SetLabTxnFault (fault_lab.go, built only with the labfault
// tag), to see a fault between any two changes of a tune undo the ones
// made; nothing in the shipped binary can.
var txnFault func(i int) error

// finalStep is embedded by a restore's steps. A restore runs in a final txn,
// which undoes nothing: what a put-back replaced is the pin's value, which
// the restore exists to remove.
type finalStep struct{}

// errPutBack is what undo of a put-back says, were it ever asked.
var errPutBack = errors.New("a restore's step is not undone")

func (finalStep) undo() error  { return errPutBack }
func (finalStep) undone(error) {}
func (finalStep) strict() bool { return false }
