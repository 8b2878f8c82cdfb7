package exporter

import (
	"fmt"
	"io"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/irqnuma/irqnuma/internal/atomicfile"
)

// WriteTextfile gathers g once and writes the metrics in the text
// exposition format to path, atomically: node_exporter's textfile
// collector reads whole *.prom files, so the metrics are written to a
// hidden temporary file in the same folder (which the collector skips),
// synced, and renamed over path.
func WriteTextfile(path string, g prometheus.Gatherer) error {
	mfs, err := g.Gather()
	if err != nil {
		return fmt.Errorf("textfile %s: %w", path, err)
	}
	err = atomicfile.Write(path, 0o644, func(w io.Writer) error {
		enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("textfile %s: %w", path, err)
	}
	return nil
}
