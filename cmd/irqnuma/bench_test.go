package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/benchcpu"
	"github.com/irqnuma/irqnuma/internal/hosttest"
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
