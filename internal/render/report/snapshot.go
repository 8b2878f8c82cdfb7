package report

import (
	"fmt"
	"io"

	"github.com/irqnuma/irqnuma/internal/host/snapshot"
)

// WriteSnapshotResult says what a snapshot captured and what it could
// not; name is where it went ("-" for stdout).
func WriteSnapshotResult(w io.Writer, name string, res snapshot.Result) {
	for _, n := range res.Notes {
		linef(w, "note: %s", n)
	}
	if name == "-" {
		name = "stdout"
	}
	fmt.Fprintf(w, "wrote %s: %d files, %d links, %d folders, %d bytes before compression\n",
		name, res.Files, res.Links, res.Dirs, res.Bytes)
}
