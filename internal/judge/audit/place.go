package audit

import (
	"fmt"

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
	Where unknown.Value[cpuset.Set]
	// LocalCPUs are the device's local CPUs.
	LocalCPUs unknown.Value[cpuset.Set]
	// Local says whether Where lies within LocalCPUs; unknown when
	// either is.
	Local unknown.Value[bool]
}

// Place computes where q lands relative to its device: the NIC's locality
// for a NIC's IRQ, /proc/irq/N/node otherwise. On a one-node host every
// CPU is local.
func Place(h *topology.Host, q *irq.IRQ) Placement {
	p := Placement{
		Where:     unknown.NotAs[cpuset.Set](unknown.KindNotReported, fmt.Sprintf("IRQ %d's affinity is not known", q.IRQ)),
		LocalCPUs: unknown.NotAs[cpuset.Set](unknown.KindNotReported, fmt.Sprintf("IRQ %d's device's local CPUs are not known", q.IRQ)),
	}
	switch where, how := q.Landing(); how.Or("") {
	case irq.LandEffective, irq.LandPending, irq.LandRequested:
		p.Where = unknown.Of(where)
	case irq.LandInactive:
		if aff, ok := q.Affinity.Get(); ok {
			p.Where = unknown.Of(aff)
		}
	}
	if q.Owner != nil {
		if nic, ok := h.NICByName(q.Owner.NIC); ok {
			if loc := h.Locality(nic); loc.Known() {
				p.LocalCPUs = unknown.Of(loc.CPUs)
			}
		}
	} else if len(h.Nodes) == 1 {
		p.LocalCPUs = unknown.Of(h.Nodes[0].CPUs)
	} else if node, ok := q.Node.Get(); ok && unknown.Is(q.Managed, false) {
		// /proc/irq/N/node is the device's node only for an IRQ that is
		// not managed: a managed IRQ's is the node of the CPUs it serves
		// (the lab's nvme0q5 says 0 for a drive on node 1).
		if cpus, ok := h.NodeCPUs(node); ok {
			p.LocalCPUs = unknown.Of(cpus)
		}
	}
	where, whereKnown := p.Where.Get()
	local, localKnown := p.LocalCPUs.Get()
	switch {
	case !whereKnown:
		p.Local = unknown.Not[bool](p.Where.Why())
	case !localKnown:
		p.Local = unknown.Not[bool](p.LocalCPUs.Why())
	default:
		p.Local = unknown.Of(where.IsSubsetOf(local))
	}
	return p
}
