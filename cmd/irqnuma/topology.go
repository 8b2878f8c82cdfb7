package main

import (
	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/render/report"
)

func newTopologyCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "topology",
		Short: "Show NUMA nodes, CPUs and NICs, each NIC under its node",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, t, err := irq.Read(a.fs, irq.Options{})
			if err != nil {
				return err
			}
			h.NamePCIDevices()
			sh, threads, err := audit.ReadSteer(a.fs, h, t, nil)
			if err != nil {
				return err
			}
			doc := report.Topology(h, t)
			doc.Steer = report.Steering(t, sh, threads)
			if a.json() {
				return a.writeJSON(jsondoc.SchemaTopology, doc)
			}
			return report.WriteTopology(a.stdout, doc)
		},
	}
}
