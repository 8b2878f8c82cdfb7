package audit

import (
	"fmt"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Kernel-managed queue IRQs: irq-managed.
const CheckIRQManaged Check = "irq-managed"

func init() {
	register(&check{ids: []Check{CheckIRQManaged}, nic: judges((*auditor).checkManaged)})
}

// checkManaged: irq-managed. Queue IRQs whose affinity the kernel
// manages.
func (a *auditor) checkManaged(c *nicCtx) {
	var managed []*irq.IRQ
	for _, q := range c.queues {
		if unknown.Is(q.Managed, true) {
			managed = append(managed, q)
		}
	}
	if len(managed) == 0 {
		return
	}
	ns := irqNumbers(managed)
	a.add(Finding{Check: CheckIRQManaged, Severity: SeverityInfo, NIC: c.nic.Name, Subject: irqsSubject(ns), IRQ: ns,
		Message: fmt.Sprintf("%d of %s's %d queue IRQs are kernel-managed (read-only smp_affinity): neither irqnuma nor irqbalance can move them",
			len(managed), c.nic.Name, len(c.queues)),
		Fix: c.fix(fmt.Sprintf("choose which queues carry traffic instead: `ethtool -L %s` (queue count), `ethtool -X %s` (RSS indirection)", c.ifname, c.ifname))})
}
