package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/render/report"
	"github.com/irqnuma/irqnuma/internal/shutdown"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
)

type zcPrepareFlags struct {
	queue, port     int
	dryRun, partial bool
	state           string
}

func newZCPrepareCmd(a *app) *cobra.Command {
	var f zcPrepareFlags
	c := &cobra.Command{
		Use:   "prepare NIC --queue Q --port P",
		Short: "Set a NIC up for zero-copy receive on one queue, undoably (irq restore)",
		Args:  namedArgs(cobra.ExactArgs(1), "NIC, the one NIC to prepare (irqnuma topology lists them)"),
		// No JSON document yet: -o json is refused rather than mixed
		// with the plan's text.
		Annotations: map[string]string{"json": "none", annotWrites: writesUnlessDryRun},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("queue") || !cmd.Flags().Changed("port") {
				return cli.Usagef("zc prepare needs --queue and --port")
			}
			if f.queue < 0 || f.queue > 4095 {
				return cli.Usagef("--queue %d: want a queue index", f.queue)
			}
			if f.port < 1 || f.port > 65535 {
				return cli.Usagef("--port %d: want 1 to 65535", f.port)
			}
			return runZCPrepare(a, args[0], f)
		},
	}
	c.Flags().IntVar(&f.queue, "queue", 0, "the rx queue zero-copy receive binds to")
	c.Flags().IntVar(&f.port, "port", 0, "the TCP port whose flow the ntuple rule steers to the queue")
	c.Flags().BoolVar(&f.dryRun, "dry-run", false, "show the plan and any refusal; change nothing")
	c.Flags().BoolVar(&f.partial, "partial", false, "apply the steps the NIC supports even though it cannot bind zero-copy receive")
	c.Flags().StringVar(&f.state, "state", "", "state file to save the old values to (default <root>/var/lib/irqnuma/state-<UTC time>.json)")
	return c
}

// errZCRefused is the refusal of a NIC that cannot bind zero-copy
// receive.
var errZCRefused = errors.New("cannot do zero-copy receive")

func runZCPrepare(a *app, nic string, f zcPrepareFlags) error {
	plan, err := tune.PlanZCOn(a.fs, nic, tune.ZCOptions{Queue: f.queue, Port: f.port})
	if err != nil {
		return err
	}
	report.WriteZCPlan(a.stdout, plan)
	refusal := error(nil)
	if len(plan.Blockers) > 0 {
		refusal = fmt.Errorf("%s %w: %s", nic, errZCRefused, plan.Blockers[0])
	}
	if f.dryRun {
		if refusal != nil && !f.partial {
			return cli.Exit(cli.ExitError, fmt.Errorf("%w; prepare would change nothing (--partial applies the steps it can)", refusal))
		}
		return nil
	}
	if refusal != nil && !f.partial {
		return cli.Exit(cli.ExitError, fmt.Errorf("%w; nothing was changed (--partial applies the steps it can)", refusal))
	}
	return applyZC(a, plan, f, refusal)
}

func applyZC(a *app, plan *tune.ZCPlan, f zcPrepareFlags, refusal error) error {
	if err := needRoot(a, "zc prepare", "; --dry-run shows the plan without root"); err != nil {
		return err
	}
	set, err := nicset.OpenSetter(a.fs)
	if err != nil {
		return err
	}
	defer set.Close()
	defer shutdown.Critical()()
	req, noIRQ, err := plan.PinRequest(a.fs, set)
	if err != nil {
		return err
	}
	if noIRQ {
		fmt.Fprintf(a.stderr, "%s queue %d has no IRQ yet: run zc prepare again once the channels are set to pin it\n", plan.NIC, plan.Queue)
	}
	req.Writer, req.Threads, req.Now, req.StatePath = a.writer, a.threads, a.now(), f.state
	res, err := tune.Pin(a.ctx, req)
	if err != nil {
		return err
	}
	if err := writePin(a, report.NewPinDoc(res, false), true, true); err != nil {
		return err
	}
	if res.Changes > 0 {
		if err := pinOutcome(a, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(a.stderr, "nothing to change: the NIC is already as the plan puts it")
	}
	if refusal != nil {
		fmt.Fprintf(a.stderr, "%v: the steps it supports are applied, the others skipped; the NIC still cannot bind zero-copy receive\n", refusal)
	}
	return nil
}
