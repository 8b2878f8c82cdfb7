package main

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/audit"
	"github.com/irqnuma/irqnuma/exporter"
	"github.com/irqnuma/irqnuma/internal/cli"
)

func newServeCmd(a *app) *cobra.Command {
	var (
		listen string
		sel    selection
	)
	c := &cobra.Command{
		Use:   "serve",
		Short: "Export the audit as Prometheus metrics on /metrics",
		Long: `serve is a Prometheus exporter: on every scrape of /metrics it reads the host
afresh and runs the audit (the same checks as irqnuma audit), and answers

  irqnuma_finding{check,severity,nic,subject}  1 per current finding
  irqnuma_irq_local{irq,nic,queue}             1 local, 0 remote (absent when unknown)
  irqnuma_irq_effective_cpu{irq,nic,queue}     the one CPU the IRQ is delivered to
  irqnuma_nic_numa_node{nic}                   the NIC's local node (absent when unknown)
  irqnuma_scrape_duration_seconds, irqnuma_scrape_error, irqnuma_build_info

A scrape only reads; nothing else is served. The default address is loopback:
listening elsewhere shows the host's layout to whoever can reach the port.
Read failures are logged on stderr and answered with irqnuma_scrape_error 1.`,
		Example: `  irqnuma serve
  irqnuma serve --listen 127.0.0.1:9143 --nic eth0 --comm iperf3
  irqnuma serve --root host1.tar.gz --listen 127.0.0.1:9144`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sel.check(); err != nil {
				return err
			}
			host, _, err := net.SplitHostPort(listen)
			if err != nil {
				return cli.Usagef("--listen %q: want HOST:PORT: %v", listen, err)
			}
			// Fail now, not at the first scrape, on a root that cannot be read.
			if _, err := audit.Read(a.root, sel.Selection); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("listen: %w", err)
			}
			if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				fmt.Fprintf(a.stderr, "irqnuma: warning: %s is not a loopback address: anyone who can reach it sees this host's layout\n", listen)
			}
			fmt.Fprintf(a.stderr, "irqnuma: serving http://%s/metrics\n", ln.Addr())
			return exporter.Serve(a.ctx, ln, exporter.New(a.root, sel.Selection, a.stderr).Handler())
		},
	}
	c.Flags().StringVar(&listen, "listen", exporter.DefaultListen, "address to serve /metrics on")
	sel.flags(c, "audit only this NIC (repeatable)", "watch")
	return c
}
