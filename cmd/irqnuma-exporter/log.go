package main

import (
	"io"
	"strings"

	"github.com/irqnuma/irqnuma/internal/safetext"
)

// escaped is a log whose lines (each written whole, as the exporter
// package writes them) are escaped by safetext but for their ending line
// break: a scrape's errors name files and values of a tree that may be
// hostile.
type escaped struct{ w io.Writer }

func (e escaped) Write(p []byte) (int, error) {
	line, nl := strings.CutSuffix(string(p), "\n")
	s := safetext.Escape(line)
	if nl {
		s += "\n"
	}
	if _, err := io.WriteString(e.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}
