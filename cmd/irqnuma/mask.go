package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/safetext"
	"github.com/irqnuma/irqnuma/internal/tune"
)

// pickFlags are the CPU selection flags mask and exec share.
type pickFlags struct {
	nic                    string
	node, count            int
	cpus, exclude          cpuset.ListFlag
	excludeIRQ, onePerCore bool
	cgroup, pod, container string
}

// add adds the flags to fs.
func (f *pickFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.nic, "nic", "", "candidates: the CPUs local to this NIC")
	fs.IntVar(&f.node, "node", -1, "candidates: the CPUs of this NUMA node")
	fs.Var(&f.cpus, "cpus", "candidates: this CPU list (isolated CPUs are kept only when named here)")
	fs.Var(&f.exclude, "exclude", "drop these CPUs (a CPU list)")
	fs.BoolVar(&f.excludeIRQ, "exclude-irq-cpus", false, "drop the CPUs where the NIC's queue IRQs land (and their SMT siblings with --one-per-core)")
	fs.BoolVar(&f.onePerCore, "one-per-core", false, "keep the lowest-numbered thread of each core")
	fs.IntVar(&f.count, "count", 0, "keep the first K CPUs in ascending order (fewer left is an error)")
	fs.StringVar(&f.cgroup, "cgroup", "", "keep only the CPUs this control group may use (cpuset.cpus.effective); alone, they are the candidates, isolated ones included")
	fs.StringVar(&f.pod, "pod", "", "as --cgroup, for the CPUs any container of this Kubernetes pod (NAMESPACE/NAME) may use")
	fs.StringVar(&f.container, "container", "", "as --cgroup, for this container (its runtime ID or a unique prefix)")
}

// options is what the flags of fs said: a flag not given is left unset
// (a --cpus given is never empty: cpuset.ListFlag refuses that).
func (f *pickFlags) options(fs *pflag.FlagSet) tune.PickOptions {
	o := tune.PickOptions{CPUs: f.cpus.CPUs, Exclude: f.exclude.CPUs, ExcludeIRQ: f.excludeIRQ, OnePerCore: f.onePerCore}
	if fs.Changed("nic") {
		o.NIC = &f.nic
	}
	if fs.Changed("node") {
		o.Node = &f.node
	}
	if fs.Changed("count") {
		o.Count = &f.count
	}
	return o
}

// pick picks the CPUs the flags ask for on the host under --root. Notes
// go to stderr.
func (a *app) pick(fs *pflag.FlagSet, f *pickFlags) (*tune.Pick, error) {
	p, _, err := a.pickIn(fs, f)
	return p, err
}

// pickIn is pick that also returns the --cgroup group, nil without one.
func (a *app) pickIn(fs *pflag.FlagSet, f *pickFlags) (*tune.Pick, *proc.Cgroup, error) {
	o := f.options(fs)
	w, g, err := a.withinFlags(fs, f)
	if err != nil {
		return nil, nil, err
	}
	o.Within = w
	r, err := o.Request()
	if err != nil {
		return nil, nil, err
	}
	p, err := tune.PickOn(a.fs, r)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range p.Notes {
		fmt.Fprintf(a.stderr, "irqnuma: note: %s\n", safetext.Escape(n))
	}
	return p, g, nil
}

// withinFlags is the group --cgroup, --pod or --container names (at most
// one of them), nil for none; and the --cgroup group itself (exec --join
// starts the command inside it), nil for the others.
func (a *app) withinFlags(fs *pflag.FlagSet, f *pickFlags) (*tune.Within, *proc.Cgroup, error) {
	var sel proc.Selection
	var given []string
	for _, name := range []string{"cgroup", "pod", "container"} {
		if fs.Changed(name) {
			given = append(given, "--"+name)
		}
	}
	switch {
	case len(given) > 1:
		return nil, nil, cli.Usagef("%s: give one group to pick inside", strings.Join(given, " and "))
	case fs.Changed("cgroup"):
		return tune.WithinGroup(a.fs, f.cgroup)
	case fs.Changed("pod"):
		sel.Pods = []string{f.pod}
	case fs.Changed("container"):
		sel.Containers = []string{f.container}
	default:
		return nil, nil, nil
	}
	w, err := a.withinPod(sel)
	return w, nil, err
}

// withinPod reads the CPUs of a --pod's containers' groups (their union:
// what any of them may use) or of a --container's. One not found, or
// whose CPUs are unknown, is a usage error naming it.
func (a *app) withinPod(sel proc.Selection) (*tune.Within, error) {
	if err := a.resolvePods(&sel); err != nil {
		return nil, err
	}
	return tune.WithinPod(a.fs, sel)
}

func newMaskCmd(a *app) *cobra.Command {
	var f pickFlags
	var format string
	var mem bool
	c := &cobra.Command{
		Use:   "mask (--nic NAME | --node N | --cpus LIST | --cgroup PATH | --pod NS/NAME | --container ID) [flags]",
		Short: "Print the CPUs a benchmark should run on, in the form a tool takes",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(tune.MaskFormats, format) {
				return cli.Usagef("--format %q: want one of %s", format, strings.Join(tune.MaskFormats, ", "))
			}
			if mem && format != "systemd" {
				return cli.Usagef("--mem adds NUMAMask= to --format systemd only (numactl and docker always carry the nodes)")
			}
			p, err := a.pick(cmd.Flags(), &f)
			if err != nil {
				return err
			}
			if a.json() {
				return a.writeJSON(jsondoc.SchemaMask, p.Doc())
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
	c.Flags().StringVar(&format, "format", "list", "output form: "+strings.Join(tune.MaskFormats, ", "))
	c.Flags().BoolVar(&mem, "mem", false, "with --format systemd, also bind memory to the CPUs' nodes")
	return c
}
