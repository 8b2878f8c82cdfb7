package main

import (
	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/render/report"
)

func newIRQCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "irq",
		Short: "List, pin and restore IRQ affinity",
		Args:  usageArgs(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	c.AddCommand(newIRQListCmd(a), newIRQPinCmd(a), newIRQRestoreCmd(a))
	return c
}

func newIRQListCmd(a *app) *cobra.Command {
	var nics []string
	var all, steer bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List the IRQs of every NIC (or --all) with where they may go and go",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, t, err := irq.Read(a.fs, irq.Options{All: all, NICs: nics})
			if err != nil {
				return err
			}
			var sd *report.SteerDoc
			if steer {
				sh, threads, err := audit.ReadSteer(a.fs, h, t, nics)
				if err != nil {
					return err
				}
				sd = report.Steering(t, sh, threads)
			}
			if a.json() {
				return report.WriteIRQsJSON(a.stdout, h, t, sd)
			}
			doc := report.IRQs(h, t)
			doc.Steer = sd
			return report.WriteIRQs(a.stdout, doc)
		},
	}
	c.Flags().StringArrayVar(&nics, "nic", nil, "only this NIC's IRQs (repeatable)")
	c.Flags().BoolVar(&all, "all", false, "list every numbered IRQ, not only NIC IRQs")
	c.Flags().BoolVar(&steer, "steer", false, "also read and show the listed NICs' steering (as topology does)")
	return c
}
