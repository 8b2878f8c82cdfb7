package audit

import (
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/units"
)

// CheckCgroupSharedCore says CPUs of a selected group share a physical
// core (are SMT thread siblings) with CPUs a NIC's queue IRQs are
// delivered to: the group's threads and the NIC's interrupts and
// softirqs take turns on one core's execution units. A warning for a
// group whose CPUs are its own (the core was meant to be), info for one
// that shares its CPUs anyway.
const CheckCgroupSharedCore Check = "cgroup-shared-core"

// Group CPUs on the cores of a NIC's IRQ CPUs: cgroup-shared-core.
func init() {
	register(&check{ids: []Check{CheckCgroupSharedCore}, nic: judges((*auditor).checkCgroupCore)})
}

// checkCgroupCore: cgroup-shared-core, per selected group with known
// CPUs, for its CPUs that take none of the NIC's queue IRQs themselves
// (cgroup-exclusive-irq and proc-irq-overlap say those) but whose
// siblings do.
func (a *auditor) checkCgroupCore(c *nicCtx) {
	for _, m := range a.groups() {
		g := m.Group
		if !g.CPUs.Known() {
			continue
		}
		shared := a.online(g.CPUs.Or(cpuset.Set{})).Intersection(c.irqCores).Difference(c.irqCPUs)
		if shared.IsEmpty() {
			continue
		}
		siblings := a.h.SiblingsOf(shared).Intersection(c.irqCPUs)
		irqs := c.queueIRQsOn(c.where, siblings)
		sev, own := SeverityInfo, ""
		if g.Exclusive {
			sev, own = SeverityWarning, fmt.Sprintf(", which it holds exclusively (%s),", exclusiveWord(g))
		}
		cores := a.h.SiblingsOf(a.online(g.CPUs.Or(cpuset.Set{})))
		nodes, _ := a.h.NodesOf(shared)
		fix := fmt.Sprintf("irqnuma irq pin %s --exclude %s  # the group's CPUs and their siblings", c.ifname, cores.List())
		if g.Pod != nil {
			fix += "; for whole cores to the pod, the kubelet's --cpu-manager-policy-options=full-pcpus-only"
		}
		a.add(Finding{Check: CheckCgroupSharedCore, Severity: sev, NIC: c.nic.Name, Subject: groupSubject(m),
			IRQ: irqs, CPUs: shared, Nodes: nodes.IDs(),
			Message: fmt.Sprintf("%s's %s%s %s physical %s with %s, where %s's %s %s %s delivered: its threads share those cores with the NIC's interrupts and softirqs",
				groupWords(g), cpusWord(shared), own, units.Choose(shared.Len(), "shares a", "share"), units.Choose(shared.Len(), "core", "cores"),
				cpusWord(siblings), c.nic.Name, units.Choose(len(irqs), "queue IRQ", "queue IRQs"), irqsSubjectRange(irqs), units.Choose(len(irqs), "is", "are")),
			Fix: c.fix(fix + a.keepOff(g, cores))})
	}
}
