package watch

import "testing"

// TestFastPathUnreadRows: the fast path reads only the rows of the
// watched NICs. A malformed count in another row (a count more, a
// negative one) changes nothing watch says, so it is not judged on every
// sample (that doubled a sample's cost); the NIC rows are still read
// exactly, and the full parse refuses the same file when it reads it
// (the first sample, or a changed shape).
func TestFastPathUnreadRows(t *testing.T) {
	a := []byte("CPU0 CPU1\n  5:  1  2  chip 1-edge eth0-TxRx-0\n  6:  1  2  IO-APIC 6-edge ttyS0\nNMI:  0  0  Non-maskable interrupts\n")
	for _, b := range []string{
		"CPU0 CPU1\n  5:  3  4  chip 1-edge eth0-TxRx-0\n  6:  1  2 3  IO-APIC 6-edge ttyS0\nNMI:  0  0  Non-maskable interrupts\n",
		"CPU0 CPU1\n  5:  3  4  chip 1-edge eth0-TxRx-0\n  6:  1 -2  IO-APIC 6-edge ttyS0\nNMI:  0  0  Non-maskable interrupts\n",
		"CPU0 CPU1\n  5:  3  4  chip 1-edge eth0-TxRx-0\n  6:  1  2  IO-APIC 6-edge ttyS0\nNMI:  0  0 7  Non-maskable interrupts\n",
	} {
		s := &Sampler{known: map[int]nicIRQ{5: {n: 5, name: "eth0-TxRx-0"}}}
		var first, got Sample
		if err := s.readIRQs(a, &first); err != nil {
			t.Fatal(err)
		}
		if err := s.readIRQs([]byte(b), &got); err != nil {
			t.Errorf("after a, reading %q: %v; the NIC's row is well formed", b, err)
			continue
		}
		if len(got.irqs) != 1 || got.irqs[0].n != 5 || len(got.irqs[0].counts) != 2 || got.irqs[0].counts[0] != 3 || got.irqs[0].counts[1] != 4 {
			t.Errorf("after a, reading %q: NIC rows %+v, want IRQ 5 with counts 3 4", b, got.irqs)
		}
		fresh := &Sampler{known: map[int]nicIRQ{5: {n: 5, name: "eth0-TxRx-0"}}}
		var full Sample
		if err := fresh.readIRQs([]byte(b), &full); err == nil {
			t.Errorf("reading %q first: no error; the full parse refuses it", b)
		}
	}
}
