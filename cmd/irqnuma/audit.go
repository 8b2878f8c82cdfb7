package main

import (
	"errors"
	"slices"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/render/report"
	"github.com/irqnuma/irqnuma/internal/run/exporter"
	"github.com/irqnuma/irqnuma/internal/screen"
)

// failOnLevels are the values of --fail-on; "never" maps to "".
var failOnLevels = []string{"info", "warning", "error", "never"}

func newAuditCmd(a *app) *cobra.Command {
	var (
		sel      selection
		failOn   string
		textfile string
		zcMode   string
		appCPUs  cpuset.ListFlag
	)
	c := &cobra.Command{
		Use:   "audit",
		Short: "Say whether the NICs, their queue IRQs and benchmark processes sit on the same node",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(failOnLevels, failOn) {
				return cli.Usagef("--fail-on %q: want info, warning, error or never", failOn)
			}
			if err := sel.check(a); err != nil {
				return err
			}
			sel.AppCPUs = appCPUs.CPUs
			switch audit.ZCMode(zcMode) {
			case "", audit.ZCModeReceive, audit.ZCModeSend:
				sel.ZC = audit.ZCMode(zcMode)
			default:
				return cli.Usagef("--zc %q: want rx or tx", zcMode)
			}
			// An unwritable textfile fails the command after the audit is shown.
			st, err, writeErr := exporter.ReadAudit(a.fs, sel.Selection, textfile)
			if err != nil {
				return errors.Join(err, writeErr)
			}
			fs, doc := st.Findings, report.NewAuditDoc(st)
			var min audit.Severity
			if failOn != "never" {
				min = audit.Severity(failOn)
			}
			if a.json() {
				err = a.writeJSON(jsondoc.SchemaAudit, doc)
			} else {
				err = report.WriteAudit(a.stdout, doc, min, screen.Width(a.getenv("COLUMNS"), a.stdout))
			}
			if err != nil || writeErr != nil {
				return errors.Join(err, writeErr)
			}
			if min != "" && len(audit.AtOrAbove(fs, min)) > 0 {
				return cli.Exit(cli.ExitFindings, nil)
			}
			return nil
		},
	}
	sel.flags(c, "audit only this NIC (repeatable)", "watch")
	c.Flags().StringVar(&zcMode, "zc", "", "judge each NIC's io_uring zero-copy prerequisites too: rx (receive) or tx (send), as zc check does")
	c.Flags().StringVar(&failOn, "fail-on", "warning", "exit 3 when a finding is at or above: info, warning, error or never")
	c.Flags().Var(&appCPUs, "app-cpus", "CPUs kept for the application (list form, as tune takes them): queue IRQs there are a finding (irq-app-cpu)")
	c.Flags().StringVar(&textfile, "textfile", "", "also write the findings as Prometheus metrics to this file, atomically (node_exporter textfile collector)")
	return c
}
