package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/safetext"
	"github.com/irqnuma/irqnuma/internal/sched"
	"github.com/irqnuma/irqnuma/internal/units"
)

func newExecCmd(a *app) *cobra.Command {
	var f pickFlags
	var membind bool
	c := &cobra.Command{
		Use:         "exec (--nic NAME | --node N | --cpus LIST | --cgroup PATH | --pod NS/NAME | --container ID) [flags] [--membind] -- COMMAND [ARGS...]",
		Annotations: map[string]string{"json": "none"},
		Short:       "Run a command on the CPUs mask would pick, from its first instruction",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.Usagef("exec needs a COMMAND to run, after --")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if filepath.Clean(a.root) != "/" {
				return cli.Usagef("exec runs the command on this host, so it reads / only, not --root %s", a.root)
			}
			p, err := a.pick(cmd.Flags(), &f)
			if err != nil {
				return err
			}
			place := sched.Placement{CPUs: p.CPUs}
			if membind {
				if !p.NodesKnown {
					return fmt.Errorf("--membind: the NUMA node of %s %s is unknown", units.Choose(p.CPUs.Len(), "CPU", "CPUs"), p.CPUs)
				}
				place.MemNodes = p.Nodes
			}
			return a.execOn(place, p.Describe(), args)
		},
	}
	f.add(c.Flags())
	c.Flags().BoolVar(&membind, "membind", false, "bind the command's memory to the picked CPUs' nodes (MPOL_BIND)")
	// Everything after COMMAND is the command's, flags included.
	c.Flags().SetInterspersed(false)
	return c
}

// execOn runs args with the placement and ends irqnuma with the
// command's exit status.
func (a *app) execOn(place sched.Placement, where string, args []string) error {
	code, err := sched.Run(place, args, sched.Streams{Stdin: a.stdin, Stdout: a.stdout, Stderr: a.stderr}, func(stderr io.Writer) {
		fmt.Fprintf(stderr, "irqnuma: running on %s\n", safetext.Escape(where))
	})
	if code == 0 && err == nil {
		return nil
	}
	return cli.Exit(code, err)
}
