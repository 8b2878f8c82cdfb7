package main

import (
	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/judge/zc"
	"github.com/irqnuma/irqnuma/internal/render/report"
)

func newZCCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "zc",
		Short: "Check a NIC for io_uring zero-copy receive and send, and prepare it for receive",
		Args:  usageArgs(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	c.AddCommand(newZCCheckCmd(a), newZCPrepareCmd(a))
	return c
}

func newZCCheckCmd(a *app) *cobra.Command {
	var (
		queue, port int
		send        bool
	)
	c := &cobra.Command{
		Use:   "check IF [--queue Q] [--port P] | check IF --send",
		Short: "Say which prerequisites of zero-copy receive (or send) hold on a NIC, with the evidence and the fix",
		Args:  namedArgs(cobra.ExactArgs(1), "IF, the NIC to check (irqnuma topology lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := zc.Options{Send: send}
			if cmd.Flags().Changed("queue") {
				o.Queue = &queue
			}
			if cmd.Flags().Changed("port") {
				o.Port = &port
			}
			h, err := topology.Read(a.fs)
			if err != nil {
				return err
			}
			r, err := zc.Check(a.fs, h, args[0], o)
			if err != nil {
				return err
			}
			if a.json() {
				err = a.writeJSON(jsondoc.SchemaZC, r)
			} else {
				err = report.WriteZC(a.stdout, r)
			}
			if err != nil {
				return err
			}
			if r.Blocker() != nil {
				return cli.Exit(cli.ExitFindings, nil)
			}
			return nil
		},
	}
	c.Flags().IntVar(&queue, "queue", 0, "the rx queue for zero-copy receive (default: the last rx queue, which ethtool -X IF equal N-1 leaves out)")
	c.Flags().IntVar(&port, "port", 0, "the TCP port the application receives on (default: any port a flow rule steers to the queue)")
	c.Flags().BoolVar(&send, "send", false, "check zero-copy send instead: the kernel, io_uring and the NIC's IOMMU mode")
	return c
}
