package exporter

import (
	"fmt"
	"io"
	"time"

	"github.com/irqnuma/irqnuma/internal/atomicfile"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// writeTextfile writes fams in the text exposition format to path,
// atomically: node_exporter's textfile collector reads whole *.prom
// files, so the metrics are written to a hidden temporary file in the
// same folder (which the collector skips), synced, and renamed over path.
// Series left out for invalid label values do not stop the write; they
// are returned as the error after it.
func writeTextfile(path string, fams []Family) error {
	var bad error
	err := atomicfile.Write(path, 0o644, func(w io.Writer) (err error) {
		bad, err = WriteText(w, fams)
		return err
	})
	if err != nil {
		return fmt.Errorf("textfile %s: %w", path, err)
	}
	if bad != nil {
		return fmt.Errorf("textfile %s: %w", path, bad)
	}
	return nil
}

// ReadAudit is audit.Read of root and sel that, with a textfile path,
// also writes the metrics of that one read there (audit --textfile), for
// node_exporter's textfile collector: replaced atomically, and written
// even when the read fails (with irqnuma_scrape_error 1), so the failure
// shows in Prometheus too. The read's error comes first; the write's
// comes separately, so the caller can still show what was read.
func ReadAudit(fsys kfile.FS, sel audit.Selection, textfile string) (st *audit.State, readErr, writeErr error) {
	start := time.Now()
	st, readErr = audit.Read(fsys, sel)
	if textfile != "" {
		writeErr = writeTextfile(textfile, families(st, readErr, time.Since(start)))
	}
	return st, readErr, writeErr
}
