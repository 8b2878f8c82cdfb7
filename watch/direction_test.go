package watch

import (
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/watch/watchtest"
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
			h, s, clk := setup(t, "vm-virtio")
			prev := sample(t, s)
			clk.Advance(time.Second)
			tt.edit(h)
			iv := diff(t, s, prev, sample(t, s))
			if got := nicStats(t, iv, "eth0").Verdict.Text; got != tt.want {
				t.Errorf("verdict = %q\nwant        %q", got, tt.want)
			}
		})
	}
}
