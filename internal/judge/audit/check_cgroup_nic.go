package audit

import (
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/units"
)

// CheckCgroupNICRemote says a selected group's CPUs are on another node
// than the NIC (or the VF) its processes use: every packet crosses the
// interconnect between the NIC's softirq and the group's threads. The
// topology manager only refuses such a pod; this says which nodes.
const CheckCgroupNICRemote Check = "cgroup-nic-remote"

// A group's CPUs off the node of the NIC it uses: cgroup-nic-remote.
func init() {
	register(&check{ids: []Check{CheckCgroupNICRemote}, nic: (*auditor).checkCgroupNIC})
}

// checkCgroupNIC: cgroup-nic-remote, per selected group judged against
// the NIC (judgedAgainst) whose known CPUs are not all on its node: an
// error when none is (the group cannot run local), a warning when some
// are.
func (a *auditor) checkCgroupNIC(c *nicCtx) error {
	for _, m := range a.groups() {
		g := m.Group
		how := a.judgedAgainst(m, c.nic.Name)
		if how == "" {
			continue
		}
		if !c.loc.Known() {
			return skip(c.nic.Name, string(CheckCgroupNICRemote), fmt.Sprintf("%s's locality is unknown: no group is called local or remote to it", c.nic.Name))
		}
		if !g.CPUs.Known() {
			a.notCheckedFix(SeverityInfo, c.nic.Name, groupNotChecked(CheckCgroupNICRemote, m), g.CPUs.Why().Detail,
				"enable the cpuset controller for the group (cgroup.subtree_control of its parent), or name its CPUs with --pid")
			continue
		}
		cpus := a.online(g.CPUs.Or(cpuset.Set{}))
		remote := cpus.Difference(c.loc.CPUs)
		if remote.IsEmpty() {
			continue
		}
		a.cgroupNICRemote(c, m, remote, cpus.Intersection(c.loc.CPUs), how)
	}
	return nil
}

// cgroupNICRemote adds the finding of a group whose CPUs remote are off
// the NIC's node (local those on it).
func (a *auditor) cgroupNICRemote(c *nicCtx, m proc.Match, remote, local cpuset.Set, how string) {
	g := m.Group
	nodes, _ := a.h.NodesOf(remote)
	sev, which := SeverityError, "all its CPUs"
	if !local.IsEmpty() {
		sev, which = SeverityWarning, fmt.Sprintf("%d of its %d CPUs (%s %s local)", remote.Len(), remote.Len()+local.Len(), local.List(), units.Choose(local.Len(), "is", "are"))
	}
	a.add(Finding{Check: CheckCgroupNICRemote, Severity: sev, NIC: c.nic.Name, Subject: groupSubject(m),
		CPUs: remote, Nodes: nodes.IDs(),
		Message: fmt.Sprintf("%s may run on %s: %s, on %s, off %s's %s, which it uses (%s): its packets cross nodes between the NIC's softirq and its threads",
			groupWords(g), cpusWord(remote), which, nodesWord(nodes), c.nic.Name, NodeName(c.loc), how),
		Fix: c.fix(a.cgroupNICFix(c, g, local))})
}

// cgroupNICFix says how to run a group on its NIC's node: for a pod the
// kubelet decides, so its topology manager policy; for a group with
// local CPUs, exec inside them; else give the group the NIC's node.
func (a *auditor) cgroupNICFix(c *nicCtx, g *proc.Cgroup, local cpuset.Set) string {
	if g.Pod != nil {
		return fmt.Sprintf("the kubelet placed it: with --cpu-manager-policy=static and --topology-manager-policy=single-numa-node (or restricted), and %s (or its VF) requested as a device-plugin resource of the pod, a Guaranteed pod is admitted only with CPUs on the device's %s; recreate the pod after setting them",
			c.ifname, nodeOnly(c.loc))
	}
	if !local.IsEmpty() {
		return fmt.Sprintf("irqnuma exec --nic %s --cgroup %s -- COMMAND  # runs inside the group's CPUs on %s's node", c.ifname, g.Path, c.ifname)
	}
	dir := "/sys/fs/cgroup" + g.Path
	mems := c.localNodes.List()
	if g.Version == proc.CgroupVersionV1 {
		return fmt.Sprintf(`cpus=$(irqnuma mask --nic %s) && echo "$cpus" > /sys/fs/cgroup/cpuset%s/cpuset.cpus && echo %s > /sys/fs/cgroup/cpuset%s/cpuset.mems`, c.ifname, g.Path, mems, g.Path)
	}
	return fmt.Sprintf(`cpus=$(irqnuma mask --nic %s) && echo "$cpus" > %s/cpuset.cpus && echo %s > %s/cpuset.mems`, c.ifname, dir, mems, dir)
}
