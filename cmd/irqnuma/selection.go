package main

import (
	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/irq"
	"github.com/irqnuma/irqnuma/proc"
	"github.com/irqnuma/irqnuma/topology"
)

// selection is the --nic, --pid and --comm of the commands that look at
// NICs and watched processes together (audit, serve, map).
type selection struct {
	nics  []string
	pids  []int
	comms []string
}

// flags adds --nic (with the command's own wording), --pid and --comm.
func (s *selection) flags(c *cobra.Command, nicHelp string) {
	c.Flags().StringArrayVar(&s.nics, "nic", nil, nicHelp)
	c.Flags().IntSliceVar(&s.pids, "pid", nil, "watch this process and all its threads (repeatable)")
	c.Flags().StringArrayVar(&s.comms, "comm", nil, "watch every process whose comm is exactly this (repeatable)")
}

func (s *selection) check() error {
	for _, p := range s.pids {
		if p <= 0 {
			return usagef("--pid %d: not a process id", p)
		}
	}
	for _, c := range s.comms {
		if c == "" {
			return usagef("--comm: empty name")
		}
	}
	return nil
}

// read reads what these commands look at under root: the topology, the
// selected NICs' IRQs and the watched processes.
func (s *selection) read(root string) (*topology.Host, *irq.Table, []*proc.Process, error) {
	h, err := topology.Read(root)
	if err != nil {
		return nil, nil, nil, err
	}
	t, err := irq.Load(h, irq.Options{NICs: s.nics})
	if err != nil {
		return nil, nil, nil, err
	}
	var procs []*proc.Process
	if len(s.pids) > 0 || len(s.comms) > 0 {
		if procs, err = proc.Select(root, s.pids, s.comms); err != nil {
			return nil, nil, nil, err
		}
	}
	return h, t, procs, nil
}
