package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/units"
)

// Threaded NAPI's kernel threads: napi-thread-remote (they run off the
// NIC's node), napi-thread-unpinned (they may run on CPUs off it) and
// napi-thread-shared (they share a watched process's cores). With NAPI
// threaded the receive work runs in the napi/IF-N threads, wherever
// their affinity lets the scheduler put them, not on the IRQ's CPU.
const (
	CheckNAPIThreadRemote   Check = "napi-thread-remote"
	CheckNAPIThreadUnpinned Check = "napi-thread-unpinned"
	CheckNAPIThreadShared   Check = "napi-thread-shared"
)

func init() {
	register(&check{ids: []Check{CheckNAPIThreadRemote, CheckNAPIThreadUnpinned, CheckNAPIThreadShared}, needs: []fact{factSteer},
		nic: (*auditor).checkNAPIThreads, proc: (*auditor).checkNAPIThreadShared})
}

// napiThread is one NAPI kthread of a NIC, read from /proc; napi is nil
// for a kthread found by name, whose NAPI instance netdev does not give
// (its queue is unknown).
type napiThread struct {
	napi *steer.NAPI
	p    *proc.Process
}

// napiThreads returns the NIC's NAPI kthreads as /proc read them (those
// netdev napi-get names, then those found by name that it does not),
// and the error to return when NAPI is threaded but they cannot be
// judged; none and nil when NAPI is not threaded.
func (a *auditor) napiThreads(c *nicCtx) ([]napiThread, error) {
	n := c.steer.n
	if n == nil {
		return nil, a.steerSkip(c)
	}
	threaded, known := napiThreaded(n)
	switch {
	case !known:
		return nil, a.steerSkip(c)
	case !threaded:
		return nil, nil
	}
	var out []napiThread
	var missing []int
	for i := range n.NAPIs {
		napi := &n.NAPIs[i]
		if napi.PID <= 0 {
			continue
		}
		if p := a.opts.NAPIThreads[napi.PID]; p != nil {
			out = append(out, napiThread{napi: napi, p: p})
		} else {
			missing = append(missing, napi.PID)
		}
	}
	out = append(out, a.napiThreadsByName(c.nic.Name, n)...)
	switch {
	case len(out) == 0 && len(missing) == 0:
		why := fmt.Sprintf("NAPI of %s is threaded, but netdev napi-get named no kthread", c.nic.Name)
		if r, ok := n.Why(steer.PartNAPI); ok {
			why = fmt.Sprintf("NAPI of %s is threaded, but its kthreads are unknown: napi-get %s", c.nic.Name, r)
		}
		return nil, skip(c.nic.Name, string(CheckNAPIThreadRemote), why)
	case len(missing) > 0:
		// Judge those read; say which could not be.
		return out, skip(c.nic.Name, string(CheckNAPIThreadRemote), fmt.Sprintf("NAPI of %s is threaded, but /proc holds no readable status of %s %s",
			c.nic.Name, units.Choose(len(missing), "its kthread", "its kthreads"), intsList(missing, false)))
	}
	return out, nil
}

// napiThreadsByName returns the NIC's kthreads found by name in /proc
// (ReadSteer) that netdev does not name, by PID.
func (a *auditor) napiThreadsByName(name string, n *steer.NIC) []napiThread {
	var out []napiThread
	for pid, p := range a.opts.NAPIThreads {
		if !isNAPIThreadOf(p.Comm, name) || slices.ContainsFunc(n.NAPIs, func(napi steer.NAPI) bool { return napi.PID == pid }) {
			continue
		}
		out = append(out, napiThread{p: p})
	}
	slices.SortFunc(out, func(x, y napiThread) int { return x.p.PID - y.p.PID })
	return out
}

// napiThreaded says whether the NIC's NAPI is threaded (sysfs threaded,
// or a NAPI instance threaded or with a kthread), and whether that is
// known.
func napiThreaded(n *steer.NIC) (threaded, known bool) {
	if t := n.Sysfs.Threaded; t != nil {
		known, threaded = true, *t > 0
	}
	for _, napi := range n.NAPIs {
		if napi.Threaded != nil {
			known = true
			threaded = threaded || *napi.Threaded
		}
		if napi.PID > 0 {
			known, threaded = true, true
		}
	}
	return threaded, known
}

