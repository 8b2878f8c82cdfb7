package interrupts

import (
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/benchcpu"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// bigHost is a 512-CPU host (4 nodes, SMT) with 1,000 IRQs.
var bigHost = hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488}

// BenchmarkParseInterrupts parses /proc/interrupts of a 512-CPU,
// 1,000-IRQ host (about 5.6 MB).
func BenchmarkParseInterrupts(b *testing.B) {
	root := hosttest.Synthetic(b, bigHost)
	fsys := hosttest.Open(b, root)
	data, err := fsys.Read(fsys.Path("proc/interrupts"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	stop := benchcpu.Start(b)
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
	stop()
}

// hugeHost is a 1,152-CPU host (8 nodes, SMT) with 1,000 IRQs: its
// /proc/interrupts is about 13 MB.
var hugeHost = hosttest.SyntheticSpec{CPUs: 1152, Nodes: 8, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488}

// BenchmarkParseInterrupts1152 parses that file; the budget is 60 ms.
func BenchmarkParseInterrupts1152(b *testing.B) {
	root := hosttest.Synthetic(b, hugeHost)
	fsys := hosttest.Open(b, root)
	data, err := fsys.Read(fsys.Path("proc/interrupts"))
	if err != nil {
		b.Fatal(err)
	}
	if len(data) < 12<<20 {
		b.Fatalf("/proc/interrupts is %d bytes, want about 13 MB", len(data))
	}
	b.SetBytes(int64(len(data)))
	stop := benchcpu.Start(b)
	for b.Loop() {
		in, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		if len(in.CPUs) != 1152 {
			b.Fatalf("%d CPU columns, want 1152", len(in.CPUs))
		}
	}
	stop()
}
