package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/safetext"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
	"github.com/irqnuma/irqnuma/internal/units"
)

func newExecCmd(a *app) *cobra.Command {
	var f pickFlags
	var membind, join bool
	c := &cobra.Command{
		Use:         "exec (--nic NAME | --node N | --cpus LIST | --cgroup PATH [--join] | --pod NS/NAME | --container ID) [flags] [--membind] -- COMMAND [ARGS...]",
		Annotations: map[string]string{"json": "none"},
		Short:       "Run a command on the CPUs mask would pick, from its first instruction",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.Usagef("exec needs a COMMAND to run, after --")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !a.fs.Live() {
				return cli.Usagef("exec runs the command on this host, so it reads / only, not --root %s", a.root)
			}
			if join && !cmd.Flags().Changed("cgroup") {
				return cli.Usagef("--join needs --cgroup PATH, the group to start the command in")
			}
			p, g, err := a.pickIn(cmd.Flags(), &f)
			if err != nil {
				return err
			}
			place := sched.Placement{CPUs: p.CPUs}
			if membind {
				nodes, ok := p.Nodes.Get()
				if !ok {
					return fmt.Errorf("--membind: the NUMA node of %s %s is unknown", units.Choose(p.CPUs.Len(), "CPU", "CPUs"), p.CPUs)
				}
				if join {
					if mems, ok := g.Mems.Get(); ok && !nodes.IsSubsetOf(mems) {
						return cli.Usagef("--membind --join: the picked CPUs' nodes %s are not all the group %s's memory nodes (cpuset.mems.effective %s)", nodes, g.Path, mems)
					}
				}
				place.MemNodes = nodes
			}
			where := p.Describe()
			if join {
				grp, closeGroup, err := tune.OpenJoin(a.fs, g)
				if err != nil {
					return err
				}
				defer closeGroup()
				place.Join = grp
				where += ", inside cgroup " + g.Path
			}
			return a.execOn(place, where, args, g)
		},
	}
	f.add(c.Flags())
	c.Flags().BoolVar(&membind, "membind", false, "bind the command's memory to the picked CPUs' nodes (MPOL_BIND)")
	c.Flags().BoolVar(&join, "join", false, "with --cgroup, start the command inside the group (needed for a partition root's CPUs)")
	// Everything after COMMAND is the command's, flags included.
	c.Flags().SetInterspersed(false)
	return c
}

// execOn runs args with the placement and ends irqnuma with the
// command's exit status. g is the --cgroup group, nil without one: CPUs
// irqnuma's own cpuset does not allow are then the group's, and the
// error says so.
func (a *app) execOn(place sched.Placement, where string, args []string, g *proc.Cgroup) error {
	code, err := sched.Run(place, args, sched.Streams{Stdin: a.stdin, Stdout: a.stdout, Stderr: a.stderr}, func(stderr io.Writer) {
		fmt.Fprintf(stderr, "irqnuma: running on %s\n", safetext.Escape(where))
	})
	if err != nil && g != nil && place.Join == nil && (errors.Is(err, sched.ErrNotAllowed) || errors.Is(err, sched.ErrNarrowed)) {
		return outsideGroup(g, place, err)
	}
	if code == 0 && err == nil {
		return nil
	}
	return cli.Exit(code, err)
}

// outsideGroup is the error for a pick in g that irqnuma, outside g, may
// not run on.
func outsideGroup(g *proc.Cgroup, place sched.Placement, err error) error {
	why := "irqnuma's own cpuset does not allow them"
	if g.Exclusive && g.Version == proc.CgroupVersionV2 {
		why = fmt.Sprintf("the group is a partition root (cpuset.cpus.partition %s): the kernel took its CPUs out of every group outside it", g.Partition)
	}
	return cli.Usage(fmt.Errorf("exec --cgroup %s: a process outside the group may not run on %s %s, %s; --join starts the command inside the group: %w",
		g.Path, units.Choose(place.CPUs.Len(), "CPU", "CPUs"), place.CPUs, why, err))
}
