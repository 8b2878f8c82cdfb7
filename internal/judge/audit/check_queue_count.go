package audit

import (
	"fmt"

	"github.com/irqnuma/irqnuma/internal/units"
)

// Queues against CPUs: queues-vs-cpus.
const CheckQueuesVsCPUs Check = "queues-vs-cpus"

func init() {
	register(&check{ids: []Check{CheckQueuesVsCPUs}, nic: judges((*auditor).checkQueueCount)})
}

// checkQueueCount: queues-vs-cpus. More queues than local online CPUs,
// or fewer than half the local online cores. A queue's rx and tx vectors
// count as one queue.
func (a *auditor) checkQueueCount(c *nicCtx) {
	if len(c.queues) == 0 || !c.loc.Known() {
		return
	}
	// Isolated CPUs are no place for a queue: they do not count.
	local := a.online(c.loc.CPUs).Difference(a.h.IsolatedCPUs())
	cpusWord := "local online CPUs"
	if a.online(c.loc.CPUs).Intersects(a.h.IsolatedCPUs()) {
		cpusWord = "local online CPUs not isolated"
	}
	cores := len(a.h.Cores(local))
	n := queueCount(c.queues)
	what := units.Plural(n, "queue", "queues")
	if n != len(c.queues) {
		what += fmt.Sprintf(" (%d queue IRQs)", len(c.queues))
	}
	var msg, fix string
	switch {
	case local.IsEmpty():
		return
	case n > local.Len():
		msg = fmt.Sprintf("%s has %s for %d %s: some CPUs must take several queues, or queues go remote",
			c.nic.Name, what, local.Len(), cpusWord)
		fix = fmt.Sprintf("ethtool -L %s combined %d  # or rx N tx N, as the driver counts queues", c.ifname, local.Len())
	case 2*n < cores:
		msg = fmt.Sprintf("%s has %s for %d local online cores (%d CPUs): multi-stream tests may be limited by too few queues",
			c.nic.Name, what, cores, local.Len())
		fix = fmt.Sprintf("ethtool -l %s; ethtool -L %s combined %d  # -l shows the maximum", c.ifname, c.ifname, cores)
	default:
		return
	}
	a.add(Finding{Check: CheckQueuesVsCPUs, Severity: SeverityInfo, NIC: c.nic.Name,
		Subject: units.Plural(n, "queue", "queues"), CPUs: local, Nodes: nodeIDs(c.loc.Node.Or(-1)), Message: msg, Fix: c.fix(fix)})
}
