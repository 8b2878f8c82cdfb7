package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/irqnuma/irqnuma/affinity"
	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/cli"
)

// pickFlags are the CPU selection flags mask and exec share.
type pickFlags struct {
	nic        string
	node       int
	cpus       cpuset.ListFlag
	exclude    cpuset.ListFlag
	excludeIRQ bool
	onePerCore bool
	count      int
}

func (f *pickFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.nic, "nic", "", "candidates: the CPUs local to this NIC")
	fs.IntVar(&f.node, "node", -1, "candidates: the CPUs of this NUMA node")
	fs.Var(&f.cpus, "cpus", "candidates: this CPU list (isolated CPUs are kept only when named here)")
	fs.Var(&f.exclude, "exclude", "drop these CPUs (a CPU list)")
	fs.BoolVar(&f.excludeIRQ, "exclude-irq-cpus", false, "drop the CPUs where the NIC's queue IRQs land (and their SMT siblings with --one-per-core)")
	fs.BoolVar(&f.onePerCore, "one-per-core", false, "keep the lowest-numbered thread of each core")
	fs.IntVar(&f.count, "count", 0, "keep the first K CPUs in ascending order (fewer left is an error)")
}

// request turns the flags into a pick request; bad values are usage errors.
func (f *pickFlags) request(fs *pflag.FlagSet) (affinity.PickRequest, error) {
	r := affinity.PickRequest{NIC: f.nic, ExcludeIRQCPUs: f.excludeIRQ, OnePerCore: f.onePerCore}
	given := 0
	for _, name := range []string{"nic", "node", "cpus"} {
		if fs.Changed(name) {
			given++
		}
	}
	if given != 1 {
		return r, cli.Usagef("choose the candidate CPUs with exactly one of --nic, --node or --cpus")
	}
	if fs.Changed("node") {
		if f.node < 0 {
			return r, cli.Usagef("--node %d: want a node id", f.node)
		}
		r.Node = &f.node
	}
	if fs.Changed("nic") && f.nic == "" {
		return r, cli.Usagef("--nic: empty NIC name")
	}
	if f.excludeIRQ && f.nic == "" {
		return r, cli.Usagef("--exclude-irq-cpus needs --nic: it drops the CPUs where that NIC's queue IRQs land")
	}
	if fs.Changed("count") && f.count < 1 {
		return r, cli.Usagef("--count %d: want at least 1", f.count)
	}
	r.Count, r.CPUs, r.Exclude = f.count, f.cpus.CPUs, f.exclude.CPUs
	return r, nil
}

// pick picks the CPUs the flags ask for on the host under --root. Notes
// go to stderr.
func (a *app) pick(fs *pflag.FlagSet, f *pickFlags) (*affinity.Pick, error) {
	r, err := f.request(fs)
	if err != nil {
		return nil, err
	}
	p, err := affinity.PickOn(a.root, r)
	if err != nil {
		return nil, usageIf(err)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(a.stderr, "irqnuma: note: %s\n", n)
	}
	return p, nil
}

func newMaskCmd(a *app) *cobra.Command {
	var f pickFlags
	var format string
	var mem bool
	c := &cobra.Command{
		Use:   "mask (--nic NAME | --node N | --cpus LIST) [flags]",
		Short: "Print the CPUs a benchmark should run on, in the form a tool takes",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(affinity.MaskFormats, format) {
				return cli.Usagef("--format %q: want one of %s", format, strings.Join(affinity.MaskFormats, ", "))
			}
			if mem && format != "systemd" {
				return cli.Usagef("--mem adds NUMAMask= to --format systemd only (numactl and docker always carry the nodes)")
			}
			p, err := a.pick(cmd.Flags(), &f)
			if err != nil {
				return err
			}
			if a.json() {
				return a.writeJSON(p.Doc())
			}
			s, err := p.Format(format, mem)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(a.stdout, s)
			return err
		},
	}
	f.add(c.Flags())
	c.Flags().StringVar(&format, "format", "list", "output form: "+strings.Join(affinity.MaskFormats, ", "))
	c.Flags().BoolVar(&mem, "mem", false, "with --format systemd, also bind memory to the CPUs' nodes")
	return c
}
