package audit

import (
	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Placement says where one IRQ may go and goes, relative to its device.
type Placement struct {
	// Where is where the interrupt is delivered, as irq.IRQ.Landing
	// says (the effective affinity, or the request while a move is
	// pending or nothing else is known); the request for an IRQ not yet
	// started.
	Where      cpuset.Set
	HasWhere   bool
	LocalCPUs  cpuset.Set // the device's local CPUs
	LocalKnown bool
	Local      bool // Where lies within LocalCPUs (meaningful when both known)
}

// Place computes where q lands relative to its device: the NIC's locality
// for a NIC's IRQ, /proc/irq/N/node otherwise. On a one-node host every
// CPU is local.
func Place(h *topology.Host, q *irq.IRQ) Placement {
	var p Placement
	switch where, how := q.Landing(); how.Or("") {
	case irq.LandEffective, irq.LandPending, irq.LandRequested:
		p.Where, p.HasWhere = where, true
	case irq.LandInactive:
		p.Where, p.HasWhere = q.Affinity.Get()
	}
	if q.Owner != nil {
		if nic, ok := h.NICByName(q.Owner.NIC); ok {
			if loc := h.Locality(nic); loc.Known() {
				p.LocalCPUs, p.LocalKnown = loc.CPUs, true
			}
		}
	} else if len(h.Nodes) == 1 {
		p.LocalCPUs, p.LocalKnown = h.Nodes[0].CPUs, true
	} else if node, ok := q.Node.Get(); ok && unknown.Is(q.Managed, false) {
		// /proc/irq/N/node is the device's node only for an IRQ that is
		// not managed: a managed IRQ's is the node of the CPUs it serves
		// (the lab's nvme0q5 says 0 for a drive on node 1).
		if cpus, ok := h.NodeCPUs(node); ok {
			p.LocalCPUs, p.LocalKnown = cpus, true
		}
	}
	if p.LocalKnown && p.HasWhere {
		p.Local = p.Where.IsSubsetOf(p.LocalCPUs)
	}
	return p
}
