package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/judge/flow"
	"github.com/irqnuma/irqnuma/internal/render/report"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// flowFlags are flow's what-if flags, as given.
type flowFlags struct {
	nic, key, table, fields, fn string
	observe                     time.Duration
}

// whatIf reads the what-if flags (the table from a file of this
// machine, not of --root).
func (f flowFlags) whatIf() (flow.WhatIf, error) {
	var w flow.WhatIf
	var err error
	if f.key != "" {
		if w.Key, err = flow.ParseKey(f.key); err != nil {
			return w, err
		}
	}
	if f.table != "" {
		if w.Table, err = flow.ReadTable(f.table); err != nil {
			return w, err
		}
	}
	if f.fields != "" {
		h, err := flow.ParseFields(f.fields)
		if err != nil {
			return w, err
		}
		w.Fields = &h
	}
	if f.fn != "" {
		fn, err := flow.ParseFunc(f.fn)
		if err != nil {
			return w, err
		}
		w.Func = &fn
	}
	return w, nil
}

// flowArgs wants a flow, or none with --pid/--comm.
func flowArgs(sel *proc.Selection) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case sel.Any() && len(args) > 0:
			return cli.Usagef("--pid/--comm take the flows from the process's sockets: give no flow (got %q)", args)
		case !sel.Any() && len(args) != 3:
			return cli.Usagef("want udp|tcp SRC[:PORT] DST[:PORT], or --pid/--comm (got %d arguments)", len(args))
		}
		return nil
	}
}

func newFlowCmd(a *app) *cobra.Command {
	var ff flowFlags
	var sel proc.Selection
	c := &cobra.Command{
		Use:   "flow udp|tcp SRC[:PORT] DST[:PORT] | --pid PID | --comm NAME",
		Short: "Say which queue, IRQ or NAPI thread, CPU and node one flow's received packets land on",
		Args:  flowArgs(&sel),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, err := ff.whatIf()
			if err != nil {
				return err
			}
			opt := flow.Options{NIC: ff.nic, WhatIf: w}
			if sel.Any() {
				if ff.observe != 0 {
					return cli.Usagef("--observe watches one flow: give it as udp|tcp SRC:PORT DST:PORT, not --pid/--comm")
				}
				if err := a.resolvePods(&sel); err != nil {
					return err
				}
				ps, err := flow.PredictProcesses(a.fs, sel, opt)
				if err != nil {
					return err
				}
				if a.json() {
					return a.writeJSON(jsondoc.SchemaFlowProcesses, report.FlowProcessesDoc{Processes: ps})
				}
				return report.WriteFlowProcesses(a.stdout, ps)
			}
			f, err := flow.Parse(args[0], args[1], args[2])
			if err != nil {
				return err
			}
			p, err := flow.Predict(a.fs, f, opt)
			if err != nil {
				return err
			}
			if err := observeFlow(a, p, ff.observe); err != nil {
				return err
			}
			if a.json() {
				return a.writeJSON(jsondoc.SchemaFlow, p)
			}
			return report.WriteFlow(a.stdout, p)
		},
	}
	c.Flags().StringVar(&ff.nic, "nic", "", "the receiving NIC (default: the one owning DST's address)")
	c.Flags().StringVar(&ff.key, "rss-key", "", "what-if RSS key, hex: colon-separated as ethtool -x prints it, or plain")
	c.Flags().StringVar(&ff.table, "rss-table", "", "what-if indirection table FILE: queue numbers, or ethtool -x output as pasted")
	c.Flags().StringVar(&ff.fields, "rss-fields", "", "what-if hash fields in ethtool's letters: sd, sdfn")
	c.Flags().StringVar(&ff.fn, "rss-func", "", "what-if hash function: toeplitz or xor")
	c.Flags().DurationVar(&ff.observe, "observe", 0, "sample the NIC's per-queue rx counters before and after DURATION (2s) while the flow runs, and say whether it landed on the predicted queue")
	c.Flags().IntSliceVar(&sel.PIDs, "pid", nil, "every connected socket of this process, as a flow (repeatable)")
	c.Flags().StringArrayVar(&sel.Comms, "comm", nil, "every connected socket of every process whose comm is exactly this (repeatable)")
	c.Flags().StringArrayVar(&sel.Cgroups, "cgroup", nil, "every connected socket of every process in this control group (repeatable)")
	podFlags(c, &sel, "every connected socket of")
	return c
}

// observeFlow samples the receiving NIC's per-queue rx counters over d
// (none when d is 0) and judges the prediction by them.
func observeFlow(a *app, p *flow.Path, d time.Duration) error {
	switch {
	case d == 0:
		return nil
	case d < 0:
		return cli.Usagef("--observe %s: want a positive duration", d)
	case p.NIC == "":
		return cli.Usagef("--observe needs the receiving NIC: %s (name it with --nic)", p.NICBy)
	}
	// A word on stderr once the first sample is taken: traffic started
	// after it is counted.
	o, err := flow.Observe(a.fs, p.NIC, d, func(first *flow.Counters) {
		fmt.Fprintf(a.stderr, "observing %s's rx queues for %s (%s)\n", p.NIC, d, first.Source)
	})
	if err != nil {
		return err
	}
	predicted := unknown.Not[uint32](p.Queue.Why())
	if q, ok := p.Queue.Get(); ok {
		predicted = unknown.Of(uint32(q))
	}
	o.Judge(predicted)
	p.Observed = o
	return nil
}
