package audit

import (
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestAuditQueuePairs: a queue's rx and tx vectors (virtio input.0 and
// output.0) on one CPU are not "shared", and count as one queue; two
// queues on one CPU are.
func TestAuditQueuePairs(t *testing.T) {
	h, tb := loadHost(t, "vm-virtio")
	for _, n := range []int{38, 39} {
		q, ok := tb.Get(n)
		if !ok {
			t.Fatalf("vm-virtio has no IRQ %d", n)
		}
		q.Affinity, q.Effective = unknown.Of(cpuset.New(0)), unknown.Of(cpuset.New(0))
	}
	fs := Run(h, tb, nil, Options{Governor: performance})
	if got := onlyCheck(fs, CheckIRQSharedCPU); len(got) != 0 {
		t.Errorf("rx and tx of queue 0 on CPU 0: irq-shared-cpu %+v, want none", got)
	}
	// Make IRQ 39 another queue's vector: now two queues share CPU 0
	// while CPU 1 serves none.
	q, _ := tb.Get(39)
	q.Owner = &irq.Owner{NIC: "eth0", Queue: unknown.Of(1), Dir: interrupts.DirTX, Kind: irq.KindQueue}
	got := onlyCheck(Run(h, tb, nil, Options{Governor: performance}), CheckIRQSharedCPU)
	if len(got) != 1 || !slices.Equal(got[0].IRQ, []int{38, 39}) || got[0].CPUs.List() != "0" ||
		!strings.Contains(got[0].Message, "while 1 local CPU serves none of eth0's queue IRQs (1)") {
		t.Errorf("queues 0 and 1 on CPU 0: irq-shared-cpu %+v, want IRQs 38, 39 on CPU 0 with CPU 1 free", got)
	}
}

// TestAuditSharedCPUAppCPUs: CPUs kept for the application (tune
// --app-cpus) are no place for queue IRQs: two queues on CPU 0 while CPU
// 1 is kept for the application share nothing that could be spread.
func TestAuditSharedCPUAppCPUs(t *testing.T) {
	h, tb := loadHost(t, "vm-virtio")
	for _, n := range []int{38, 39} {
		q, _ := tb.Get(n)
		q.Affinity, q.Effective = unknown.Of(cpuset.New(0)), unknown.Of(cpuset.New(0))
	}
	q, _ := tb.Get(39)
	q.Owner = &irq.Owner{NIC: "eth0", Queue: unknown.Of(1), Dir: interrupts.DirTX, Kind: irq.KindQueue}
	if got := onlyCheck(Run(h, tb, nil, Options{Governor: performance}), CheckIRQSharedCPU); len(got) != 1 {
		t.Fatalf("queues 0 and 1 on CPU 0, CPU 1 free: %d irq-shared-cpu findings, want 1", len(got))
	}
	if got := onlyCheck(Run(h, tb, nil, Options{Governor: performance, AppCPUs: cpuset.New(1)}), CheckIRQSharedCPU); len(got) != 0 {
		t.Errorf("CPU 1 kept for the application: irq-shared-cpu %+v, want none", got)
	}
}

// TestAuditIRQAppCPU: irq-app-cpu names the queue IRQs on CPUs kept for
// the application, and says nothing when none is kept or none is hit.
func TestAuditIRQAppCPU(t *testing.T) {
	h, tb := loadHost(t, "vm-virtio")
	for _, n := range []int{38, 39} {
		q, _ := tb.Get(n)
		q.Affinity, q.Effective = unknown.Of(cpuset.New(1)), unknown.Of(cpuset.New(1))
	}
	if got := onlyCheck(Run(h, tb, nil, Options{Governor: performance}), CheckIRQAppCPU); len(got) != 0 {
		t.Errorf("no CPU kept: irq-app-cpu %+v", got)
	}
	if got := onlyCheck(Run(h, tb, nil, Options{Governor: performance, AppCPUs: cpuset.New(0)}), CheckIRQAppCPU); len(got) != 0 {
		t.Errorf("CPU 0 kept, IRQs on CPU 1: irq-app-cpu %+v", got)
	}
	got := onlyCheck(Run(h, tb, nil, Options{Governor: performance, AppCPUs: cpuset.New(1)}), CheckIRQAppCPU)
	if len(got) != 1 || !slices.Equal(got[0].IRQ, []int{38, 39}) || got[0].Severity != SeverityWarning ||
		got[0].Fix != "irqnuma irq pin eth0 --exclude 1" {
		t.Errorf("CPU 1 kept, IRQs 38-39 on it: irq-app-cpu %+v", got)
	}
}
