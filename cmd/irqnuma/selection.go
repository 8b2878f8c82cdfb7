package main

import (
	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/audit"
)

// selection is the --nic, --pid and --comm of the commands that look at
// NICs and watched processes together (audit, serve, map).
type selection struct{ audit.Selection }

// flags adds --nic (with the command's own wording), --pid and --comm.
func (s *selection) flags(c *cobra.Command, nicHelp string) {
	c.Flags().StringArrayVar(&s.NICs, "nic", nil, nicHelp)
	c.Flags().IntSliceVar(&s.PIDs, "pid", nil, "watch this process and all its threads (repeatable)")
	c.Flags().StringArrayVar(&s.Comms, "comm", nil, "watch every process whose comm is exactly this (repeatable)")
}

// check validates the values as usage errors.
func (s *selection) check() error {
	if err := s.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}
