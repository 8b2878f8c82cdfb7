package irq

import (
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/benchcpu"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

var bigHost = hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488}

// BenchmarkLoad loads the NIC IRQs (520 of 1,000) of a 512-CPU host.
func BenchmarkLoad(b *testing.B) {
	root := hosttest.Synthetic(b, bigHost)
	h, err := topology.Read(hosttest.Open(b, root))
	if err != nil {
		b.Fatal(err)
	}
	stop := benchcpu.Start(b)
	for b.Loop() {
		if _, err := Load(h, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	stop()
}

// BenchmarkLoadAll loads all 1,000 IRQs of a 512-CPU host.
func BenchmarkLoadAll(b *testing.B) {
	root := hosttest.Synthetic(b, bigHost)
	h, err := topology.Read(hosttest.Open(b, root))
	if err != nil {
		b.Fatal(err)
	}
	stop := benchcpu.Start(b)
	for b.Loop() {
		if _, err := Load(h, Options{All: true}); err != nil {
			b.Fatal(err)
		}
	}
	stop()
}
