package audit

import (
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// CheckCgroupIRQ says a NIC's queue IRQs are delivered to CPUs a
// --cgroup holds exclusively (a v2 partition root or isolated partition,
// a v1 cpu_exclusive cpuset): the group was given those CPUs to itself,
// and the NIC's interrupts and softirqs run there anyway.
const CheckCgroupIRQ Check = "cgroup-exclusive-irq"

// Exclusive group CPUs taking NIC IRQs: cgroup-exclusive-irq, per NIC;
// and, for the host, the pods' containers for which it is unknown
// whether the kubelet gave them their CPUs.
func init() {
	register(&check{ids: []Check{CheckCgroupIRQ}, nic: judges((*auditor).checkCgroupIRQ), host: (*auditor).checkCgroupIRQKubelet})
}

// checkCgroupIRQ: cgroup-exclusive-irq, per selected group whose CPUs
// are its own (known CPUs, exclusive) and the NIC's queue IRQs landing
// on them.
func (a *auditor) checkCgroupIRQ(c *nicCtx) {
	for _, m := range a.groups() {
		g := m.Group
		if !g.Exclusive || !g.CPUs.Known() {
			continue
		}
		on := g.CPUs.Or(cpuset.Set{}).Intersection(c.irqCPUs)
		if on.IsEmpty() {
			continue
		}
		irqs := c.queueIRQsOn(c.where, on)
		nodes, _ := a.h.NodesOf(on)
		a.add(Finding{Check: CheckCgroupIRQ, Severity: SeverityWarning, NIC: c.nic.Name, Subject: groupSubject(m),
			IRQ: irqs, CPUs: on, Nodes: nodes.IDs(),
			Message: fmt.Sprintf("%s's %s %s %s to %s, which %s holds exclusively (%s): its processes share %s with the NIC's interrupts and softirqs%s",
				c.nic.Name, units.Choose(len(irqs), "queue IRQ", "queue IRQs"), irqsSubjectRange(irqs), units.Choose(len(irqs), "is delivered", "are delivered"),
				cpusWord(on), groupWords(g), exclusiveWord(g), units.Choose(on.Len(), "it", "them"), a.irqbalanceOn(on)),
			Fix: c.fix(fmt.Sprintf("irqnuma irq pin %s --exclude %s", c.ifname, g.CPUs.Or(cpuset.Set{}).List()) + a.keepOff(g, g.CPUs.Or(cpuset.Set{})))})
	}
}

// checkCgroupIRQKubelet: a warning not-checked of cgroup-exclusive-irq
// per pod's container whose exclusive CPUs the kubelet's word leaves
// unknown (proc.Cgroup.KubeletCPUs: a malformed answer or checkpoint
// entry, CPUs the host does not have), naming it and why: that word is
// not taken, so the container's CPUs are its own only if its group's
// files say so.
func (a *auditor) checkCgroupIRQKubelet() error {
	for _, m := range a.groups() {
		g := m.Group
		kubelet := g.KubeletCPUs()
		if kubelet.Known() {
			continue
		}
		judged := "so whether they are its alone is unknown, and no NIC IRQ on them is judged"
		if g.Exclusive {
			judged = fmt.Sprintf("its CPUs are its alone by %s, and judged so", exclusiveWord(g))
		}
		a.notCheckedFix(SeverityWarning, "", groupNotChecked(CheckCgroupIRQ, m),
			fmt.Sprintf("%s: the kubelet's word on its CPUs is not taken: %s; %s", groupWords(g), kubelet.Why().Detail, judged),
			"compare what the kubelet says on the node (its pod resources API's List, /var/lib/kubelet/cpu_manager_state) with the container's cpuset (crictl inspect): a kubelet gives a container only CPUs its node has, so the answer is corrupt or, in a snapshot, from another node")
	}
	return nil
}

// exclusiveWord says what makes a group's CPUs its own.
func exclusiveWord(g *proc.Cgroup) string {
	if g.ExclusiveBy != "" {
		return g.ExclusiveBy
	}
	if g.Version == proc.CgroupVersionV1 {
		return "cpuset.cpu_exclusive 1"
	}
	return "cpuset.cpus.partition " + g.Partition.String()
}

// irqbalanceOn says what a running irqbalance will do about IRQs on
// cpus: leave a pin that keeps them off alone when it bans every one of
// them, else it may put IRQs back.
func (a *auditor) irqbalanceOn(cpus cpuset.Set) string {
	ib := a.opts.Irqbalance
	if ib == nil || !unknown.Is(ib.Running, true) || len(ib.PIDs) == 0 {
		return ""
	}
	if cpus.IsSubsetOf(ib.BannedCPUs) {
		return fmt.Sprintf("; irqbalance bans them (%s), so a pin that keeps IRQs off them stays", ib.BannedCPUsFrom)
	}
	return fmt.Sprintf("; irqbalance (PID %d) does not ban %s and may put IRQs back: add the group's CPUs to IRQBALANCE_BANNED_CPULIST", ib.PIDs[0], units.Choose(cpus.Len(), "it", "them"))
}
