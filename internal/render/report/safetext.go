package report

import (
	"fmt"
	"io"

	"github.com/irqnuma/irqnuma/internal/safetext"
)

// safeCell is safetext.Escape: every table cell and text line that may
// carry a name from the host goes through it.
func safeCell(s string) string { return safetext.Escape(s) }

// linef writes one line of text: format and args as fmt.Sprintf makes
// them, through safeCell, then a newline. Every line of the text forms
// that may carry a name from the host is written by it.
func linef(w io.Writer, format string, args ...any) error {
	_, err := io.WriteString(w, safeCell(fmt.Sprintf(format, args...))+"\n")
	return err
}
