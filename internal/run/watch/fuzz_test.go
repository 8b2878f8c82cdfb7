package watch

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// knownFrom returns a sampler that treats every numbered row of a as a
// NIC row, as it stands in a.
func knownFrom(a []byte) *Sampler {
	s := &Sampler{known: map[int]nicIRQ{}}
	if in, err := interrupts.Parse(a); err == nil {
		for _, r := range in.Rows {
			if n, ok := r.IRQ.Get(); ok {
				s.known[n] = nicIRQ{n: n, name: r.Name}
			}
		}
	}
	return s
}

// FuzzInterruptsFastPath: reading a and then b must give for b exactly
// what reading b alone with the full parser gives, whether or not the
// fast path was taken, and never panic.
func FuzzInterruptsFastPath(f *testing.F) {
	// The header and a few rows of small trees only: the fuzzer minimises
	// every new input it finds, which on a whole file takes most of the
	// run (5 runs in 20 s on vm-virtio's 3 kB).
	for _, name := range []string{"vm-virtio", "arm64"} {
		b, err := os.ReadFile(filepath.Join(hosttest.Root(name), "proc", "interrupts"))
		if err != nil {
			f.Fatal(err)
		}
		lines := bytes.SplitAfter(b, []byte("\n"))
		a := bytes.Join(lines[:min(5, len(lines))], nil)
		f.Add(a, a)
	}
	f.Add([]byte("   CPU0 CPU1\n  5:  1  2  chip 1-edge eth0-TxRx-0\n"), []byte("   CPU0 CPU1\n  5:  3  4  chip 1-edge eth0-TxRx-0\n"))
	f.Add([]byte("   CPU0 CPU1\n  5:  1  2  chip 1-edge eth0-TxRx-0\n"), []byte("   CPU0 CPU1\n  5:  3  4x  chip 1-edge eth0-TxRx-0\n"))
	// The fuzzer's finds: a count more in a row the fast path does not
	// parse (taken, as the property allows), and a NIC row with no count.
	f.Add([]byte("CPU0\n\x80\x004:"), []byte("CPU0\n\x80\x004:0 0"))
	f.Add([]byte("CPU0\n0:A 0\x03"), []byte("CPU0\n0:A 0\x03"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		s := knownFrom(a)
		var first, got Sample
		if err := s.readIRQs(a, &first); err != nil {
			return
		}
		errGot := s.readIRQs(b, &got)
		ref := knownFrom(a)
		var want Sample
		errWant := ref.readIRQs(b, &want)
		// The fast path reads only the watched NICs' rows: it may take a
		// file the full parse refuses for a row it does not read
		// (TestFastPathUnreadRows), never refuse one the full parse takes,
		// and what it reads equals the full parse's.
		if errWant == nil && errGot != nil {
			t.Fatalf("after a, reading b: error %v; reading b alone: no error", errGot)
		}
		if errGot != nil || errWant != nil {
			return
		}
		if diff := cmp.Diff(rowsOf(&want), rowsOf(&got)); diff != "" {
			t.Errorf("rows (-full +after a):\n%s", diff)
		}
		if diff := cmp.Diff(want.irqCols, got.irqCols); diff != "" {
			t.Errorf("columns (-full +after a):\n%s", diff)
		}
	})
}

// FuzzParsers: the /proc/stat, /proc/softirqs and softnet_stat parsers never panic and
// either fail or return CPU ids in ascending order.
func FuzzParsers(f *testing.F) {
	for _, name := range []string{"vm-virtio", "arm64", "offline-2node"} {
		for _, file := range []string{"stat", "softirqs", "net/softnet_stat"} {
			b, err := os.ReadFile(filepath.Join(hosttest.Root(name), "proc", file))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if st, err := parseStat(b, nil); err == nil {
			for i := 1; i < len(st); i++ {
				if st[i].id <= st[i-1].id {
					t.Fatalf("parseStat ids out of order: %v", st)
				}
			}
		}
		var s softirqs
		if err := parseSoftirqs(b, &s); err == nil && (len(s.netRX) != len(s.cpus) || len(s.netTX) != len(s.cpus)) {
			t.Fatalf("parseSoftirqs: %d columns, %d NET_RX, %d NET_TX", len(s.cpus), len(s.netRX), len(s.netTX))
		}
		if rows, err := parseSoftnet(b, cpuset.New(0, 2, 3), nil); err == nil {
			for i := 1; i < len(rows); i++ {
				if rows[i].id <= rows[i-1].id {
					t.Fatalf("parseSoftnet ids out of order: %v", rows)
				}
			}
		}
	})
}
