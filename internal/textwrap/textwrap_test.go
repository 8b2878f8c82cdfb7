package textwrap

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// one counts every rune as one column; wide counts 世 as two.
func one(rune) int { return 1 }

func wide(r rune) int {
	if r == '世' {
		return 2
	}
	return 1
}

func TestLines(t *testing.T) {
	tests := []struct {
		give  string
		width int
		want  []string
	}{
		{"short", 10, []string{"short"}},
		{"", 10, []string{""}},
		{"one two three four", 9, []string{"one two", "three", "four"}},
		// Runs of spaces inside a line are kept: a shell comment stays.
		{"combined 26  # -l shows", 16, []string{"combined 26  #", "-l shows"}},
		// A CPU list breaks after a comma.
		{"(0,2,4,6,8,10,12)", 8, []string{"(0,2,4,", "6,8,10,", "12)"}},
		// A word without commas breaks where it must.
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"a 世世世 b", 4, []string{"a", "世世", "世 b"}},
	}
	for _, tt := range tests {
		rw := RuneWidth(one)
		if strings.ContainsRune(tt.give, '世') {
			rw = wide
		}
		got := Lines(tt.give, tt.width, rw)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Lines(%q, %d) (-want +got):\n%s", tt.give, tt.width, diff)
		}
		for _, l := range got {
			if rw.Width(l) > tt.width {
				t.Errorf("Lines(%q, %d): line %q is wider than %d", tt.give, tt.width, l, tt.width)
			}
		}
		// Nothing but the spaces lines break at is lost.
		if strings.ReplaceAll(strings.Join(got, ""), " ", "") != strings.ReplaceAll(tt.give, " ", "") {
			t.Errorf("Lines(%q, %d) = %q lost text", tt.give, tt.width, got)
		}
	}
}

func TestParagraph(t *testing.T) {
	if got := Paragraph("verdict: ready", 0, one); got != "verdict: ready\n" {
		t.Errorf("Paragraph(width 0) = %q", got)
	}
	got := Paragraph("verdict: NOT READY: 15 warnings at or above warning", 20, one)
	want := "verdict: NOT READY:\n  15 warnings at or\n  above warning\n"
	if got != want {
		t.Errorf("Paragraph = %q, want %q", got, want)
	}
}

func TestRows(t *testing.T) {
	header := []string{"SEVERITY", "CHECK", "SUBJECT", "MESSAGE"}
	rows := [][]string{
		{"warning", "irq-shared-cpu", "63 queues on 52 local CPUs", "0000:19:00.0 has 63 queues for 52 local CPUs, so an even spread puts at most 2 on each; while 18 local CPUs serve none (0,6,20,26,44,50,54,58,60,72,78,80,82,84,86,92,96,102)"},
		{"", "", "", "fix: irqnuma irq pin eth0"},
	}
	if got := Rows(header, rows, 0, nil, one); !cmp.Equal(got, rows) {
		t.Errorf("Rows(width 0) changed the rows: %q", got)
	}
	for _, width := range []int{60, 80, 100, 260} {
		got := Rows(header, rows, width, []bool{false, false, true}, one)
		// Drawn as writeTable does: columns two apart.
		widths := make([]int, len(header))
		for _, r := range append([][]string{header}, got...) {
			for i, c := range r {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
		}
		cols := make([]string, len(header))
		for _, r := range got {
			line := ""
			for i, c := range r {
				if i < len(r)-1 {
					c += strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2)
				}
				line += c
			}
			if l := utf8.RuneCountInString(strings.TrimRight(line, " ")); l > width {
				t.Errorf("width %d: line of %d columns: %q", width, l, line)
			}
			for i, c := range r {
				cols[i] += strings.ReplaceAll(c, " ", "")
			}
		}
		// Each column, read down, holds its cells whole.
		for _, r := range rows {
			for i, c := range r {
				if !strings.Contains(cols[i], strings.ReplaceAll(c, " ", "")) {
					t.Errorf("width %d: cell %q lost", width, c)
				}
			}
		}
		if width == 260 && len(got) != len(rows) {
			t.Errorf("width 260: %d rows, want %d (nothing to wrap)", len(got), len(rows))
		}
	}
}
