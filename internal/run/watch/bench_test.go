package watch

import (
	"syscall"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// bigHost is a 512-CPU, 4-node SMT host with 1,000 IRQs: four 100G NICs
// with 63 queues each (256 IRQs) and 744 NVMe queue IRQs.
var bigHost = hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 4, QueuesPerNIC: 63, ExtraIRQs: 744}

func bigSampler(b *testing.B) *Sampler {
	b.Helper()
	if bigHost.IRQs() != 1000 {
		b.Fatalf("spec has %d IRQs, want 1000", bigHost.IRQs())
	}
	root := hosttest.Synthetic(b, bigHost)
	h, err := topology.Read(hosttest.Open(b, root))
	if err != nil {
		b.Fatal(err)
	}
	s, err := newSampler(h, samplerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkSample is one sample of the 512-CPU, 1,000-IRQ host: every
// file read and parsed. The budget is 10 ms of CPU.
func BenchmarkSample(b *testing.B) {
	s := bigSampler(b)
	b.ReportAllocs()
	cpu := cpuTime(b)
	for b.Loop() {
		if _, err := s.Sample(); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
}

// BenchmarkInterval is one sample plus the interval computed against the
// previous one: what `watch` does every tick.
func BenchmarkInterval(b *testing.B) {
	s := bigSampler(b)
	prev, err := s.Sample()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := cpuTime(b)
	for b.Loop() {
		cur, err := s.Sample()
		if err != nil {
			b.Fatal(err)
		}
		cur.Time = prev.Time.Add(1e9)
		if _, err := diffSamples(s.Host(), s.NICs(), prev, cur); err != nil {
			b.Fatal(err)
		}
		prev = cur
	}
	cpu.report(b)
}

// cpuClock measures the CPU time (user + system, every thread, the
// garbage collector included) the process spends, so the benchmark can
// report CPU per op as well as wall time on a shared, loaded machine.
type cpuClock struct{ start time.Duration }

func cpuTime(b *testing.B) cpuClock { return cpuClock{start: rusage(b)} }

func (c cpuClock) report(b *testing.B) {
	b.ReportMetric(float64((rusage(b)-c.start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func rusage(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
