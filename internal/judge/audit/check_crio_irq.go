package audit

import (
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// CheckPodIRQBalancing says a NIC's queue IRQs are delivered to CPUs a
// pod asked CRI-O to keep IRQs off (irq-load-balancing.crio.io): CRI-O
// took them out of every IRQ's smp_affinity when the container started,
// so something moved IRQs back since (a pin, an irqbalance that does not
// ban them, a driver's managed IRQ).
const CheckPodIRQBalancing Check = "pod-irq-balancing"

// IRQs on CPUs a pod asked CRI-O to keep them off: pod-irq-balancing,
// per NIC; and, for the host, the containers whose CRI-O config could
// not be read.
func init() {
	register(&check{ids: []Check{CheckPodIRQBalancing}, nic: judges((*auditor).checkPodIRQBalancing), host: (*auditor).checkPodIRQBalancingConfig})
}

// checkPodIRQBalancing: pod-irq-balancing, per selected pod container
// whose annotation keeps IRQs off its CPUs and the NIC's queue IRQs
// delivered to them.
func (a *auditor) checkPodIRQBalancing(c *nicCtx) {
	for _, m := range a.groups() {
		g := m.Group
		if g.Pod == nil {
			continue
		}
		ib, ok := g.Pod.IRQBalancing.Get()
		if !ok || !ib.Off {
			continue
		}
		off, ok := a.irqFreeCPUs(g, ib)
		if !ok {
			continue
		}
		on := off.Intersection(c.irqCPUs)
		if on.IsEmpty() {
			continue
		}
		irqs := c.queueIRQsOn(c.where, on)
		nodes, _ := a.h.NodesOf(on)
		a.add(Finding{Check: CheckPodIRQBalancing, Severity: SeverityWarning, NIC: c.nic.Name, Subject: groupSubject(m),
			IRQ: irqs, CPUs: on, Nodes: nodes.IDs(),
			Message: fmt.Sprintf("%s's %s %s %s to %s, which %s asked CRI-O to keep IRQs off (%s: %q, %s): CRI-O took them out of the IRQs' masks when the container started, and something moved IRQs back since%s",
				c.nic.Name, units.Choose(len(irqs), "queue IRQ", "queue IRQs"), irqsSubjectRange(irqs), units.Choose(len(irqs), "is delivered", "are delivered"),
				cpusWord(on), podWords(g.Pod), ib.Key, ib.Value, ib.From, a.irqbalanceOn(on)),
			Fix: c.fix(fmt.Sprintf("irqnuma irq pin %s --exclude %s", c.ifname, off.List()) +
				"; then find what moved them: an irqbalance without the container's CPUs banned, a pin, or a managed IRQ the kernel places itself")})
	}
}

// irqFreeCPUs are the CPUs CRI-O keeps IRQs off for the container: its
// CPUs as CRI-O took them (its cgroup's when the config has none), less,
// for housekeeping, the first CPU's thread siblings among them
// (runtimehandlerhooks: getHousekeepingCPUs). ok is false when the CPUs
// are unknown.
func (a *auditor) irqFreeCPUs(g *proc.Cgroup, ib proc.IRQBalancing) (cpuset.Set, bool) {
	cpus, ok := ib.CPUs.Get()
	if !ok {
		if cpus, ok = g.CPUs.Get(); !ok {
			return cpuset.Set{}, false
		}
	}
	if first, ok := cpus.Min(); ok && ib.Housekeeping {
		cpus = cpus.Difference(a.h.SiblingsOf(cpuset.New(first)))
	}
	return cpus, true
}

// configNotRead reports whether a container's CRI-O config was to be
// read and was not: not for a container another runtime runs, nor for
// a sandbox, which runs no workload.
func configNotRead(ib unknown.Value[proc.IRQBalancing]) bool {
	k := ib.Why().Kind
	return !ib.Known() && k != unknown.KindNotApplicable && k != unknown.KindNotRead
}

// checkPodIRQBalancingConfig: a warning not-checked of
// pod-irq-balancing per pod container whose CRI-O config is malformed,
// naming it and why.
func (a *auditor) checkPodIRQBalancingConfig() error {
	for _, m := range a.groups() {
		if p := m.Group.Pod; p != nil && configNotRead(p.IRQBalancing) {
			a.notCheckedFix(SeverityWarning, "", groupNotChecked(CheckPodIRQBalancing, m),
				fmt.Sprintf("%s: its CRI-O config is not read: %s; whether its pod asked to keep IRQs off its CPUs is unknown", groupWords(m.Group), p.IRQBalancing.Why().Detail),
				"crictl inspect the container: its info.runtimeSpec.annotations hold what CRI-O acts on")
		}
	}
	return nil
}
