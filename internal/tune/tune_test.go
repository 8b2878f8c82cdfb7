package tune

import (
	"slices"
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

// TestOwnDefers: the NAPI instances whose own defer-hard-irqs is not the
// NIC's sysfs napi_defer_hard_irqs are those a write of the file would
// overwrite (every instance's, on a kernel with per-NAPI settings); the
// tune leaves the file for them and says why. An instance whose value is
// not reported, or a NIC whose sysfs value is unknown, names none.
func TestOwnDefers(t *testing.T) {
	u32 := func(v uint32) *uint32 { return &v }
	n := &steer.NIC{Name: "eth2", Sysfs: steer.Sysfs{DeferHardIRQs: u32(2)}, NAPIs: []steer.NAPI{
		{ID: 8204, DeferHardIRQs: u32(0)}, // its own: 0
		{ID: 8201, DeferHardIRQs: u32(2)}, // the file's
		{ID: 8203, DeferHardIRQs: u32(3)}, // its own: 3
		{ID: 8202},                        // not reported (before 6.13)
	}}
	if got := ownDefers(n); !slices.Equal(got, []uint32{8203, 8204}) {
		t.Errorf("ownDefers = %v, want [8203 8204]", got)
	}
	want := "a write of eth2's napi_defer_hard_irqs sets every NAPI instance's defer-hard-irqs on this kernel, and NAPIs 8203, 8204 have values of their own (napi-set): the write would overwrite them, and a restore could not bring them back"
	if got := ownDefersWhy("eth2", ownDefers(n)); got != want {
		t.Errorf("why:\n got %s\nwant %s", got, want)
	}
	if got := ownDefersWhy("eth2", []uint32{8203}); got != "a write of eth2's napi_defer_hard_irqs sets every NAPI instance's defer-hard-irqs on this kernel, and NAPI 8203 has a value of its own (napi-set): the write would overwrite it, and a restore could not bring it back" {
		t.Errorf("why for one: %s", got)
	}
	n.Sysfs.DeferHardIRQs = nil
	if got := ownDefers(n); got != nil {
		t.Errorf("sysfs unknown: %v", got)
	}
	if got := ownDefers(nil); got != nil {
		t.Errorf("no steering: %v", got)
	}
}
