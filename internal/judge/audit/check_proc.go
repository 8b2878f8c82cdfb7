package audit

import (
	"fmt"
	"slices"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/units"
)

// A watched process against a NIC it uses: proc-remote, proc-irq-overlap and proc-mem-remote.
const (
	CheckProcRemote     Check = "proc-remote"
	CheckProcIRQOverlap Check = "proc-irq-overlap"
	CheckProcMemRemote  Check = "proc-mem-remote"
)

func init() {
	register(&check{ids: []Check{CheckProcRemote, CheckProcIRQOverlap, CheckProcMemRemote}, needs: []fact{factNumaMaps}, proc: (*auditor).checkProcess})
}

// procSubject is "iperf3 (PID 4242)".
func procSubject(p *proc.Process) string {
	return fmt.Sprintf("%s (PID %d)", p.Comm, p.PID)
}

// checkProcess runs proc-remote, proc-irq-overlap and proc-mem-remote for
// one watched process against one NIC.
func (a *auditor) checkProcess(c *nicCtx, p *proc.Process) error {
	// Where the process and each of its threads may run.
	allowed := a.online(p.Allowed)
	for _, th := range p.Threads {
		if !th.Allowed.Equal(p.Allowed) {
			allowed = allowed.Union(a.online(th.Allowed))
		}
	}
	var err error
	if c.loc.Known() {
		a.procRemote(c, p)
		err = a.procMemRemote(c, p)
	} else if len(a.h.Nodes) > 1 {
		err = skip(c.nic.Name, string(CheckProcRemote), fmt.Sprintf("%s's locality is unknown: processes are not called local or remote", c.nic.Name))
	}
	a.procIRQOverlap(c, p, allowed)
	return err
}

// procRemote: a process or thread allowed on CPUs off the NIC's node
// (warning), or last seen running there (error).
func (a *auditor) procRemote(c *nicCtx, p *proc.Process) {
	local := c.loc.CPUs
	var lastTIDs, last []int
	for _, th := range p.Threads {
		cpu, ok := th.LastCPU.Get()
		if !ok || local.Contains(cpu) || !a.h.NodeOf(cpu).Known() {
			continue
		}
		lastTIDs = append(lastTIDs, th.TID)
		last = append(last, cpu)
	}
	lastCPUs := cpuset.New(last...)
	fix := func() string {
		return c.fix(fmt.Sprintf(`cpus=$(irqnuma mask --nic %s --exclude-irq-cpus) && taskset -a -pc "$cpus" %d  # or start it with: irqnuma exec --nic %s --exclude-irq-cpus -- %s ...`,
			c.ifname, p.PID, c.ifname, p.Comm))
	}
	if len(lastTIDs) > 0 {
		nodes, _ := a.h.NodesOf(lastCPUs)
		a.add(Finding{Check: CheckProcRemote, Severity: SeverityError, NIC: c.nic.Name, Subject: procSubject(p),
			PID: p.PID, TID: lastTIDs, CPUs: lastCPUs, Nodes: nodes.IDs(),
			Message: fmt.Sprintf("%s of %s last ran on %s, off %s's %s", threadsWord(lastTIDs, len(p.Threads)), procSubject(p),
				a.describeRemote(lastCPUs, local), c.nic.Name, NodeName(c.loc)),
			Fix: fix()})
	}

	var tids []int
	var remote cpuset.Set
	for _, th := range p.Threads {
		if th.Allowed.IsSubsetOf(local) {
			continue
		}
		if r := a.online(th.Allowed).Difference(local); !r.IsEmpty() {
			tids = append(tids, th.TID)
			if !r.IsSubsetOf(remote) {
				remote = remote.Union(r)
			}
		}
	}
	if r := a.online(p.Allowed).Difference(local); !r.IsEmpty() && len(p.Threads) == 0 {
		remote = r
	}
	if remote.IsEmpty() {
		return
	}
	nodes, _ := a.h.NodesOf(remote)
	who := procSubject(p)
	if len(p.Threads) > 0 && len(tids) < len(p.Threads) {
		who = fmt.Sprintf("%s of %s", threadsWord(tids, len(p.Threads)), procSubject(p))
	} else if len(p.Threads) == 2 {
		who = procSubject(p) + " and its other thread"
	} else if len(p.Threads) > 2 {
		who = fmt.Sprintf("%s and its %d other threads", procSubject(p), len(p.Threads)-1)
	}
	a.add(Finding{Check: CheckProcRemote, Severity: SeverityWarning, NIC: c.nic.Name, Subject: procSubject(p),
		PID: p.PID, TID: tids, CPUs: remote, Nodes: nodes.IDs(),
		Message: fmt.Sprintf("%s may run on %s, off %s's %s", who, a.describeRemote(remote, local), c.nic.Name, NodeName(c.loc)),
		Fix:     fix()})
}

