package main

import (
	"errors"
	"time"

	"github.com/irqnuma/irqnuma/exporter"
	"github.com/irqnuma/irqnuma/report"
)

// runAuditTextfile is runAudit that also writes the exporter's metrics to
// path (audit --textfile), from the same single read of the host, for
// node_exporter's textfile collector. The file is replaced atomically,
// and written even when the read fails (with irqnuma_scrape_error 1), so
// the failure shows in Prometheus too; the error is then returned.
func runAuditTextfile(a *app, path string, s selection) ([]report.Finding, report.AuditDoc, error) {
	if path == "" {
		return runAudit(a.root, s)
	}
	start := time.Now()
	st, readErr := auditState(a.root, s)
	if err := exporter.WriteTextfile(path, exporter.Families(st, readErr, time.Since(start))); err != nil {
		return nil, report.AuditDoc{}, errors.Join(readErr, err)
	}
	if readErr != nil {
		return nil, report.AuditDoc{}, readErr
	}
	return st.Findings, report.NewAuditDoc(st.Host, st.IRQs, st.Findings), nil
}
