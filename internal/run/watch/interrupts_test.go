package watch

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/testsupport/watchtest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func rowsOf(sm *Sample) map[int][]uint64 {
	m := map[int][]uint64{}
	for _, r := range sm.irqs {
		m[r.n] = r.counts
	}
	return m
}

// TestFastPathMatchesFullParse: on every committed host tree the second
// sample (fast path) finds the same NIC rows and counts as the first
// (interrupts.Parse), and sees a changed count.
func TestFastPathMatchesFullParse(t *testing.T) {
	for _, name := range hosttest.Names() {
		t.Run(name, func(t *testing.T) {
			root := hosttest.Copy(t, name)
			h, err := topology.Read(hosttest.Open(t, root))
			if err != nil {
				t.Fatal(err)
			}
			s, err := newSampler(h, samplerOptions{Now: (&watchtest.Clock{}).Now})
			if err != nil {
				t.Fatal(err)
			}
			a := sample(t, s)
			b := sample(t, s)
			if s.fast != 1 {
				t.Fatalf("second sample of an unchanged file did not take the fast path")
			}
			if diff := cmp.Diff(rowsOf(a), rowsOf(b)); diff != "" {
				t.Errorf("fast path rows (-full +fast):\n%s", diff)
			}
			if diff := cmp.Diff(a.irqCols, b.irqCols); diff != "" {
				t.Errorf("fast path columns (-full +fast):\n%s", diff)
			}
			if len(a.irqs) == 0 {
				t.Skip("no NIC IRQs in this tree")
			}
			// Bump the first NIC row on its first CPU: the fast path sees it.
			tr := watchtest.Tree{T: t, Root: root}
			r := a.irqs[0]
			tr.AddIRQ(r.n, a.irqCols[0], 7)
			c := sample(t, s)
			if s.fast != 2 {
				t.Fatalf("a changed count left the fast path")
			}
			if got, want := rowsOf(c)[r.n][0], r.counts[0]+7; got != want {
				t.Errorf("IRQ %d CPU%d = %d, want %d", r.n, a.irqCols[0], got, want)
			}
			full, err := interrupts.Parse(tr.Read("proc/interrupts"))
			if err != nil {
				t.Fatal(err)
			}
			for _, fr := range c.irqs {
				row, _ := full.Row(fr.n)
				if diff := cmp.Diff(row.Counts, fr.counts); diff != "" {
					t.Errorf("IRQ %d fast counts (-full +fast):\n%s", fr.n, diff)
				}
			}
		})
	}
}

// TestFastPathFallsBack: any change but the counts goes back to the full
// parse: a renamed IRQ, an added row, a file that is not in the format.
func TestFastPathFallsBack(t *testing.T) {
	tests := []struct {
		give string
		edit func([]byte) []byte
		err  bool
	}{
		{"renamed", func(b []byte) []byte {
			return bytes.Replace(b, []byte("mlx5_comp3@pci"), []byte("mlx5_comp9@pci"), 1)
		}, false},
		{"new row", func(b []byte) []byte {
			return bytes.Replace(b, []byte("NMI:"), []byte("900:"+strings.Repeat("          0", 64)+"  IR-PCI-MSIX-0000:98:00.0  99-edge      mlx5_comp99@pci:0000:98:00.0\n NMI:"), 1)
		}, false},
		{"row twice", func(b []byte) []byte {
			return bytes.Replace(b, []byte(" 285:"), []byte(" 284:"), 1)
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			h, s, clk := setup(t, "seed")
			prev := sample(t, s)
			h.Write("proc/interrupts", tt.edit(h.Read("proc/interrupts")))
			clk.Advance(time.Second)
			cur, err := s.Sample()
			if tt.err {
				if !errors.Is(err, interrupts.ErrFormat) {
					t.Fatalf("Sample() error = %v, want one wrapping interrupts.ErrFormat", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.fast != 0 {
				t.Errorf("a changed layout took the fast path")
			}
			iv := diff(t, s, prev, cur)
			switch tt.give {
			case "renamed":
				if !hasNote(iv, "IRQ 287 was re-registered") || !unknown.Is(irqStats(t, iv, 287).Queue, 9) {
					t.Errorf("notes %q, queue %s", iv.Notes, irqStats(t, iv, 287).Queue)
				}
			case "new row":
				if !hasNote(iv, "IRQ 900 (eth0 queue 99) is new") {
					t.Errorf("notes %q", iv.Notes)
				}
			}
		})
	}
}

// TestFastPathRealCaptures runs the fast path over every real
// /proc/interrupts capture (arm64 counts touching the colon, one-column
// ERR rows, rows naming two devices, truncated files), with every numbered
// row treated as a NIC row: its counts must equal interrupts.Parse's.
func TestFastPathRealCaptures(t *testing.T) {
	realhosts.Require(t)
	files, err := realhosts.InterruptsFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no /proc/interrupts captures")
	}
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			b, err := os.ReadFile(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			full, err := interrupts.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			s := &Sampler{known: map[int]nicIRQ{}}
			want := map[int][]uint64{}
			for _, r := range full.Rows {
				if n, ok := r.IRQ.Get(); ok {
					s.known[n] = nicIRQ{n: n, name: r.Name}
					want[n] = r.Counts
				}
			}
			var slow, fast Sample
			if err := s.readIRQs(b, &slow); err != nil {
				t.Fatal(err)
			}
			if err := s.readIRQs(b, &fast); err != nil {
				t.Fatal(err)
			}
			if s.fast != 1 {
				t.Fatal("the same text twice did not take the fast path")
			}
			if diff := cmp.Diff(want, rowsOf(&fast)); diff != "" {
				t.Errorf("fast path counts (-interrupts.Parse +fast):\n%s", diff)
			}
			if diff := cmp.Diff(full.CPUs, fast.irqCols); diff != "" {
				t.Errorf("columns (-interrupts.Parse +fast):\n%s", diff)
			}
		})
	}
}

// TestSoftirqsRealCapture parses node_exporter's real /proc/softirqs.
func TestSoftirqsRealCapture(t *testing.T) {
	dir := realhosts.Require(t)
	b, err := os.ReadFile(filepath.Join(dir, "nodeexporter-interrupts", "softirqs"))
	if err != nil {
		t.Fatal(err)
	}
	var s softirqs
	if err := parseSoftirqs(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.cpus) == 0 || len(s.netRX) != len(s.cpus) || len(s.netTX) != len(s.cpus) {
		t.Errorf("softirqs = %+v", s)
	}
}
