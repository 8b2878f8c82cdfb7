package tune

import (
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/steer"
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
