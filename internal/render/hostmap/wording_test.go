package hostmap

import (
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestNICLineWording: a NIC's line says its queue IRQs and CPUs as a
// sentence would, the word agreeing with the list and a count only where
// the list is too long to count at a glance ("2 queue IRQs 38-39 on 1
// CPU 1" read as two CPUs).
func TestNICLineWording(t *testing.T) {
	tests := []struct {
		irqs []int
		cpus cpuset.Set
		want string
	}{
		{[]int{38, 39}, cpuset.New(1), "  queue IRQs 38-39 on CPU 1"},
		{[]int{38}, cpuset.New(1), "  queue IRQ 38 on CPU 1"},
		{[]int{38, 39}, cpuset.New(0, 1), "  queue IRQs 38-39 on CPUs 0-1"},
		{[]int{101, 102, 103}, cpuset.New(3, 8, 9), "  queue IRQs 101-103 on CPUs 3,8-9 (3)"},
		{[]int{101, 103, 105}, cpuset.New(0, 1, 2, 3), "  queue IRQs 101,103,105 (3) on CPUs 0-3"},
		{[]int{38, 39}, cpuset.Set{}, "  queue IRQs 38-39"},
		{nil, cpuset.Set{}, "  no queue IRQs"},
	}
	for _, tt := range tests {
		lines := nicLines(NIC{Name: "eth0", RxQueues: unknown.Of(2), TxQueues: unknown.Of(2), QueueIRQs: tt.irqs, QueueCPUs: tt.cpus})
		if len(lines) != 2 || lines[1] != tt.want {
			t.Errorf("nicLines(IRQs %v on CPUs %s) = %q, want second line %q", tt.irqs, tt.cpus, lines, tt.want)
		}
	}
}

// TestCountedList: one CPU is "CPU 130"; a list says its length only
// when it is not one range and has more than two members.
func TestCountedList(t *testing.T) {
	tests := []struct {
		give cpuset.Set
		want string
	}{
		{cpuset.New(130), "CPU 130"},
		{cpuset.New(130, 131), "CPUs 130-131"},
		{cpuset.New(130, 140), "CPUs 130,140"},
		{cpuset.New(130, 131, 132), "CPUs 130-132"},
		{cpuset.New(130, 140, 150), "CPUs 130,140,150 (3)"},
	}
	for _, tt := range tests {
		if got := countedList(tt.give, "CPU", "CPUs"); got != tt.want {
			t.Errorf("countedList(%s) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