// checkNAPIThreads: napi-thread-remote and napi-thread-unpinned, one
// finding each for all of the NIC's kthreads it applies to.
func (a *auditor) checkNAPIThreads(c *nicCtx) error {
	ts, err := a.napiThreads(c)
	if len(ts) == 0 {
		return err
	}
	if !c.loc.Known() {
		if len(a.h.Nodes) > 1 {
			return skip(c.nic.Name, string(CheckNAPIThreadRemote), fmt.Sprintf("%s's locality is unknown: its NAPI kthreads are not called local or remote", c.nic.Name))
		}
		return nil
	}
	local := c.loc.CPUs
	var remote, unpinned []napiThread
	var remoteCPUs, unpinnedCPUs cpuset.Set
	for _, t := range ts {
		allowed := a.online(t.p.Allowed)
		last := lastCPU(t.p.Threads)
		switch {
		case !allowed.IsEmpty() && !allowed.Intersects(local):
			remote, remoteCPUs = append(remote, t), remoteCPUs.Union(allowed)
		case last >= 0 && !local.Contains(last) && a.h.NodeOf(last).Known() && (allowed.IsEmpty() || allowed.Contains(last)):
			// A last CPU the thread may no longer run on is stale: a
			// sleeping thread moved (irq pin, tune) keeps its last CPU
			// until it next wakes, on a CPU it is allowed.
			remote, remoteCPUs = append(remote, t), remoteCPUs.Union(cpuset.New(last))
		case !allowed.IsSubsetOf(local):
			unpinned, unpinnedCPUs = append(unpinned, t), unpinnedCPUs.Union(allowed.Difference(local))
		}
	}
	fix := c.fix(pinFix(c.ifname) + "  # pins each queue's NAPI kthread with its IRQ")
	if len(remote) > 0 {
		nodes, _ := a.h.NodesOf(remoteCPUs)
		a.add(Finding{Check: CheckNAPIThreadRemote, Severity: SeverityError, NIC: c.nic.Name, Subject: kthreadsSubject(remote),
			TID: kthreadPIDs(remote), CPUs: remoteCPUs, Nodes: nodes.IDs(),
			Message: fmt.Sprintf("%s of %s %s on %s, off the NIC's %s (by affinity or last CPU): the receive work runs there whatever the IRQs' placement",
				kthreadsWords(remote), c.nic.Name, units.Choose(len(remote), "runs", "run"), a.describeRemote(remoteCPUs, local), NodeName(c.loc)),
			Fix: fix})
	}
	if len(unpinned) > 0 {
		nodes, _ := a.h.NodesOf(unpinnedCPUs)
		a.add(Finding{Check: CheckNAPIThreadUnpinned, Severity: SeverityWarning, NIC: c.nic.Name, Subject: kthreadsSubject(unpinned),
			TID: kthreadPIDs(unpinned), CPUs: unpinnedCPUs, Nodes: nodes.IDs(),
			Message: fmt.Sprintf("%s of %s may run on %s, off the NIC's %s: the scheduler may move the receive work there, and irq pin of the IRQs alone does not stop it",
				kthreadsWords(unpinned), c.nic.Name, a.describeRemote(unpinnedCPUs, local), NodeName(c.loc)),
			Fix: fix})
	}
	return err
}

// checkNAPIThreadShared: napi-thread-shared. A watched process may run
// on the cores of the NIC's NAPI kthreads: those they are pinned to, or
// the one they last ran on when they may run anywhere.
func (a *auditor) checkNAPIThreadShared(c *nicCtx, p *proc.Process) error {
	ts, err := a.napiThreads(c)
	if len(ts) == 0 {
		return err
	}
	allowed := a.online(p.Allowed)
	for _, th := range p.Threads {
		allowed = allowed.Union(a.online(th.Allowed))
	}
	var hit []napiThread
	var overlap cpuset.Set
	for _, t := range ts {
		where := a.online(t.p.Allowed)
		if where.IsEmpty() || (!a.h.Online.IsEmpty() && where.Equal(a.h.Online)) {
			where = cpuset.Set{}
			if last := lastCPU(t.p.Threads); last >= 0 {
				where = cpuset.New(last)
			}
		}
		if o := allowed.Intersection(a.h.SiblingsOf(where)); !o.IsEmpty() {
			hit, overlap = append(hit, t), overlap.Union(o)
		}
	}
	if len(hit) == 0 {
		return err
	}
	nodes, _ := a.h.NodesOf(overlap)
	a.add(Finding{Check: CheckNAPIThreadShared, Severity: SeverityWarning, NIC: c.nic.Name, Subject: procSubject(p),
		PID: p.PID, TID: kthreadPIDs(hit), CPUs: overlap, Nodes: nodes.IDs(),
		Message: fmt.Sprintf("%s may run on %s, which %s %s of %s: the process competes with the NIC's receive work",
			procSubject(p), cpusWord(overlap), units.Choose(overlap.Len(), "shares a core with", "share cores with"), kthreadsWords(hit), c.nic.Name),
		Fix: c.fix(fmt.Sprintf(`cpus=$(irqnuma mask --nic %s --exclude-irq-cpus) && taskset -a -pc "$cpus" %d  # after irqnuma irq pin %s, which pins the kthreads with the IRQs`,
			c.ifname, p.PID, c.ifname))})
	return err
}

// lastCPU is the CPU a kthread last ran on (its one thread's), -1 when
// unknown.
func lastCPU(ths []proc.Thread) int {
	if len(ths) == 0 {
		return -1
	}
	return ths[0].LastCPU.Or(-1)
}

// kthreadPIDs are the kthreads' PIDs, ascending.
func kthreadPIDs(ts []napiThread) []int {
	out := make([]int, len(ts))
	for i, t := range ts {
		out[i] = t.p.PID
	}
	slices.Sort(out)
	return out
}

// kthreadsSubject is "NAPI kthread 812" or "NAPI kthreads 812-827".
func kthreadsSubject(ts []napiThread) string {
	pids := kthreadPIDs(ts)
	if len(pids) == 1 {
		return fmt.Sprintf("NAPI kthread %d", pids[0])
	}
	return "NAPI kthreads " + cpuset.New(pids...).List()
}

// kthreadsWords is "the NAPI kthread napi/eth0-8193 (PID 812)" or "4
// NAPI kthreads (PIDs 812-815)"; those whose queue is unknown (found by
// name) are named: "2 NAPI kthreads (PIDs 812-813; queue unknown:
// napi/eth0-8193 (PID 812), napi/eth0-0 (PID 813))".
func kthreadsWords(ts []napiThread) string {
	if len(ts) == 1 {
		return "the NAPI kthread " + threadName(ts[0].p.Comm, ts[0].p.PID)
	}
	var unknown []string
	for _, t := range ts {
		if t.napi == nil {
			unknown = append(unknown, threadName(t.p.Comm, t.p.PID))
		}
	}
	more := ""
	if len(unknown) > 0 {
		more = "; queue unknown: " + strings.Join(unknown, ", ")
	}
	return fmt.Sprintf("%d NAPI kthreads (PIDs %s%s)", len(ts), cpuset.New(kthreadPIDs(ts)...).List(), more)
}
