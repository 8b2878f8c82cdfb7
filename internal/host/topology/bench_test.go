package topology

import (
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/benchcpu"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// BenchmarkRead reads a 512-CPU, 4-node host with 8 NICs of 64 queues.
func BenchmarkRead(b *testing.B) {
	root := hosttest.Synthetic(b, hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488})
	stop := benchcpu.Start(b)
	fsys := hosttest.Open(b, root)
	for b.Loop() {
		if _, err := Read(fsys); err != nil {
			b.Fatal(err)
		}
	}
	stop()
}
