// Package textwrap fits text and tables to a terminal's width: prose
// breaks at spaces, a long list after its commas, a table's cells onto
// continuation rows. Widths are in terminal columns, measured by the
// caller's rune width, so what is measured is what the caller draws.
package textwrap

import (
	"strings"
	"unicode/utf8"
)

// MinColumn is the narrowest a table's last column is made while other
// wrapping columns may still give way: below it a message reads a word
// or two a line.
const MinColumn = 40

// RuneWidth is how many terminal columns a rune takes.
type RuneWidth func(rune) int

// Width is how many terminal columns s takes.
func (rw RuneWidth) Width(s string) int {
	n := 0
	for _, r := range s {
		n += rw(r)
	}
	return n
}

// Lines breaks s into lines of at most width columns, at spaces; a word
// wider than width breaks after one of its commas, else wherever it
// must. Nothing of s is lost but the spaces lines break at: runs of
// spaces within a line are kept.
func Lines(s string, width int, rw RuneWidth) []string {
	width = max(width, 1)
	if rw.Width(s) <= width {
		return []string{s}
	}
	var lines []string
	var cur strings.Builder
	curW := 0
	started := false // cur holds a word, so a space may follow
	flush := func() {
		lines = append(lines, strings.TrimRight(cur.String(), " "))
		cur.Reset()
		curW, started = 0, false
	}
	for _, word := range strings.Split(s, " ") {
		ww := rw.Width(word)
		switch {
		case started && curW+1+ww <= width:
			cur.WriteByte(' ')
			cur.WriteString(word)
			curW += 1 + ww
			continue
		case word == "" && started:
			flush() // the line is full: the space is where it breaks
			continue
		case word == "":
			continue // no spaces at the start of a line
		case started:
			flush()
		}
		for ww > width {
			head, rest := breakWord(word, width, rw)
			lines = append(lines, head)
			word, ww = rest, rw.Width(rest)
		}
		cur.WriteString(word)
		curW, started = ww, true
	}
	if started || len(lines) == 0 {
		flush()
	}
	return lines
}

// breakWord splits a word wider than width into a head that fits, cut
// after its last comma within width when it has one, and the rest.
func breakWord(word string, width int, rw RuneWidth) (head, rest string) {
	w, cut, comma := 0, len(word), -1
	for i, r := range word {
		if w+rw(r) > width {
			cut = i
			break
		}
		w += rw(r)
		if r == ',' {
			comma = i + 1
		}
	}
	if comma > 0 && comma < len(word) {
		cut = comma
	}
	if cut == 0 { // a rune wider than width: take it anyway
		_, cut = utf8.DecodeRuneInString(word)
	}
	return word[:cut], word[cut:]
}

// Paragraph is s on lines of at most width columns, continuation lines
// indented by two spaces, each line ended by a newline; width <= 0
// leaves s on one line.
func Paragraph(s string, width int, rw RuneWidth) string {
	if width <= 0 || rw.Width(s) <= width {
		return s + "\n"
	}
	first := Lines(s, width, rw)[0] // a prefix of s
	var b strings.Builder
	b.WriteString(first + "\n")
	for _, l := range Lines(strings.TrimLeft(s[len(first):], " "), width-2, rw) {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// Rows fits a table (a header and rows of cells, columns two spaces
// apart) to width columns by wrapping cells onto continuation rows,
// whose other cells are empty. The last column always wraps, and so do
// the columns marked in wrap; when the last column would get fewer than
// MinColumn columns, the widest other wrapping column gives way first,
// down to its longest word (at most MinColumn/2). width <= 0 returns rows
// as they are. A table whose other columns alone are wider than width
// still overflows; nothing else does.
func Rows(header []string, rows [][]string, width int, wrap []bool, rw RuneWidth) [][]string {
	if width <= 0 || len(header) == 0 {
		return rows
	}
	ncol := len(header)
	for _, r := range rows {
		ncol = max(ncol, len(r))
	}
	wraps := make([]bool, ncol)
	copy(wraps, wrap)
	wraps[ncol-1] = true
	widths := fitWidths(header, rows, width, wraps, rw)
	var out [][]string
	for _, r := range rows {
		out = append(out, wrapRow(r, widths, wraps, rw)...)
	}
	return out
}

// fitWidths gives each column its width: the widest cell, then the
// wrapping columns but the last narrowed, widest first and never below
// their floor, until the last column has MinColumn columns; the last
// column takes what is left.
func fitWidths(header []string, rows [][]string, width int, wraps []bool, rw RuneWidth) []int {
	last := len(wraps) - 1
	widths := make([]int, len(wraps))
	floors := make([]int, len(wraps)) // what a wrapping column cannot go below
	measureRow(header, wraps, widths, floors, rw)
	for _, r := range rows {
		measureRow(r, wraps, widths, floors, rw)
	}
	lead := func() int {
		n := 0
		for i := range last {
			n += widths[i] + 2
		}
		return n
	}
	for width-lead() < MinColumn {
		wi := widestAboveFloor(widths[:last], floors)
		if wi < 0 {
			break
		}
		widths[wi] = max(floors[wi], widths[wi]-(MinColumn-(width-lead())))
	}
	widths[last] = max(width-lead(), 1)
	return widths
}

// measureRow widens widths to r's cells, and raises the floor of each
// column: a fixed column's whole width, a wrapping one's longest word
// (at most MinColumn/2).
func measureRow(r []string, wraps []bool, widths, floors []int, rw RuneWidth) {
	for i, c := range r {
		widths[i] = max(widths[i], rw.Width(c))
		if !wraps[i] {
			floors[i] = widths[i]
			continue
		}
		for _, f := range strings.Fields(c) {
			floors[i] = max(floors[i], min(rw.Width(f), MinColumn/2))
		}
	}
}

// widestAboveFloor is the index of the widest column that can still
// narrow, or -1.
func widestAboveFloor(widths, floors []int) int {
	wi := -1
	for i := range widths {
		if widths[i] > floors[i] && (wi < 0 || widths[i] > widths[wi]) {
			wi = i
		}
	}
	return wi
}

// wrapRow is r on as many rows as its tallest wrapped cell needs; the
// cells of the rows below hold only the continuations.
func wrapRow(r []string, widths []int, wraps []bool, rw RuneWidth) [][]string {
	cells := make([][]string, len(r))
	height := 1
	for i, c := range r {
		cells[i] = []string{c}
		if wraps[i] {
			cells[i] = Lines(c, widths[i], rw)
		}
		height = max(height, len(cells[i]))
	}
	out := make([][]string, height)
	for k := range height {
		row := make([]string, len(r))
		for i := range r {
			if k < len(cells[i]) {
				row[i] = cells[i][k]
			}
		}
		out[k] = row
	}
	return out
}
