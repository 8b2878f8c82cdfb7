package watch

import (
	"math/rand/v2"
	"testing"
)

// countTokensSlow is countTokens byte by byte: the reference.
func countTokensSlow(b []byte) int {
	n, in := 0, false
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if !in {
				n++
			}
			in = true
		case c == ' ':
			in = false
		default:
			return -1
		}
	}
	return n
}

func TestCountTokens(t *testing.T) {
	tests := []struct {
		give string
		want int
	}{
		{"", 0},
		{"          7     100000", 2},
		{"   1 2 3", 3},
		{"1234567890123456789", 1},
		{"12345678 12345678 1", 3},
		{"       1\t2", -1},
		{"          1       -814", -1},
		{"          1          2x", -1},
		{"\x80\x801", -1},
		{"        \xb0", -1},
	}
	for _, tt := range tests {
		if got := countTokens([]byte(tt.give)); got != tt.want {
			t.Errorf("countTokens(%q) = %d, want %d", tt.give, got, tt.want)
		}
	}
	// Every byte value at every place of a word, against the reference.
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("0123456789      \t\r-x\x00\x80\xff/:")
	for range 200_000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			if r.IntN(50) == 0 {
				b[i] = byte(r.IntN(256))
			} else {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
		if got, want := countTokens(b), countTokensSlow(b); got != want {
			t.Fatalf("countTokens(%q) = %d, want %d", b, got, want)
		}
	}
}

// TestFastPathChecksUnreadRows: a row the fast path does not parse (no
// NIC's) still sends the file to the full parser when it holds a count
// more or a negative count, so the fast path refuses what the full parse
// refuses (the fuzzer's find: "X:" then "X:0 0" on one CPU).
func TestFastPathChecksUnreadRows(t *testing.T) {
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
		if err := s.readIRQs([]byte(b), &got); err == nil {
			t.Errorf("after a, reading %q: no error; the full parse refuses it", b)
		}
	}
}
