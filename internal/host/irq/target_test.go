package irq

import (
	"errors"
	"testing"

	"github.com/irqnuma/irqnuma/internal/unknown"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		give string
		want Target
		ok   bool
	}{
		{"/proc/irq/284/smp_affinity_list", Target{Path: "/proc/irq/284/smp_affinity_list", File: FileAffinityList, IRQ: unknown.Of(284), Queue: irqFileQueue}, true},
		{"/proc/irq/0/smp_affinity", Target{Path: "/proc/irq/0/smp_affinity", File: FileAffinity, IRQ: unknown.Of(0), Queue: irqFileQueue}, true},
		{"/sys/class/net/eth0/queues/tx-3/xps_cpus", Target{Path: "/sys/class/net/eth0/queues/tx-3/xps_cpus", File: FileXPS, IRQ: xpsIRQ, NIC: "eth0", Queue: unknown.Of(3)}, true},
		{"/sys/class/net/enp65s0f0/queues/tx-0/xps_cpus", Target{Path: "/sys/class/net/enp65s0f0/queues/tx-0/xps_cpus", File: FileXPS, IRQ: xpsIRQ, NIC: "enp65s0f0", Queue: unknown.Of(0)}, true},
		{"/etc/passwd", Target{}, false},
		{"proc/irq/284/smp_affinity_list", Target{}, false},
		{"/proc/irq/284/../../../etc/shadow", Target{}, false},
		{"/proc/irq/284//smp_affinity_list", Target{}, false},
		{"/proc/irq/0284/smp_affinity_list", Target{}, false},
		{"/proc/irq/-1/smp_affinity_list", Target{}, false},
		{"/proc/irq/+1/smp_affinity_list", Target{}, false},
		{"/proc/irq/abc/smp_affinity_list", Target{}, false},
		{"/proc/irq/284/node", Target{}, false},
		{"/proc/irq/284/effective_affinity_list", Target{}, false},
		{"/proc/irq/default_smp_affinity", Target{}, false},
		{"/proc/irq/284/smp_affinity_list/x", Target{}, false},
		{"/sys/class/net/eth0/queues/rx-3/rps_cpus", Target{}, false},
		{"/sys/class/net/eth0/queues/tx-3/tx_maxrate", Target{}, false},
		{"/sys/class/net/eth0/mtu", Target{}, false},
		{"/sys/class/net/a-name-longer-than-15/queues/tx-0/xps_cpus", Target{}, false},
		{"/sys/class/net/eth0/queues/tx-x/xps_cpus", Target{}, false},
		{"/sys/devices/system/cpu/cpu1/online", Target{}, false},
		{"", Target{}, false},
	}
	for _, tt := range tests {
		got, err := ParseTarget(tt.give)
		if (err == nil) != tt.ok {
			t.Errorf("ParseTarget(%q) error = %v, want ok %v", tt.give, err, tt.ok)
			continue
		}
		if err != nil && !errors.Is(err, ErrPath) {
			t.Errorf("ParseTarget(%q) error %v does not wrap ErrPath", tt.give, err)
		}
		if got != tt.want {
			t.Errorf("ParseTarget(%q) = %+v, want %+v", tt.give, got, tt.want)
		}
	}
}
