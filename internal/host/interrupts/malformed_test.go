package interrupts

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestParseMalformedRows: what only a count can be, where the counts
// end, is malformed (issue 27): before, "-814" and a count past the
// header's columns were read as the chip or the name, and a 20-digit id
// as a named row like NMI.
func TestParseMalformedRows(t *testing.T) {
	const header = "           CPU0       CPU1\n"
	tests := []struct {
		name string
		give string
		want []string // in the error
	}{
		{"negative count", " 5:          1       -814   IO-APIC   5-edge      eth0\n",
			[]string{"line 2 (5)", "count -814 is negative"}},
		{"negative first count", " 5:       -814          1   IO-APIC   5-edge      eth0\n",
			[]string{"line 2 (5)", "count -814 is negative"}},
		{"negative count in a named row", "NMI:          0         -3   Non-maskable interrupts\n",
			[]string{"line 2 (NMI)", "count -3 is negative"}},
		{"a count past the columns", " 5:          1          2          3   IO-APIC   5-edge      eth0\n",
			[]string{"line 2 (5)", "count 3 is past the header's 2 CPU columns"}},
		{"two counts past the columns", " 5: 1 2 3 4 IO-APIC 5-edge eth0\n",
			[]string{"line 2 (5)", "count 3 is past the header's 2 CPU columns"}},
		{"a count past the columns in a named row", "LOC:          1          2          3   Local timer interrupts\n",
			[]string{"line 2 (LOC)", "count 3 is past"}},
		{"20-digit id", "12345678901234567890:          1          2   IO-APIC   5-edge      eth0\n",
			[]string{"line 2: IRQ 12345678901234567890 is past the largest IRQ number"}},
		{"30-digit id", strings.Repeat("9", 30) + ": 1 2 x\n",
			[]string{"line 2: IRQ 999999999999999999999999999999 is past"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok := " 4:          1          2   IO-APIC   4-edge      ttyS0\n"
			got, err := Parse([]byte(header + tt.give + ok))
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("Parse(%q) = %+v, %v; want an error wrapping ErrFormat", tt.give, got, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Parse(%q) error = %q, want it to say %q", tt.give, err, w)
				}
			}
		})
	}
}

// TestParseStillReads: the rows the checks must not refuse.
func TestParseStillReads(t *testing.T) {
	give := "           CPU0       CPU1\n" +
		" 10:          1          2     GICv3  27 Level     arch_timer\n" +
		" 11:          1          2         -  11-edge      nameless-chip\n" +
		" 12:          1          2      None   -fasteoi\n" +
		" 13:          5   IO-APIC  13-edge\n" +
		"ERR:          0\n" +
		"IPI0:1 2 Rescheduling interrupts\n" +
		"0x10:          1          2   hex id: a named row\n"
	in, err := Parse([]byte(give))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(in.Rows) != 7 {
		t.Fatalf("%d rows, want 7", len(in.Rows))
	}
	if r := in.Rows[1]; r.Chip != "-" || r.HWIRQ != "11-edge" {
		t.Errorf("row 11: chip %q, hwirq %q; want \"-\", \"11-edge\"", r.Chip, r.HWIRQ)
	}
	if r := in.Rows[6]; r.IRQ.Known() || r.ID != "0x10" {
		t.Errorf("row 0x10 = %+v, want a named row", r)
	}
}

// TestTotalSaturates: counts whose sum does not fit in 64 bits total the
// largest value, not what the sum wrapped to (issue 27: 2^64-1 and 1
// totalled 0).
func TestTotalSaturates(t *testing.T) {
	tests := []struct {
		give []uint64
		want uint64
	}{
		{nil, 0},
		{[]uint64{1, 2, 3}, 6},
		{[]uint64{math.MaxUint64, 1}, math.MaxUint64},
		{[]uint64{1, math.MaxUint64}, math.MaxUint64},
		{[]uint64{math.MaxUint64 / 2, math.MaxUint64 / 2, 2}, math.MaxUint64},
		{[]uint64{math.MaxUint64 - 1, 1}, math.MaxUint64},
		{[]uint64{math.MaxUint64, 0}, math.MaxUint64},
	}
	for _, tt := range tests {
		if got := (Row{Counts: tt.give}).Total(); got != tt.want {
			t.Errorf("Row{Counts: %v}.Total() = %d, want %d", tt.give, got, tt.want)
		}
	}
	in, err := Parse([]byte("CPU0 CPU1\n 5: 18446744073709551615 1 IO-APIC 5-edge eth0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := in.Rows[0].Total(); got != math.MaxUint64 {
		t.Errorf("total of 2^64-1 and 1 = %d, want %d", got, uint64(math.MaxUint64))
	}
}
