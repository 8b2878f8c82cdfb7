package main

import (
	"context"
	"errors"

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
	var (
		st      *exporter.State
		readErr error
	)
	col := exporter.NewCollector(a.ctx, func(context.Context) (*exporter.State, error) {
		st, readErr = auditState(a.root, s)
		return st, readErr
	}, nil)
	if err := exporter.WriteTextfile(path, exporter.NewRegistry(col)); err != nil {
		return nil, report.AuditDoc{}, errors.Join(readErr, err)
	}
	if readErr != nil {
		return nil, report.AuditDoc{}, readErr
	}
	return st.Findings, report.NewAuditDoc(st.Host, st.IRQs, st.Findings), nil
}
