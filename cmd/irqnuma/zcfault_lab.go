//go:build labfault

package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/irqnuma/irqnuma/internal/tune"
)

// The lab's guest binary is built with the labfault tag: with
// IRQNUMA_LAB_ZC_FAULT=N, zc prepare fails before its steering step N
// (N = the number of steps: before the IRQ), so the lab sees a fault
// between two changes roll back the ones made. The shipped binary has
// no such hook.
func init() {
	labTxnFault()
	v := os.Getenv("IRQNUMA_LAB_ZC_FAULT")
	if v == "" {
		return
	}
	at, err := strconv.Atoi(v)
	if err != nil {
		return
	}
	tune.SetLabFault(func(i int) error {
		if i == at {
			return fmt.Errorf("lab fault injected before step %d", i)
		}
		return nil
	})
}

// labTxnFault: with IRQNUMA_LAB_TXN_FAULT=N, every transaction that can
// roll back (a tune's, a pin's) fails before its step N, counted from 0
// over all of its steps, so the lab sees a fault between any two changes
// undo the ones made.
func labTxnFault() {
	at, err := strconv.Atoi(os.Getenv("IRQNUMA_LAB_TXN_FAULT"))
	if err != nil {
		return
	}
	tune.SetLabTxnFault(func(i int) error {
		if i == at {
			return fmt.Errorf("lab fault injected before step %d", i)
		}
		return nil
	})
}
