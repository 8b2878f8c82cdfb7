package main

import (
	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/audit"
	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/proc"
)

// selection is the --nic, --pid, --comm and --cgroup of every command
// that looks at NICs and watched processes (audit, serve, map, watch,
// snapshot).
type selection struct{ audit.Selection }

// flags adds --nic (with the command's own wording; none when nicHelp is
// ""), and --pid, --comm and --cgroup, saying what the command does with
// the processes ("watch", "capture").
func (s *selection) flags(c *cobra.Command, nicHelp, verb string) {
	if nicHelp != "" {
		c.Flags().StringArrayVar(&s.NICs, "nic", nil, nicHelp)
	}
	c.Flags().IntSliceVar(&s.PIDs, "pid", nil, verb+" this process and all its threads (repeatable)")
	c.Flags().StringArrayVar(&s.Comms, "comm", nil, verb+" every process whose comm is exactly this (repeatable)")
	c.Flags().StringArrayVar(&s.Cgroups, "cgroup", nil, verb+" every process in this control group: its path as /proc/PID/cgroup shows it, v2 or the v1 cpuset hierarchy's (repeatable)")
}

// processes is the --pid, --comm and --cgroup alone, for the commands that take
// the processes apart from the NICs (watch, snapshot).
func (s *selection) processes() proc.Selection { return s.Selection.Selection }

// check validates the values as usage errors.
func (s *selection) check() error {
	if err := s.Validate(); err != nil {
		return cli.Usage(err)
	}
	return nil
}
