//go:build labfault

package tune

// SetLabFault sets the hook that fails a transaction before its
// steering step i (i = the number of steps: before its IRQ writes), so
// the lab sees a failure between two changes roll back the ones made.
// It exists only in a binary built with the lab's labfault tag
// (cmd/irqnuma/zcfault_lab.go); the shipped binary has no such hook.
func SetLabFault(f func(i int) error) { stepFault = f }

// SetLabTxnFault sets the hook that fails every transaction that can roll
// back before its step i (txnFault), whatever the step is: a steering
// change, a setting, an IRQ write or a thread move. Only in a binary built
// with the labfault tag.
func SetLabTxnFault(f func(i int) error) { txnFault = f }
