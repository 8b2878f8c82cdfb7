package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/render/report"
	"github.com/irqnuma/irqnuma/internal/shutdown"
	"github.com/irqnuma/irqnuma/internal/tune"
)

type pinFlags struct {
	node      *int // --node; nil when not given
	cpus      cpuset.ListFlag
	exclude   cpuset.ListFlag
	strategy  string
	dryRun    bool
	keepGoing bool
	state     string
	xps       bool
	config    string          // --config: the options per NIC from a file
	pinConfig *tune.PinConfig // read from config
}

func newIRQPinCmd(a *app) *cobra.Command {
	var f pinFlags
	c := &cobra.Command{
		Use:         "pin NIC...",
		Annotations: map[string]string{annotWrites: writesUnlessDryRun},
		Short:       "Move a NIC's IRQs to its own node's CPUs, saving the old affinity for restore",
		Long: `Move a NIC's IRQs to its own node's CPUs, saving the old affinity for restore.

With threaded NAPI (/sys/class/net/NIC/threaded), the NIC's napi/NIC-ID kernel
threads move too, in the same transaction and state file: each with the IRQ
netdev pairs it with (napi-get's IRQ, or queue-get's queue), and a thread that
cannot be paired (a kernel without napi-get; a driver that ties no NAPI to a
queue or IRQ, as virtio_net) to the CPUs the pin gives the NIC's queue IRQs,
saying why. irq restore puts IRQs and threads back.`,
		Args: pinArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.config != "" {
				return runPinConfig(a, cmd, f)
			}
			if cmd.Flags().Changed("node") {
				v, _ := cmd.Flags().GetInt("node")
				if v < 0 {
					return cli.Usagef("--node %d: want a node id", v)
				}
				f.node = &v
			}
			if f.node != nil && cmd.Flags().Changed("cpus") {
				return cli.Usagef("--node and --cpus are exclusive")
			}
			return runPin(a, args, f)
		},
	}
	c.Flags().Int("node", -1, "target this node's online CPUs instead of the NIC's own node")
	c.Flags().Var(&f.cpus, "cpus", "target exactly these CPUs (list form, e.g. 16-23); isolated CPUs named here are used")
	c.Flags().Var(&f.exclude, "exclude", "leave these CPUs out (list form), e.g. the benchmark's")
	c.Flags().StringVar(&f.strategy, "strategy", "spread", "spread (one CPU per queue) or node (the whole set per queue)")
	c.Flags().BoolVar(&f.dryRun, "dry-run", false, "print the plan and change nothing")
	c.Flags().BoolVar(&f.keepGoing, "keep-going", false, "carry on past a failed write instead of rolling back")
	c.Flags().StringVar(&f.state, "state", "", "state file to save the old values to (default <root>/var/lib/irqnuma/state-<UTC time>.json)")
	c.Flags().BoolVar(&f.xps, "xps", false, "also set each tx queue's xps_cpus to its queue IRQ's CPUs")
	c.Flags().StringVar(&f.config, "config", "", "read the NICs and their --node/--cpus/--exclude/--strategy/--xps from this YAML file (one entry per NIC)")
	return c
}

// needRoot refuses a change to the live host without root.
func needRoot(a *app, what, instead string) error {
	if a.fs.Live() && a.geteuid() != 0 {
		return fmt.Errorf("%s changes the live host's IRQ affinity and needs root (run it with sudo%s)", what, instead)
	}
	return nil
}

// pinRequest turns the flags into what tune.Pin takes.
func pinRequest(a *app, nics []string, f pinFlags) (tune.PinRequest, error) {
	req := tune.PinRequest{Root: a.fs, NICs: nics, Config: f.pinConfig, DryRun: f.dryRun, KeepGoing: f.keepGoing,
		StatePath: f.state, Writer: a.writer, Threads: a.threads, Now: a.now(),
		Options: tune.PlanOptions{Node: f.node, XPS: f.xps, CPUs: f.cpus.CPUs, Exclude: f.exclude.CPUs}}
	var err error
	if req.Options.Strategy, err = tune.ParseStrategy(f.strategy); err != nil {
		return req, cli.Usagef("--strategy: %v", err)
	}
	return req, nil
}

