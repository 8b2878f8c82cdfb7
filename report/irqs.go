package report

import (
	"io"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/irq"
	"github.com/irqnuma/irqnuma/topology"
)

// IRQDoc is the JSON document of `irqnuma irq list`.
type IRQDoc struct {
	IRQs  []IRQJSON `json:"irqs"`
	Notes []string  `json:"notes"`
}

// IRQJSON is one IRQ. Unknown values are null: affinity and effective when
// the tree lacks the file, local when the device's locality is unknown.
type IRQJSON struct {
	IRQ            int               `json:"irq"`
	Name           string            `json:"name"`
	NIC            string            `json:"nic"`
	Queue          int               `json:"queue"` // -1 for a non-queue vector or no NIC
	Kind           string            `json:"kind"`  // "queue", "other", "" when no NIC
	Dir            string            `json:"dir,omitempty"`
	Chip           string            `json:"chip"`
	Affinity       *string           `json:"affinity"`
	Effective      *string           `json:"effective"`
	Node           int               `json:"node"` // /proc/irq/N/node; -1 unknown
	AffinityNodes  []int             `json:"affinity_nodes"`
	EffectiveNodes []int             `json:"effective_nodes"`
	Local          *bool             `json:"local"`
	Managed        *bool             `json:"managed"` // null: unknown (a kernel before 6.12 does not mark managed IRQs)
	Total          uint64            `json:"total"`
	PerCPU         map[string]uint64 `json:"per_cpu"`
}

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
	switch where, how := q.Landing(); how {
	case irq.LandEffective, irq.LandPending, irq.LandRequested:
		p.Where, p.HasWhere = where, true
	case irq.LandInactive:
		p.Where, p.HasWhere = q.Affinity, q.HasAffinity
	}
	if q.Owner != nil {
		if nic, ok := h.NICByName(q.Owner.NIC); ok {
			if loc := h.Locality(nic); loc.Known() {
				p.LocalCPUs, p.LocalKnown = loc.CPUs, true
			}
		}
	} else if len(h.Nodes) == 1 {
		p.LocalCPUs, p.LocalKnown = h.Nodes[0].CPUs, true
	} else if cpus, ok := h.NodeCPUs(q.Node); ok && q.Node >= 0 && q.ManagedKnown && !q.Managed {
		// /proc/irq/N/node is the device's node only for an IRQ that is
		// not managed: a managed IRQ's is the node of the CPUs it serves
		// (the lab's nvme0q5 says 0 for a drive on node 1).
		p.LocalCPUs, p.LocalKnown = cpus, true
	}
	if p.LocalKnown && p.HasWhere {
		p.Local = p.Where.IsSubsetOf(p.LocalCPUs)
	}
	return p
}

// IRQs builds the irq list document.
func IRQs(h *topology.Host, t *irq.Table) IRQDoc {
	doc := IRQDoc{IRQs: make([]IRQJSON, 0, len(t.IRQs)), Notes: append(append([]string{}, h.Notes...), t.Notes...)}
	for i := range t.IRQs {
		q := &t.IRQs[i]
		j := IRQJSON{IRQ: q.IRQ, Name: q.Name, Queue: -1, Chip: q.Chip, Node: q.Node,
			Total: q.Total(), PerCPU: map[string]uint64{},
			AffinityNodes: []int{}, EffectiveNodes: []int{}}
		if o := q.Owner; o != nil {
			j.NIC, j.Queue, j.Kind, j.Dir = o.NIC, o.Queue, o.Kind, o.Dir
		}
		if q.ManagedKnown {
			managed := q.Managed
			j.Managed = &managed
		}
		if q.HasAffinity {
			s := q.Affinity.List()
			j.Affinity = &s
			nodes, _ := h.NodesOf(q.Affinity)
			j.AffinityNodes = nodes.IDs()
		}
		if q.HasEffective {
			s := q.Effective.List()
			j.Effective = &s
			nodes, _ := h.NodesOf(q.Effective)
			j.EffectiveNodes = nodes.IDs()
		}
		if p := Place(h, q); p.LocalKnown && p.HasWhere {
			local := p.Local
			j.Local = &local
		}
		for cpu, c := range t.PerCPU(q) {
			j.PerCPU[strconv.Itoa(cpu)] = c
		}
		doc.IRQs = append(doc.IRQs, j)
	}
	return doc
}

// WriteIRQs writes the human form of the irq list.
func WriteIRQs(w io.Writer, doc IRQDoc) error {
	rows := make([][]string, 0, len(doc.IRQs))
	for _, q := range doc.IRQs {
		queue := "-"
		if q.Queue >= 0 {
			queue = strconv.Itoa(q.Queue)
			if q.Dir != "" {
				queue += q.Dir
			}
		} else if q.NIC != "" {
			queue = "other"
		}
		local := "unknown"
		if q.Local != nil {
			local = map[bool]string{true: "yes", false: "no"}[*q.Local]
		}
		node := "-"
		if q.Node >= 0 {
			node = strconv.Itoa(q.Node)
		}
		managed := "unknown"
		if q.Managed != nil {
			managed = map[bool]string{true: "yes", false: "no"}[*q.Managed]
		}
		rows = append(rows, []string{strconv.Itoa(q.IRQ), orDash(q.Name), orDash(q.NIC), queue,
			strOrUnknown(q.Affinity), strOrUnknown(q.Effective), node, orDash(joinInts(q.EffectiveOrAffinityNodes(), ",")),
			local, managed, strconv.FormatUint(q.Total, 10)})
	}
	if len(rows) == 0 {
		if _, err := io.WriteString(w, "no IRQs\n"); err != nil {
			return err
		}
		return writeNotes(w, doc.Notes)
	}
	header := []string{"IRQ", "NAME", "NIC", "QUEUE", "AFFINITY", "EFFECTIVE", "DEV-NODE", "CPU-NODES", "LOCAL", "MANAGED", "TOTAL"}
	if err := WriteTable(w, header, rows); err != nil {
		return err
	}
	return writeNotes(w, doc.Notes)
}

// EffectiveOrAffinityNodes returns the nodes of the effective CPUs when
// known, else those of the requested ones.
func (q IRQJSON) EffectiveOrAffinityNodes() []int {
	if q.Effective != nil && *q.Effective != "" {
		return q.EffectiveNodes
	}
	return q.AffinityNodes
}

func strOrUnknown(s *string) string {
	if s == nil {
		return "unknown"
	}
	if *s == "" {
		return "none"
	}
	return strings.TrimSpace(*s)
}
