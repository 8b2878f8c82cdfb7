package tune

import (
	"context"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/testsupport/benchcpu"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestNAPIFixes: the napi-set steps that end napi-settings'
// contradictions set each instance to what changes no behaviour:
// defer-hard-irqs 0 where no gro-flush-timeout armed the timer, and
// irq-suspend-timeout 0 where defer and timeout are not both set; an
// instance whose settings are not reported, or that defers for real, is
// left alone.
func TestNAPIFixes(t *testing.T) {
	u32 := func(v uint32) *uint32 { return &v }
	u64 := func(v uint64) *uint64 { return &v }
	n := &steer.NIC{Name: "eth0", NAPIs: []steer.NAPI{
		{ID: 1, DeferHardIRQs: u32(2), GROFlushTimeout: u64(0)},                                // defers nothing
		{ID: 2, DeferHardIRQs: u32(2), GROFlushTimeout: u64(20000), IRQSuspendTimeout: u64(1)}, // defers, suspend works
		{ID: 3, DeferHardIRQs: u32(0), GROFlushTimeout: u64(0), IRQSuspendTimeout: u64(500)},   // suspend alone
		{ID: 4, DeferHardIRQs: u32(2), GROFlushTimeout: u64(0), IRQSuspendTimeout: u64(500)},   // both
		{ID: 5}, // not reported
	}}
	show := func(steps []NAPIStep) string {
		out := ""
		for _, s := range steps {
			out += (SteerStep{NIC: "eth0", NAPI: &s}).Name() + ";"
		}
		return out
	}
	if got, want := show(napiFixes(n, true)), "eth0 napi 1 defer-hard-irqs 0;eth0 napi 4 defer-hard-irqs 0;"; got != want {
		t.Errorf("defer without a timer: %s, want %s", got, want)
	}
	if got, want := show(napiFixes(n, false)), "eth0 napi 3 irq-suspend-timeout 0;eth0 napi 4 irq-suspend-timeout 0;"; got != want {
		t.Errorf("suspend alone: %s, want %s", got, want)
	}
	if got := napiFixes(nil, true); got != nil {
		t.Errorf("no steering: %v", got)
	}
}

// The synthetic hosts of the planning benchmarks: 512 CPUs on 4 nodes
// and 1,152 on 8, each with 8 NICs of 63 queues and about 1,000 IRQs.
var (
	tuneHost512  = hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488}
	tuneHost1152 = hosttest.SyntheticSpec{CPUs: 1152, Nodes: 8, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488}
)

// benchTunePlan is tune --dry-run --fail-on info --reserve N of every
// NIC, N cores of each node's kept for the application (the synthetic
// host spreads its queue IRQs well; they move off the kept cores): the
// reading, the audit and the plan, nothing written.
func benchTunePlan(b *testing.B, spec hosttest.SyntheticSpec, reserve int) {
	fsys := hosttest.Open(b, hosttest.Synthetic(b, spec))
	req := TuneRequest{Root: fsys, FailOn: audit.SeverityInfo, Reserve: reserve, DryRun: true, Writer: FileWriter{}}
	var changes int
	stop := benchcpu.Start(b)
	for b.Loop() {
		res, err := Tune(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		changes = res.Pin.Changes
	}
	stop()
	if changes == 0 {
		b.Fatal("the plan changes nothing: the benchmark measures no planning")
	}
	b.ReportMetric(float64(changes), "changes")
}

// BenchmarkTunePlan512 plans on the 512-CPU host, keeping 48 of each
// node's 64 cores.
func BenchmarkTunePlan512(b *testing.B) { benchTunePlan(b, tuneHost512, 48) }

// BenchmarkTunePlan1152 plans on the 1,152-CPU host, keeping 56 of each
// node's 72 cores.
func BenchmarkTunePlan1152(b *testing.B) { benchTunePlan(b, tuneHost1152, 56) }
