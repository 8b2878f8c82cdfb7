package audit

import (
	"fmt"
	"maps"
	"slices"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
)

// CheckCgroupMemRemote says most of a selected group's memory sits on a
// node remote from its CPUs, or from the NIC its processes use: every
// buffer its threads touch crosses the interconnect.
const CheckCgroupMemRemote Check = "cgroup-mem-remote"

// A group's memory off its CPUs' node or its NIC's: cgroup-mem-remote.
func init() {
	register(&check{ids: []Check{CheckCgroupMemRemote}, nic: (*auditor).checkCgroupMemNIC, host: (*auditor).checkCgroupMemCPUs})
}

// memRef is what a group's memory is judged against: the nodes that are
// local, and how a sentence names them.
type memRef struct {
	nic   string     // "" for the group's own CPUs
	nodes cpuset.Set // the local nodes
	words string     // "its CPUs' node 1", "eth0's node 1"
	fix   func(string) string
}

// checkCgroupMemCPUs: cgroup-mem-remote against each group's own CPUs.
func (a *auditor) checkCgroupMemCPUs() error {
	for _, m := range a.groups() {
		g := m.Group
		if !g.CPUs.Known() {
			continue // cgroup-nic-remote says its CPUs are unknown
		}
		nodes, _ := a.h.NodesOf(a.online(g.CPUs.Or(cpuset.Set{})))
		if nodes.IsEmpty() {
			continue
		}
		a.cgroupMem(m, memRef{nodes: nodes, words: "its CPUs' " + nodesWord(nodes), fix: func(s string) string { return s }})
	}
	return nil
}

// checkCgroupMemNIC: cgroup-mem-remote against the NIC a group is
// judged against, when its node is not its CPUs' (those are judged
// once, for the host).
func (a *auditor) checkCgroupMemNIC(c *nicCtx) error {
	if !c.loc.Known() || c.localNodes.IsEmpty() {
		return nil // cgroup-nic-remote and nic-node-unknown say so
	}
	for _, m := range a.groups() {
		g := m.Group
		if a.judgedAgainst(m, c.nic.Name) == "" {
			continue
		}
		if g.CPUs.Known() {
			if nodes, _ := a.h.NodesOf(a.online(g.CPUs.Or(cpuset.Set{}))); nodes.Equal(c.localNodes) {
				continue
			}
		}
		a.cgroupMem(m, memRef{nic: c.nic.Name, nodes: c.localNodes, words: c.nic.Name + "'s " + NodeName(c.loc), fix: c.fix})
	}
	return nil
}

// cgroupMem judges a group's memory against ref: more than half of its
// memory.numa_stat footprint off ref's nodes; without the file, a
// cpuset.mems.effective wholly off them.
func (a *auditor) cgroupMem(m proc.Match, ref memRef) {
	g := m.Group
	st, ok := g.NumaStat.Get()
	if !ok {
		a.cgroupMemsOnly(m, ref)
		return
	}
	fp := st.Footprint()
	var total, remote uint64
	var remoteNodes []int
	for _, n := range slices.Sorted(maps.Keys(fp)) {
		total += fp[n]
		if !ref.nodes.Contains(n) && fp[n] > 0 {
			remote += fp[n]
			remoteNodes = append(remoteNodes, n)
		}
	}
	if total == 0 || 2*remote <= total {
		return
	}
	from := cpuset.New(remoteNodes...)
	allow := ""
	if g.Mems.Known() && !g.Mems.Or(cpuset.Set{}).IsSubsetOf(ref.nodes) {
		allow = fmt.Sprintf("; cpuset.mems.effective %s lets it allocate there", g.Mems.Or(cpuset.Set{}).List())
	}
	a.add(Finding{Check: CheckCgroupMemRemote, Severity: SeverityWarning, NIC: ref.nic, Subject: groupSubject(m),
		Nodes: remoteNodes, CPUs: g.CPUs.Or(cpuset.Set{}),
		Message: fmt.Sprintf("%s of %s's %s of memory (%d%%) is on %s, off %s (memory.numa_stat: anon and file)%s",
			memKB(remote/1024), groupWords(g), memKB(total/1024), int(100*float64(remote)/float64(total)), nodesWord(from), ref.words, allow),
		Fix: ref.fix(memFix(g, ref.nodes))})
}

// cgroupMemsOnly judges a group whose memory.numa_stat is unknown by
// where it may allocate: a cpuset.mems.effective wholly off ref's nodes
// puts all its new memory there; otherwise it is not checked, saying why.
func (a *auditor) cgroupMemsOnly(m proc.Match, ref memRef) {
	g := m.Group
	if !g.Mems.Known() || g.Mems.Or(cpuset.Set{}).Intersects(ref.nodes) {
		a.notCheckedFix(SeverityInfo, ref.nic, groupNotChecked(CheckCgroupMemRemote, m),
			"where its memory sits is unknown: "+g.NumaStat.Why().Detail,
			"enable the memory controller for the group (cgroup v2, a NUMA kernel), or capture the group with irqnuma snapshot --cgroup "+g.Path)
		return
	}
	a.add(Finding{Check: CheckCgroupMemRemote, Severity: SeverityWarning, NIC: ref.nic, Subject: groupSubject(m),
		Nodes: g.Mems.Or(cpuset.Set{}).IDs(), CPUs: g.CPUs.Or(cpuset.Set{}),
		Message: fmt.Sprintf("%s may allocate memory only on %s (cpuset.mems.effective), off %s (how much it holds there is unknown: %s)",
			groupWords(g), nodesWord(g.Mems.Or(cpuset.Set{})), ref.words, g.NumaStat.Why().Detail),
		Fix: ref.fix(memFix(g, ref.nodes))})
}

// memFix moves a group's memory to nodes: a pod's through the kubelet,
// a v2 group by its cpuset.mems (writing it migrates the group's pages),
// a v1 group with memory_migrate set first.
func memFix(g *proc.Cgroup, nodes cpuset.Set) string {
	if g.Pod != nil {
		return fmt.Sprintf("the kubelet placed it: --memory-manager-policy=Static with --topology-manager-policy=single-numa-node keeps a Guaranteed pod's memory on the node of its CPUs and devices (node %s here); recreate the pod after setting them", nodes.List())
	}
	if g.Version == proc.CgroupVersionV1 {
		dir := "/sys/fs/cgroup/cpuset" + g.Path
		return fmt.Sprintf("echo 1 > %s/cpuset.memory_migrate && echo %s > %s/cpuset.mems  # moves the group's pages to node %s", dir, nodes.List(), dir, nodes.List())
	}
	dir := "/sys/fs/cgroup" + g.Path
	return fmt.Sprintf("echo %s > %s/cpuset.mems  # cgroup v2 migrates the group's pages to node %s", nodes.List(), dir, nodes.List())
}
