package report

import (
	"strings"

	"github.com/irqnuma/irqnuma/internal/textwrap"
)

// wrapRows fits a table to width terminal columns for writeTable to
// draw (textwrap.Rows): the last column and the columns in wrap wrap
// onto continuation rows. Cells are escaped and cut here as writeTable
// does, so what is measured is what is drawn; width <= 0 changes
// nothing.
func wrapRows(header []string, rows [][]string, width int, wrap ...int) [][]string {
	if width <= 0 {
		return rows
	}
	ncol := len(header)
	for _, r := range rows {
		ncol = max(ncol, len(r))
	}
	wraps := make([]bool, ncol)
	for _, i := range wrap {
		wraps[i] = true
	}
	esc := make([][]string, len(rows))
	for j, r := range rows {
		esc[j] = make([]string, len(r))
		for i, c := range r {
			if esc[j][i] = safeCell(c); !wraps[i] && i < ncol-1 {
				esc[j][i] = cutCell(esc[j][i])
			}
		}
	}
	return textwrap.Rows(header, esc, width, wraps, runeWidth)
}

// wrapLine is a line of prose (a title, a verdict) escaped as a cell is
// and wrapped to width, continuation lines indented by two spaces.
func wrapLine(s string, width int) string {
	return textwrap.Paragraph(safeCell(s), width, runeWidth)
}

// putTable draws a table fitted to width (wrapRows) into b; writing to
// a strings.Builder cannot fail.
func putTable(b *strings.Builder, width int, header []string, rows [][]string, wrap ...int) {
	_ = writeTable(b, header, wrapRows(header, rows, width, wrap...))
}
