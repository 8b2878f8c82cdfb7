package audit

import (
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Words and fixes several checks share.

// pinFix is the irqnuma command that moves a NIC's queue IRQs onto its
// own node, one per physical core.
func pinFix(nic string) string { return "irqnuma irq pin " + nic }

// fixForIRQ is the fix for a misplaced IRQ: fix, or for a kernel-managed
// IRQ what can be done instead.
func fixForIRQ(nic string, q *irq.IRQ, fix string) string {
	if unknown.Is(q.Managed, true) {
		return fmt.Sprintf("kernel-managed: its affinity cannot be changed; keep traffic off this queue with `ethtool -X %s` (RSS indirection) or fewer queues with `ethtool -L %s`", nic, nic)
	}
	return fix
}

// irqsSubjectList is "IRQs 286, 290".
func irqsSubjectList(ns []int) string {
	if len(ns) == 1 {
		return fmt.Sprintf("IRQ %d", ns[0])
	}
	return "IRQs " + intsList(ns, false)
}

func nodeIDs(n int) []int {
	if n < 0 {
		return []int{}
	}
	return []int{n}
}

// cpusWord is "CPU 3" or "CPUs 0-15".
func cpusWord(s cpuset.Set) string {
	if s.Len() == 1 {
		return "CPU " + s.List()
	}
	return "CPUs " + s.List()
}
