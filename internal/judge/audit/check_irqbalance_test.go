package audit

import (
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/irqbalance"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestAuditIrqbalance checks irqbalance-active against what it bans.
func TestAuditIrqbalance(t *testing.T) {
	h, tb := loadHost(t, "seed")
	tests := []struct {
		name     string
		give     *irqbalance.Settings
		wantIRQs []int // nil: no finding
		wantFix  string
	}{
		{name: "not running", give: &irqbalance.Settings{Running: unknown.Of(false)}},
		{name: "running, bans nothing", give: &irqbalance.Settings{Running: unknown.Of(true), PIDs: []int{812}, ConfigFile: "/etc/default/irqbalance"},
			wantIRQs: []int{283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299},
			wantFix:  `set IRQBALANCE_ARGS="--banirq=283 --banirq=284`},
		{name: "running, bans the driver", give: &irqbalance.Settings{Running: unknown.Of(true), PIDs: []int{812}, BannedModules: []string{"mlx5"}}},
		{name: "running, bans some IRQs", give: &irqbalance.Settings{Running: unknown.Of(true), PIDs: []int{812},
			BannedIRQs: []int{283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297}, ConfigArgs: []string{"--banirq=283"}},
			wantIRQs: []int{298, 299}, wantFix: `IRQBALANCE_ARGS="--banirq=283 --banirq=298 --banirq=299"`},
	}
	for _, tt := range tests {
		got := onlyCheck(Run(h, tb, nil, Options{Irqbalance: tt.give, Governor: performance}), CheckIrqbalance)
		if tt.wantIRQs == nil {
			if len(got) != 0 {
				t.Errorf("%s: %+v, want no finding", tt.name, got)
			}
			continue
		}
		if len(got) != 1 || !slices.Equal(got[0].IRQ, tt.wantIRQs) || got[0].PID != 812 || !strings.Contains(got[0].Fix, tt.wantFix) {
			t.Errorf("%s: %+v, want IRQs %v, PID 812, fix containing %q", tt.name, got, tt.wantIRQs, tt.wantFix)
		}
	}
}

// TestAuditIrqbalanceBanmod: irqbalance matches --banmod against the PCI
// function's driver (virtio-pci for a virtio NIC, not virtio_net) and the
// IRQ name.
func TestAuditIrqbalanceBanmod(t *testing.T) {
	h, tb := loadHost(t, "vm-virtio")
	tests := []struct {
		mod     string
		drivers map[string]string
		want    int // unbanned IRQs of eth0
	}{
		{mod: "virtio_net", drivers: map[string]string{"0000:00:03.0": "virtio-pci"}, want: 3},
		{mod: "virtio-pci", drivers: map[string]string{"0000:00:03.0": "virtio-pci"}, want: 0},
		{mod: "virtio2", drivers: map[string]string{"0000:00:03.0": "virtio-pci"}, want: 0}, // in every IRQ name
		{mod: "virtio_net", drivers: nil, want: 0},                                          // not read: the netdev driver
	}
	for _, tt := range tests {
		ib := &irqbalance.Settings{Running: unknown.Of(true), PIDs: []int{9}, BannedModules: []string{tt.mod}}
		got := onlyCheck(Run(h, tb, nil, Options{Irqbalance: ib, PCIDrivers: tt.drivers, Governor: performance}), CheckIrqbalance)
		n := 0
		if len(got) == 1 {
			n = len(got[0].IRQ)
		}
		if n != tt.want || len(got) > 1 {
			t.Errorf("--banmod=%s, drivers %v: %d unbanned IRQs (%+v), want %d", tt.mod, tt.drivers, n, got, tt.want)
		}
	}
}

// TestAuditIrqbalanceRuntime: irqbalance-active goes quiet when the
// daemon says over its socket that it bans the NIC's IRQs at run time
// (irqnuma's tuner bans them so), and the daemon's list wins over its
// command line: an IRQ a client took off the list is loose again.
func TestAuditIrqbalanceRuntime(t *testing.T) {
	h, tb := loadHost(t, "seed")
	all := []int{283, 284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299}
	tests := []struct {
		name     string
		cmdline  []int
		runtime  []int
		wantIRQs []int
	}{
		{name: "every IRQ banned at run time", runtime: all},
		{name: "all but one", runtime: all[:16], wantIRQs: []int{299}},
		{name: "the command line's bans replaced", cmdline: all, runtime: all[1:], wantIRQs: []int{283}},
	}
	for _, tt := range tests {
		ib := &irqbalance.Settings{Running: unknown.Of(true), PIDs: []int{812}, BannedIRQs: tt.cmdline,
			Runtime: unknown.Of(irqbalance.Runtime{PID: 812, Socket: "/run/irqbalance/irqbalance812.sock", Sleep: 10, BannedIRQs: tt.runtime})}
		got := onlyCheck(Run(h, tb, nil, Options{Irqbalance: ib, Governor: performance}), CheckIrqbalance)
		if tt.wantIRQs == nil {
			if len(got) != 0 {
				t.Errorf("%s: %+v, want no finding", tt.name, got)
			}
			continue
		}
		if len(got) != 1 || !slices.Equal(got[0].IRQ, tt.wantIRQs) {
			t.Errorf("%s: %+v, want one finding for IRQs %v", tt.name, got, tt.wantIRQs)
		}
	}
}
