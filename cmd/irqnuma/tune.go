package main

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/render/report"
	"github.com/irqnuma/irqnuma/internal/shutdown"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
)

type tuneFlags struct {
	sel     selection
	failOn  string
	appCPUs cpuset.ListFlag
	reserve int
	dryRun  bool
	state   string
}

func newTuneCmd(a *app) *cobra.Command {
	var f tuneFlags
	c := &cobra.Command{
		Use:         "tune",
		Annotations: map[string]string{annotWrites: writesUnlessDryRun},
		Short:       "Fix what the audit finds, in one transaction that restore undoes, and audit again",
		Args:        usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(failOnLevels[:3], f.failOn) {
				return cli.Usagef("--fail-on %q: want info, warning or error", f.failOn)
			}
			if f.reserve < 0 {
				return cli.Usagef("--reserve %d: want a number of cores", f.reserve)
			}
			if f.reserve > 0 && !f.appCPUs.CPUs.IsEmpty() {
				return cli.Usagef("--reserve and --app-cpus are exclusive")
			}
			if err := f.sel.check(a); err != nil {
				return err
			}
			return runTune(a, f)
		},
	}
	f.sel.flags(c, "tune only this NIC (repeatable)", "keep CPUs for")
	c.Flags().StringVar(&f.failOn, "fail-on", "warning", "plan a fix for every finding at or above: info, warning or error")
	c.Flags().Var(&f.appCPUs, "app-cpus", "keep these CPUs for the application (list form): no queue IRQ, NAPI thread or RPS goes there")
	c.Flags().IntVar(&f.reserve, "reserve", 0, "keep this many cores of each NIC's node for the application (the highest-numbered)")
	c.Flags().BoolVar(&f.dryRun, "dry-run", false, "print the plan and change nothing")
	c.Flags().StringVar(&f.state, "state", "", "state file to save the old values to (default <root>/var/lib/irqnuma/state-<UTC time>.json)")
	return c
}

func runTune(a *app, f tuneFlags) error {
	failOn := audit.Severity(f.failOn)
	req := tune.TuneRequest{Root: a.fs, Selection: f.sel.Selection, FailOn: failOn, AppCPUs: f.appCPUs.CPUs,
		Reserve: f.reserve, DryRun: f.dryRun, StatePath: f.state, Writer: a.writer, Threads: a.threads, Now: a.now()}
	if !f.dryRun {
		if err := needRoot(a, "tune", "; --dry-run shows the plan without root"); err != nil {
			return err
		}
		defer shutdown.Critical()()
		req.Planned = func(res *tune.TuneResult) error {
			if a.json() {
				return nil
			}
			return report.WriteTunePlanned(a.stderr, res, failOn)
		}
	}
	if a.fs.Live() {
		set, err := nicset.OpenSetter(a.fs)
		if err != nil {
			return err
		}
		defer set.Close()
		req.Setter = set
	}
	res, err := tune.Tune(a.ctx, req)
	if err != nil {
		return err
	}
	if a.json() {
		err = a.writeJSON(jsondoc.SchemaTune, report.NewTuneDoc(res, failOn, f.dryRun))
	} else {
		err = report.WriteTune(a.stdout, res, failOn, f.dryRun)
	}
	if err != nil {
		return err
	}
	if res.Pin != nil && !f.dryRun && res.Pin.StateFile != "" {
		return tuneOutcome(a, res)
	}
	if !f.dryRun {
		fmt.Fprintln(a.stderr, "nothing to change")
	}
	return nil
}

// tuneOutcome says how a tune that wrote ended: the state file and the
// restore line, or why it failed and was rolled back.
func tuneOutcome(a *app, res *tune.TuneResult) error {
	if err := res.Err(); err != nil {
		return pinOutcome(a, res.Pin)
	}
	fmt.Fprintf(a.stderr, "changed %d of %d; old values saved in %s; undo with: irqnuma restore\n", res.Pin.Changed, res.Pin.Changes, res.Pin.StateFile)
	return nil
}

// newRestoreCmd is `irqnuma restore`, irq restore's name for undoing a
// tune (and anything irq pin or zc prepare saved).
func newRestoreCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:         "restore [FILE]",
		Annotations: map[string]string{annotWrites: writesAlways},
		Short:       "Undo a tune, pin or zc prepare: put back every value its state file saved",
		Args:        namedArgs(cobra.MaximumNArgs(1), "at most one FILE, the state file a tune or pin wrote (default: the newest)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRestore(a, args)
		},
	}
}
