package watch

import (
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/testsupport/watchtest"
)

// TestVerdictDirection: the verdict names the softirq the CPU's row
// shows (NET_RX or NET_TX per second), not only the direction of the
// IRQs it took; "TX softirq on CPU 1 at 0% soft" beside a row of NET_RX
// 2.0/s and NET_TX 0 was the defect. On the 2-CPU virtio VM, eth0's IRQ
// 38 is input.0 (rx) and IRQ 39 output.0 (tx).
func TestVerdictDirection(t *testing.T) {
	tests := []struct {
		give string
		edit func(h watchtest.Tree)
		want string
	}{
		{
			give: "tx vector, NET_RX ran",
			edit: func(h watchtest.Tree) {
				h.AddIRQ(39, 1, 2)
				h.AddSoftirq("NET_RX", 1, 2)
				h.AddStat(1, map[int]uint64{watchtest.Idle: 100})
			},
			want: "eth0: RX softirq (for tx queue IRQs) on CPU 1 (node 0, local) at 0% soft — not saturated (0% busy)",
		},
		{
			give: "tx vector, NET_TX ran",
			edit: func(h watchtest.Tree) {
				h.AddIRQ(39, 1, 2)
				h.AddSoftirq("NET_TX", 1, 2)
				h.AddStat(1, map[int]uint64{watchtest.Idle: 100})
			},
			want: "eth0: TX softirq on CPU 1 (node 0, local) at 0% soft — not saturated (0% busy)",
		},
		{
			give: "rx vector, NET_TX ran more",
			edit: func(h watchtest.Tree) {
				h.AddIRQ(38, 1, 5)
				h.AddSoftirq("NET_TX", 1, 9)
				h.AddSoftirq("NET_RX", 1, 3)
				h.AddStat(1, map[int]uint64{watchtest.Idle: 100})
			},
			want: "eth0: TX softirq (for rx queue IRQs) on CPU 1 (node 0, local) at 0% soft — not saturated (0% busy)",
		},
		{
			give: "tx vector, no softirq counted",
			edit: func(h watchtest.Tree) {
				h.AddIRQ(39, 1, 2)
				h.AddStat(1, map[int]uint64{watchtest.Idle: 100})
			},
			want: "eth0: TX softirq on CPU 1 (node 0, local) at 0% soft — not saturated (0% busy)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			if got := verdictOf(t, tt.edit); got != tt.want {
				t.Errorf("verdict = %q\nwant        %q", got, tt.want)
			}
		})
	}
}

// verdictOf is eth0's verdict over one second of the virtio VM in which
// edit happened.
func verdictOf(t *testing.T, edit func(h watchtest.Tree)) string {
	t.Helper()
	h, s, clk := setup(t, "vm-virtio")
	prev := sample(t, s)
	clk.Advance(time.Second)
	edit(h)
	iv := diff(t, s, prev, sample(t, s))
	return nicStats(t, iv, "eth0").Verdict.Text
}

// TestVerdictSoftirqCPU: the NIC's softirq CPU is one that ran its
// network softirqs, not one that took a stray interrupt and spent its
// softirq time on something else. In the lab's flow-other-core run the
// flow's IRQ was on CPU 4 (880 NET_RX/s, 0% soft by the tick) and CPU 0,
// which took a few of the NIC's other IRQs, had 1% soft: the verdict
// named CPU 0. A CPU saturated by polling, with few interrupts but
// NET_RX after NET_RX, is still named over one with more interrupts.
func TestVerdictSoftirqCPU(t *testing.T) {
	tests := []struct {
		give string
		edit func(h watchtest.Tree)
		want string
	}{
		{
			give: "stray interrupt on a CPU busy with other softirqs",
			edit: func(h watchtest.Tree) {
				h.AddIRQ(38, 1, 880)
				h.AddSoftirq("NET_RX", 1, 880)
				h.AddStat(1, map[int]uint64{watchtest.Idle: 100})
				h.AddIRQ(38, 0, 2)
				h.AddSoftirq("NET_RX", 0, 2)
				h.AddSoftirq("TIMER", 0, 250)
				h.AddStat(0, map[int]uint64{watchtest.Softirq: 1, watchtest.Idle: 99})
			},
			want: "eth0: RX softirq on CPU 1 (node 0, local) at 0% soft — not saturated (0% busy); also on CPU 0 (local)",
		},
		{
			give: "polling CPU with few interrupts",
			edit: func(h watchtest.Tree) {
				h.AddIRQ(38, 1, 3)
				h.AddSoftirq("NET_RX", 1, 5000)
				h.AddStat(1, map[int]uint64{watchtest.Softirq: 97, watchtest.System: 3})
				h.AddIRQ(38, 0, 900)
				h.AddSoftirq("NET_RX", 0, 900)
				h.AddStat(0, map[int]uint64{watchtest.Softirq: 5, watchtest.Idle: 95})
			},
			want: "eth0: RX softirq on CPU 1 (node 0, local) at 97% soft — saturated; also on CPU 0 (local)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			if got := verdictOf(t, tt.edit); got != tt.want {
				t.Errorf("verdict = %q\nwant        %q", got, tt.want)
			}
		})
	}
}
