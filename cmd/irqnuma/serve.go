package main

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/audit"
	"github.com/irqnuma/irqnuma/exporter"
	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/safetext"
)

func newServeCmd(a *app) *cobra.Command {
	var (
		listen string
		sel    selection
	)
	c := &cobra.Command{
		Use:         "serve",
		Annotations: map[string]string{"json": "none"},
		Short:       "Export the audit as Prometheus metrics on /metrics",
		Args:        usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sel.check(); err != nil {
				return err
			}
			host, _, err := net.SplitHostPort(listen)
			if err != nil {
				return cli.Usagef("--listen %q: want HOST:PORT: %v", listen, err)
			}
			// What the host lacks now may come later (a NIC's driver, a
			// mount): said, and served as irqnuma_scrape_error 1, no exit.
			if _, err := audit.Read(a.fs, sel.Selection); err != nil {
				fmt.Fprintf(a.stderr, "irqnuma: warning: cannot read the host yet: %s\n", safetext.Escape(err.Error()))
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("listen: %w", err)
			}
			if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
				fmt.Fprintf(a.stderr, "irqnuma: warning: %s is not a loopback address: anyone who can reach it sees this host's layout\n", listen)
			}
			fmt.Fprintf(a.stderr, "irqnuma: serving http://%s/metrics\n", ln.Addr())
			return exporter.Serve(a.ctx, ln, exporter.New(a.fs, sel.Selection, a.stderr).Handler())
		},
	}
	c.Flags().StringVar(&listen, "listen", exporter.DefaultListen, "address to serve /metrics on")
	sel.flags(c, "audit only this NIC (repeatable)", "watch")
	return c
}
