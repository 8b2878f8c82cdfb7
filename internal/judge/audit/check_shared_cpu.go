package audit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Queue IRQs sharing a CPU: irq-shared-cpu.
const CheckIRQSharedCPU Check = "irq-shared-cpu"

func init() {
	register(&check{ids: []Check{CheckIRQSharedCPU}, nic: judges((*auditor).checkSharedCPU)})
}

// checkSharedCPU: irq-shared-cpu. Two or more queue IRQs delivered to
// the same single CPU while local CPUs without any of them remain.
func (a *auditor) checkSharedCPU(c *nicCtx) {
	byCPU := map[int][]*irq.IRQ{}
	for _, q := range c.queues {
		w, ok := c.where[q.IRQ]
		if !ok || w.Len() != 1 {
			continue
		}
		cpu, _ := w.Min()
		byCPU[cpu] = append(byCPU[cpu], q)
	}
	pool, where := a.h.Online, "online CPUs"
	if c.loc.Known() {
		pool, where = a.online(c.loc.CPUs), "local CPUs"
	}
	// Isolated CPUs (any kind, sysfs or command line) are no place for
	// queue IRQs: they neither count in an even spread nor are offered as
	// free.
	if iso := pool.Intersection(a.h.IsolatedCPUs()); !iso.IsEmpty() {
		pool, where = pool.Difference(iso), strings.Replace(where, " CPUs", " non-isolated CPUs", 1)
	}
	if app := pool.Intersection(a.opts.AppCPUs); !app.IsEmpty() {
		pool, where = pool.Difference(app), strings.Replace(where, " CPUs", " CPUs not kept for the application", 1)
	}
	free := pool.Difference(c.irqCPUs)
	if free.IsEmpty() {
		return
	}
	placed := 0
	for _, qs := range byCPU {
		placed += queueCount(qs)
	}
	if placed > pool.Len() {
		a.unevenShare(c, byCPU, pool, free, where, placed)
		return
	}
	for _, cpu := range slices.Sorted(maps.Keys(byCPU)) {
		qs := byCPU[cpu]
		if queueCount(qs) < 2 {
			continue // one queue's rx and tx vectors belong together
		}
		ns := irqNumbers(qs)
		var names []string
		for _, q := range qs {
			names = append(names, irqSubject(q))
		}
		verb := "both land"
		if len(qs) > 2 {
			verb = "all land"
		}
		a.add(Finding{Check: CheckIRQSharedCPU, Severity: SeverityWarning, NIC: c.nic.Name,
			Subject: fmt.Sprintf("%s on CPU %d", irqsSubjectList(ns), cpu), IRQ: ns,
			CPUs: cpuset.New(cpu), Nodes: nodeIDs(a.h.NodeOf(cpu).Or(-1)),
			Message: fmt.Sprintf("%s %s on CPU %d while %s none of %s's queue IRQs (%s)",
				joinAnd(names), verb, cpu, servesNone(free.Len(), where), c.nic.Name, free.List()),
			Fix: c.fix(sharedFix(c.ifname, qs))})
	}
}

// unevenShare reports, when a NIC has more queue IRQs than CPUs to put
// them on (so some sharing cannot be avoided), the CPUs that take more
// than an even spread would give them while others take none: one
// finding for the NIC.
func (a *auditor) unevenShare(c *nicCtx, byCPU map[int][]*irq.IRQ, pool, free cpuset.Set, where string, placed int) {
	even := (placed + pool.Len() - 1) / pool.Len()
	var over []int
	var qs []*irq.IRQ
	var parts []string
	cpus := slices.Sorted(maps.Keys(byCPU))
	slices.SortStableFunc(cpus, func(x, y int) int { return queueCount(byCPU[y]) - queueCount(byCPU[x]) })
	for _, cpu := range cpus {
		n := queueCount(byCPU[cpu])
		if n <= even {
			continue
		}
		over = append(over, cpu)
		qs = append(qs, byCPU[cpu]...)
		if len(parts) < 4 {
			parts = append(parts, fmt.Sprintf("CPU %d takes %d", cpu, n))
		}
	}
	if len(over) == 0 {
		return
	}
	if more := len(over) - len(parts); more == 1 {
		parts = append(parts, fmt.Sprintf("1 more CPU takes more than %d", even))
	} else if more > 1 {
		parts = append(parts, fmt.Sprintf("%d more CPUs take more than %d", more, even))
	}
	set := cpuset.New(over...)
	nodes, _ := a.h.NodesOf(set)
	a.add(Finding{Check: CheckIRQSharedCPU, Severity: SeverityWarning, NIC: c.nic.Name,
		Subject: fmt.Sprintf("%d queues on %d %s", placed, pool.Len(), where), IRQ: irqNumbers(qs), CPUs: set, Nodes: nodes.IDs(),
		Message: fmt.Sprintf("%s has %d queues for %d %s, so an even spread puts at most %d on each; instead %s, while %s none (%s)",
			c.nic.Name, placed, pool.Len(), where, even, strings.Join(parts, ", "), servesNone(free.Len(), where), free.List()),
		Fix: c.fix(sharedFix(c.ifname, qs))})
}

// sharedFix is the fix for IRQs sharing a CPU.
func sharedFix(nic string, qs []*irq.IRQ) string {
	fix := pinFix(nic)
	for _, q := range qs {
		if unknown.Is(q.Managed, true) {
			fix = fixForIRQ(nic, q, fix)
		}
	}
	return fix
}

// queueCount is the number of distinct queues among a NIC's queue IRQs:
// the rx and tx vectors of one queue (virtio input.0/output.0,
// eth0-rx-0/eth0-tx-0) count once.
func queueCount(qs []*irq.IRQ) int {
	seen := map[int]bool{}
	for _, q := range qs {
		seen[q.Owner.Queue.Or(-1)] = true
	}
	return len(seen)
}

// servesNone is "1 local CPU serves" or "17 local CPUs serve".
func servesNone(n int, where string) string {
	if n == 1 {
		return "1 " + strings.TrimSuffix(where, "s") + " serves"
	}
	return fmt.Sprintf("%d %s serve", n, where)
}

func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
