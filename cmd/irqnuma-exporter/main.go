// Command irqnuma-exporter is irqnuma's Prometheus exporter: on every
// scrape of /metrics it reads the host afresh and runs the audit (package
// exporter computes the irqnuma_* series, as it does for `irqnuma audit
// --textfile`), and it reports its own health (process_* and go_*) through
// prometheus/client_golang, answering OpenMetrics to a scraper that asks
// for it and the text format 0.0.4 otherwise. Its flags, its web
// configuration file (TLS and basic auth, prometheus/exporter-toolkit's),
// its logs (prometheus/common/promslog) and its landing page are those
// of every Prometheus exporter.
//
// It is a binary of its own, as node_exporter is, so that the irqnuma CLI
// does not link client_golang and its protobuf runtime and pay their
// initialisation at every start (cmd/irqnuma's TestCLINoClientGolang).
package main

import (
	"context"
	"os"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/shutdown"
)

func main() {
	ctx, stop := shutdown.NotifyContext(context.Background())
	code := shutdown.Run(ctx, cli.ExitError, func() int {
		return run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	})
	stop()
	os.Exit(code)
}
