// Package report turns what irqnuma reads into what it shows: the rows of
// its tables, its JSON documents, findings and pictures. It never reads the
// host itself.
package report

import (
	"bufio"
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// writeTable writes a plain ASCII table: a header row, then the rows,
// columns left-aligned and separated by two spaces, no borders, no
// trailing spaces. This is the one place irqnuma draws a table.
//
// Columns are measured in terminal cells (a wide East Asian character
// takes two, a combining mark none). Every cell goes through safeCell (an
// IRQ or interface name may hold any byte), so a name cannot move the
// cursor, recolour the terminal, break a line or reorder it. A cell of any column but the last is cut at
// MaxCellWidth columns, saying how much was left out, so one absurd name
// cannot pad every other row with megabytes of blanks; the JSON forms
// carry every value whole. The cost is linear in the size of the cells.
func writeTable(w io.Writer, header []string, rows [][]string) error {
	ncol := len(header)
	for _, r := range rows {
		ncol = max(ncol, len(r))
	}
	cells := make([][]string, 0, len(rows)+1)
	widths := make([]int, ncol)
	add := func(r []string) {
		out := make([]string, len(r))
		for i, c := range r {
			out[i] = safeCell(c)
			if i < ncol-1 {
				out[i] = cutCell(out[i])
			}
			widths[i] = max(widths[i], cellWidth(out[i]))
		}
		cells = append(cells, out)
	}
	add(header)
	for _, r := range rows {
		add(r)
	}
	bw := bufio.NewWriter(w)
	var line []byte
	for _, r := range cells {
		line = line[:0]
		pad := 0 // spaces owed before the next cell
		for i, c := range r {
			if c != "" {
				for range pad {
					line = append(line, ' ')
				}
				pad = 0
				line = append(line, c...)
			}
			if i < len(r)-1 {
				pad += widths[i] - cellWidth(c) + 2
			}
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// maxCellWidth is the widest a table cell but the last column's may be.
const maxCellWidth = 120

// cutCell cuts a cell wider than MaxCellWidth to that width, its end
// saying how many bytes were left out.
func cutCell(s string) string {
	if len(s) <= maxCellWidth || cellWidth(s) <= maxCellWidth {
		return s
	}
	w, end := 0, 0
	for i, r := range s {
		rw := runeWidth(r)
		if w+rw > maxCellWidth-24 {
			end = i
			break
		}
		w += rw
	}
	return s[:end] + "...(" + strconv.Itoa(len(s)-end) + " more bytes)"
}

// cellWidth is the number of terminal columns s takes: ASCII is one per
// byte; a wide or fullwidth East Asian character two; a combining mark
// or format character none.
func cellWidth(s string) int {
	w := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			w = 0
			for _, r := range s {
				w += runeWidth(r)
			}
			return w
		}
		w++
	}
	return w
}

func runeWidth(r rune) int {
	switch {
	case r < utf8.RuneSelf:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case isWide(r):
		return 2
	}
	return 1
}

// isWide reports the East Asian Wide and Fullwidth blocks (UAX #11) a
// terminal draws two columns wide.
func isWide(r rune) bool {
	for _, rg := range wideRanges {
		if r < rg[0] {
			return false
		}
		if r <= rg[1] {
			return true
		}
	}
	return false
}

var wideRanges = [][2]rune{
	{0x1100, 0x115F},   // Hangul Jamo initial consonants
	{0x231A, 0x231B},   // watch, hourglass
	{0x2329, 0x232A},   // angle brackets
	{0x2E80, 0x303E},   // CJK radicals, Kangxi, CJK symbols and punctuation
	{0x3041, 0x33FF},   // Hiragana, Katakana, Bopomofo, Hangul compatibility, CJK compatibility
	{0x3400, 0x4DBF},   // CJK extension A
	{0x4E00, 0x9FFF},   // CJK unified ideographs
	{0xA000, 0xA4CF},   // Yi
	{0xA960, 0xA97F},   // Hangul Jamo extended A
	{0xAC00, 0xD7A3},   // Hangul syllables
	{0xF900, 0xFAFF},   // CJK compatibility ideographs
	{0xFE10, 0xFE19},   // vertical forms
	{0xFE30, 0xFE6F},   // CJK compatibility forms, small form variants
	{0xFF00, 0xFF60},   // fullwidth forms
	{0xFFE0, 0xFFE6},   // fullwidth signs
	{0x1F300, 0x1F64F}, // pictographs, emoticons
	{0x1F900, 0x1F9FF}, // supplemental symbols and pictographs
	{0x20000, 0x3FFFD}, // CJK extensions B-G
}

// queueName is a queue as the tables and the metrics name it: "3", or
// "rx-3"/"tx-3" for a vector that serves one direction (the kernel's
// queues/rx-3 folder name).
func queueName(queue int, dir string) string {
	if dir == "" {
		return strconv.Itoa(queue)
	}
	return dir + "-" + strconv.Itoa(queue)
}
