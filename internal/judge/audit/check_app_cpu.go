package audit

import (
	"fmt"

	"github.com/irqnuma/irqnuma/internal/units"
)

// CheckIRQAppCPU says a NIC's queue IRQs are delivered to CPUs kept for
// the application (audit and tune --app-cpus, tune --reserve): its
// threads would share them with the NIC's interrupts and softirqs, the
// placement that gave 62.6 Gbit/s against 82.2 with the two apart on a
// 200 Gbit NIC. It is judged only when CPUs are kept.
const CheckIRQAppCPU Check = "irq-app-cpu"

func init() {
	register(&check{ids: []Check{CheckIRQAppCPU}, nic: judges((*auditor).checkAppCPU)})
}

// checkAppCPU: irq-app-cpu. Queue IRQs delivered to a kept CPU.
func (a *auditor) checkAppCPU(c *nicCtx) {
	app := a.opts.AppCPUs
	if app.IsEmpty() {
		return
	}
	on := app.Intersection(c.irqCPUs)
	if on.IsEmpty() {
		return
	}
	irqs := c.queueIRQsOn(c.where, on)
	nodes, _ := a.h.NodesOf(on)
	a.add(Finding{Check: CheckIRQAppCPU, Severity: SeverityWarning, NIC: c.nic.Name, Subject: irqsSubject(irqs),
		IRQ: irqs, CPUs: on, Nodes: nodes.IDs(),
		Message: fmt.Sprintf("%s's %s %s %s to %s, kept for the application (%s): its threads would share %s with the NIC's interrupts and softirqs",
			c.nic.Name, units.Choose(len(irqs), "queue IRQ", "queue IRQs"), irqsSubjectRange(irqs), units.Choose(len(irqs), "is delivered", "are delivered"),
			cpusWord(on), app, units.Choose(on.Len(), "it", "them")),
		Fix: c.fix(fmt.Sprintf("irqnuma irq pin %s --exclude %s", c.ifname, app))})
}
