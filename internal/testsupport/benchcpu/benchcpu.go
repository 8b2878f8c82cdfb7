// Package benchcpu reports the CPU time a benchmark's process spends per
// operation (user + system, from getrusage), next to Go's wall-clock
// ns/op. On a shared or loaded machine wall time measures the neighbours;
// CPU time measures the code, including the kernel work of reading /proc
// and /sys that it causes.
package benchcpu

import (
	"syscall"
	"testing"
	"time"
)

// Start begins measuring; call the returned function after the loop.
//
//	stop := benchcpu.Start(b)
//	for b.Loop() { ... }
//	stop()
func Start(b *testing.B) func() {
	b.Helper()
	start := used(b)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((used(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

func used(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