// threadsWord is "thread 4243" or "threads 4243, 4244" (or "all 4
// threads" when every thread is named).
func threadsWord(tids []int, total int) string {
	if len(tids) == total && total == 2 {
		return "both threads"
	}
	if len(tids) == total && total > 2 {
		return fmt.Sprintf("all %d threads", total)
	}
	if len(tids) == 1 {
		return fmt.Sprintf("thread %d", tids[0])
	}
	return "threads " + intsList(tids, false)
}

// procIRQOverlap: the process may run on a core that services the NIC's
// queue IRQs (their CPUs and SMT siblings).
func (a *auditor) procIRQOverlap(c *nicCtx, p *proc.Process, allowed cpuset.Set) {
	overlap := allowed.Intersection(c.irqCores)
	if overlap.IsEmpty() {
		return
	}
	irqs := c.queueIRQsOn(c.whereCores, overlap)
	nodes, _ := a.h.NodesOf(overlap)
	a.add(Finding{Check: CheckProcIRQOverlap, Severity: SeverityWarning, NIC: c.nic.Name, Subject: procSubject(p),
		PID: p.PID, IRQ: irqs, CPUs: overlap, Nodes: nodes.IDs(),
		Message: fmt.Sprintf("%s may run on %s, which %s %s's queue IRQs %s: its threads compete with the NIC's interrupts and softirqs",
			procSubject(p), cpusWord(overlap), units.Choose(overlap.Len(), "shares a core with", "share cores with"), c.nic.Name, irqsSubjectRange(irqs)),
		Fix: c.fix(fmt.Sprintf(`cpus=$(irqnuma mask --nic %s --exclude-irq-cpus) && taskset -a -pc "$cpus" %d`, c.ifname, p.PID))})
}

// irqsSubjectRange is "284-299" as a compact list.
func irqsSubjectRange(ns []int) string { return cpuset.New(ns...).List() }

// procMemRemote: most of a process's pages on nodes other than the NIC's.
func (a *auditor) procMemRemote(c *nicCtx, p *proc.Process) error {
	if p.NodeKB == nil {
		return &notChecked{sev: SeverityInfo, nic: c.nic.Name, subject: fmt.Sprintf("%s for PID %d", CheckProcMemRemote, p.PID),
			why: fmt.Sprintf("no readable /proc/%d/numa_maps: where %s's memory sits is unknown", p.PID, procSubject(p)),
			fix: fmt.Sprintf("run the audit as root (another user's numa_maps needs ptrace rights), or capture it with irqnuma snapshot --pid %d", p.PID)}
	}
	localNodes := c.localNodes
	var total, remote uint64
	var remoteNodes []int
	for n, kb := range p.NodeKB {
		total += kb
		if !localNodes.Contains(n) && kb > 0 {
			remote += kb
			remoteNodes = append(remoteNodes, n)
		}
	}
	if total == 0 || 2*remote <= total {
		return nil
	}
	slices.Sort(remoteNodes)
	from := intsList(remoteNodes, false)
	to := intsList(localNodes.IDs(), false)
	a.add(Finding{Check: CheckProcMemRemote, Severity: SeverityWarning, NIC: c.nic.Name, Subject: procSubject(p),
		PID: p.PID, Nodes: remoteNodes,
		Message: fmt.Sprintf("%s of %s's %s of memory (%d%%) is on node %s, off %s's %s (numa_maps)",
			memKB(remote), procSubject(p), memKB(total), int(100*remote/total), from, c.nic.Name, NodeName(c.loc)),
		Fix: c.fix(fmt.Sprintf("migratepages %d %s %s  # from numactl; or start it with: irqnuma exec --nic %s --membind -- %s ...", p.PID, from, to, c.ifname, p.Comm))})
	return nil
}

// memKB prints an amount of memory given in kB: exact below 10 MiB,
// in binary units above.
func memKB(kb uint64) string {
	if kb < 10*1024 {
		return fmt.Sprintf("%d kB", kb)
	}
	return units.Bytes(int64(kb) * 1024)
}