func runPin(a *app, nics []string, f pinFlags) error {
	req, err := pinRequest(a, nics, f)
	if err != nil {
		return err
	}
	if !f.dryRun {
		if err := needRoot(a, "irq pin", "; --dry-run shows the plan without root"); err != nil {
			return err
		}
		// A stop signal lets the writes finish or roll back: Pin stops at
		// it and undoes what it wrote.
		defer shutdown.Critical()()
	}
	// Where the IRQs go, and whether irqbalance will move them back, is
	// said before anything is written.
	req.Planned = func(res *tune.PinResult) error { return report.WritePinPlanned(a.stderr, res) }
	res, err := tune.Pin(a.ctx, req)
	if err != nil {
		return err
	}
	doc := report.NewPinDoc(res, f.dryRun)
	if f.dryRun || res.Changes == 0 {
		if res.Changes == 0 && !f.dryRun {
			fmt.Fprintln(a.stderr, "nothing to change: every IRQ is already where the plan puts it")
		}
		return writePin(a, doc, false, true)
	}
	report.WriteManagedSkips(a.stderr, res)
	if err := writePin(a, doc, true, true); err != nil {
		return err
	}
	return pinOutcome(a, res)
}

// pinOutcome says how a pin that wrote ended, and with which exit code:
// 128+signo when a stop signal rolled it back, 1 for any other failure.
func pinOutcome(a *app, res *tune.PinResult) error {
	report.WritePinFailures(a.stderr, res)
	if err := res.Err(); err != nil {
		code := cli.ExitError
		if c, ok := shutdown.ExitCode(a.ctx); ok && res.Stop == tune.StopInterrupted {
			code = c
		}
		return cli.Exit(code, err)
	}
	fmt.Fprintf(a.stderr, "changed %d of %d; old values saved in %s; undo with: irqnuma irq restore %s\n", res.Changed, res.Changes, res.StateFile, res.StateFile)
	return nil
}

// writePin writes the plan (and with results, what became of each step;
// withAction, what each was to do).
func writePin(a *app, doc report.PinDoc, results, withAction bool) error {
	if a.json() {
		return a.writeJSON(jsondoc.SchemaPin, doc)
	}
	if len(doc.Plan) > 0 || len(doc.Threads) == 0 {
		if err := report.WritePin(a.stdout, doc.Plan, results, withAction); err != nil {
			return err
		}
	}
	if err := report.WritePinThreads(a.stdout, doc.Threads, results); err != nil {
		return err
	}
	if err := report.WriteSteerRows(a.stdout, doc.Steer); err != nil {
		return err
	}
	if err := report.WriteSettingRows(a.stdout, doc.Settings); err != nil {
		return err
	}
	if err := report.WriteIrqbalanceRow(a.stdout, doc.Irqbalance); err != nil {
		return err
	}
	report.WriteNotes(a.stderr, doc.Notes)
	return nil
}

func newIRQRestoreCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:         "restore [FILE]",
		Annotations: map[string]string{annotWrites: writesAlways},
		Short:       "Put back the IRQ affinity (and xps_cpus) a pin saved",
		Args:        namedArgs(cobra.MaximumNArgs(1), "at most one FILE, the state file a pin wrote (default: the newest pin's)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRestore(a, args)
		},
	}
}

func runRestore(a *app, args []string) error {
	if err := needRoot(a, "irq restore", ""); err != nil {
		return err
	}
	path := ""
	if len(args) == 1 {
		path = args[0]
	}
	defer shutdown.Critical()()
	res, err := tune.Restore(a.ctx, a.fs, path, a.writer, a.threads)
	if err != nil {
		return err
	}
	if err := writePin(a, report.NewRestoreDoc(res), true, false); err != nil {
		return err
	}
	if err := res.Err(); err != nil {
		report.WriteRestoreFailures(a.stderr, res)
		return cli.Exit(cli.ExitError, err)
	}
	report.WriteRestored(a.stderr, res)
	return nil
}
