package main

import (
	"errors"
	"time"

	"github.com/irqnuma/irqnuma/audit"
	"github.com/irqnuma/irqnuma/exporter"
)

// readAudit reads and audits the root (audit.Read). With a textfile path
// it also writes the exporter's metrics there (audit --textfile), from
// the same single read, for node_exporter's textfile collector: replaced
// atomically, and written even when the read fails (with
// irqnuma_scrape_error 1), so the failure shows in Prometheus too; the
// error is then returned.
func readAudit(root, textfile string, s selection) (*audit.State, error) {
	start := time.Now()
	st, readErr := audit.Read(root, s.Selection)
	if textfile == "" {
		return st, readErr
	}
	if err := exporter.WriteTextfile(textfile, exporter.Families(st, readErr, time.Since(start))); err != nil {
		return nil, errors.Join(readErr, err)
	}
	return st, readErr
}
