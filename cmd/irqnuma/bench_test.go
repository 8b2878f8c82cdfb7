package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/benchcpu"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// bigHost is the scale the issues name: 512 CPUs on 4 nodes and 1,000 IRQs
// (8 NICs x (1 async + 63 queues) + 488 NVMe queue IRQs).
var bigHost = hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488}

func benchCLI(b *testing.B, args ...string) {
	b.Helper()
	var out, errb bytes.Buffer
	stop := benchcpu.Start(b)
	defer stop()
	for b.Loop() {
		out.Reset()
		errb.Reset()
		if code := run(context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
	}
}

// BenchmarkIRQList is `irqnuma irq list -o json` end to end on a
// 512-CPU, 1,000-IRQ host: topology, /proc/interrupts, every NIC IRQ's
// /proc/irq files, and the JSON.
func BenchmarkIRQList(b *testing.B) {
	if n := bigHost.IRQs(); n != 1000 {
		b.Fatalf("synthetic host has %d IRQs, want 1000", n)
	}
	root := hosttest.Synthetic(b, bigHost)
	benchCLI(b, "--root", root, "irq", "list", "-o", "json")
}

// BenchmarkIRQListAll is `irq list --all` on the same host: every IRQ.
func BenchmarkIRQListAll(b *testing.B) {
	root := hosttest.Synthetic(b, bigHost)
	benchCLI(b, "--root", root, "irq", "list", "--all", "-o", "json")
}

// BenchmarkTopology is `irqnuma topology -o json` on the same host.
func BenchmarkTopology(b *testing.B) {
	root := hosttest.Synthetic(b, bigHost)
	benchCLI(b, "--root", root, "topology", "-o", "json")
}

// BenchmarkIRQListAllVsRead runs `irq list --all -o json` on the
// 512-CPU, 1,000-IRQ host side by side with merely reading the files it
// reads (benchVsRead).
func BenchmarkIRQListAllVsRead(b *testing.B) {
	root := hosttest.Synthetic(b, bigHost)
	benchVsRead(b, root, "irq", "list", "--all", "-o", "json")
}

// BenchmarkAuditVsRead runs `audit` on the dell-2numa capture (96 CPUs,
// 1,125 IRQs, 70 NICs inferred from IRQ names) side by side with merely
// reading the files it reads (benchVsRead): what irqnuma costs beyond
// the reads themselves on a big host (issue 40: at most 1.1×).
func BenchmarkAuditVsRead(b *testing.B) {
	root := realhosts.Root(b, realhosts.MustLookup(b, "dell-2numa"))
	benchVsRead(b, root, "audit", "--fail-on", "never")
}

// benchVsRead runs irqnuma with args on root side by side with merely
// reading the files it reads (open, read to the end, close, each once:
// what one cat of them costs), in the same loop so both see the same
// machine, and reports the median of the paired ratios (cmd/read). The
// files are those one run of the command read, from kfile.Trace.
func benchVsRead(b *testing.B, root string, args ...string) {
	args = append([]string{"--root", root}, args...)
	var files []string
	seen := map[string]bool{}
	stop := kfile.Trace(func(a kfile.Access) {
		if a.Op == kfile.OpRead && a.Root == root && !seen[a.Path] {
			seen[a.Path] = true
			files = append(files, a.Path)
		}
	})
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	stop()
	if code != 0 {
		b.Fatalf("exit %d: %s", code, errb.String())
	}
	buf := make([]byte, 64<<10)
	readAll := func() {
		for _, p := range files {
			f, err := os.Open(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue // the command tried it too (osrelease on a tree without it)
			}
			if err != nil {
				b.Fatal(err)
			}
			for {
				n, err := f.Read(buf)
				if n == 0 || err != nil {
					break
				}
			}
			f.Close()
		}
	}
	var readNS, cmdNS time.Duration
	var ratios []float64
	for b.Loop() {
		t0 := time.Now()
		readAll()
		t1 := time.Now()
		out.Reset()
		errb.Reset()
		if code := run(context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
		r, c := t1.Sub(t0), time.Since(t1)
		readNS += r
		cmdNS += c
		ratios = append(ratios, float64(c)/float64(r))
	}
	// The median of the paired ratios: a burst of load on the machine
	// falls on one pair, not on the result.
	slices.Sort(ratios)
	b.ReportMetric(float64(len(files)), "files")
	b.ReportMetric(float64(readNS.Nanoseconds())/float64(b.N), "read-ns/op")
	b.ReportMetric(float64(cmdNS.Nanoseconds())/float64(b.N), "cmd-ns/op")
	b.ReportMetric(ratios[len(ratios)/2], "cmd/read")
}
