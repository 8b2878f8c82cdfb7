package audit

import (
	"fmt"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// irqbalance moving the NIC's IRQs: irqbalance-active.
const CheckIrqbalance Check = "irqbalance-active"

func init() {
	register(&check{ids: []Check{CheckIrqbalance}, needs: []fact{factIrqbalance},
		fix: "run the audit on the live host, or capture irqbalance's /proc/<pid>/{comm,cmdline,environ}",
		nic: (*auditor).checkIrqbalance})
}

// checkIrqbalance: irqbalance-active. irqbalance runs and does not ban
// the NIC's (movable) IRQs.
func (a *auditor) checkIrqbalance(c *nicCtx) error {
	ib := a.opts.Irqbalance
	switch {
	case len(c.irqs) == 0:
		return nil
	case ib == nil:
		return skip("", string(CheckIrqbalance), "irqbalance was not read")
	case !ib.Running.Known():
		return skip("", string(CheckIrqbalance), "no process folders under /proc: whether irqbalance runs is unknown")
	case !unknown.Is(ib.Running, true):
		return nil
	}
	driver, ok := a.opts.PCIDrivers[c.nic.PCI]
	if !ok || c.nic.PCI == "" {
		driver = c.nic.Driver
	}
	var free []*irq.IRQ
	for _, q := range c.irqs {
		if unknown.Is(q.Managed, true) {
			continue
		}
		if banned, _ := ib.IRQBanned(q.IRQ, driver, q.Name); !banned {
			free = append(free, q)
		}
	}
	if len(free) == 0 {
		return nil
	}
	ns := irqNumbers(free)
	var onBanned []int
	for _, q := range free {
		if w, ok := c.where[q.IRQ]; ok && ib.CPUsBanned(w) {
			onBanned = append(onBanned, q.IRQ)
		}
	}
	pids := make([]string, len(ib.PIDs))
	for i, p := range ib.PIDs {
		pids[i] = fmt.Sprint(p)
	}
	are := "are"
	if len(free) == 1 {
		are = "is"
	}
	msg := fmt.Sprintf("irqbalance (PID %s) is running and %d of %s's %d IRQs %s not banned from it (--banirq, --banmod, or at run time over its socket): it will rewrite their affinity, undoing any pinning",
		strings.Join(pids, ", "), len(free), c.nic.Name, len(c.irqs), are)
	if len(onBanned) > 0 {
		cpus, from := ib.BannedCPUsNow()
		msg += fmt.Sprintf("; %s sit on CPUs it bans (%s from %s) and will be moved off them", irqsSubjectList(onBanned), cpus.List(), from)
	}
	if ib.PolicyScript != "" {
		msg += fmt.Sprintf(" (its --policyscript %s may ban some; irqnuma does not run it)", ib.PolicyScript)
	}
	lines := ib.BanConfig(ns, cpuset.Set{})
	fix := strings.Join(lines[1:], " ")
	if f, ok := strings.CutPrefix(lines[0], "# in "); ok {
		fix = "set " + fix + " in " + f
	}
	pid := 0
	if len(ib.PIDs) > 0 {
		pid = ib.PIDs[0]
	}
	a.add(Finding{Check: CheckIrqbalance, Severity: SeverityWarning, NIC: c.nic.Name, Subject: "irqbalance: " + irqsSubject(ns),
		IRQ: ns, PID: pid, Message: msg, Fix: fix})
	return nil
}
