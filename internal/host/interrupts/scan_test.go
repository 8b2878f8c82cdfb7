package interrupts

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestScan: Scan gives each row Parse does, with the line it came from,
// and stops at fn's error.
func TestScan(t *testing.T) {
	give := "           CPU0       CPU1\n" +
		" 10:          1          2   IO-APIC  10-edge  eth0\n" +
		"\n" +
		" 11:          3   IO-APIC  11-edge\n" +
		"NMI:          5          6   Non-maskable interrupts\n"
	want, err := Parse([]byte(give))
	if err != nil {
		t.Fatal(err)
	}
	var got []Row
	var lines []string
	cpus, err := Scan([]byte(give), func(r *Row, line []byte) error {
		c := *r
		c.Counts = slices.Clone(r.Counts)
		got = append(got, c)
		lines = append(lines, string(line))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, &Interrupts{CPUs: cpus, Rows: got}, cmp.AllowUnexported(unknown.Value[int]{})); diff != "" {
		t.Errorf("Scan differs from Parse (-want +got):\n%s", diff)
	}
	wantLines := []string{" 10:          1          2   IO-APIC  10-edge  eth0", " 11:          3   IO-APIC  11-edge", "NMI:          5          6   Non-maskable interrupts"}
	if diff := cmp.Diff(wantLines, lines); diff != "" {
		t.Errorf("Scan's lines (-want +got):\n%s", diff)
	}
	stop := errors.New("stop")
	n := 0
	if _, err := Scan([]byte(give), func(*Row, []byte) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Scan with fn failing = %v after %d rows, want stop after 1", err, n)
	}
}
