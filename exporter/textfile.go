package exporter

import (
	"fmt"
	"io"

	"github.com/irqnuma/irqnuma/internal/atomicfile"
)

// WriteTextfile writes fams in the text exposition format to path,
// atomically: node_exporter's textfile collector reads whole *.prom
// files, so the metrics are written to a hidden temporary file in the
// same folder (which the collector skips), synced, and renamed over path.
// Series left out for invalid label values do not stop the write; they
// are returned as the error after it.
func WriteTextfile(path string, fams []Family) error {
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
