package bench

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Plan is the matrix bench runs, decided before anything changes.
type Plan struct {
	NIC       string `json:"nic"`
	Driver    string `json:"driver"`
	Device    string `json:"device"`   // PCI address, or the virtio device
	NICNode   int    `json:"nic_node"` // the NIC's node
	Locality  string `json:"locality"` // how NICNode is known (topology.Locality)
	QueueIRQs []int  `json:"queue_irqs"`
	// RemoteNode is the node the remote cells use; not applicable when
	// the host has none, and its reason says why. RemoteBy says how the
	// one it is was chosen ("--remote-node", "the only other node", ...).
	RemoteNode unknown.Value[int] `json:"remote_node"`
	RemoteBy   string             `json:"remote_by,omitempty"`
	Nodes      []Split            `json:"nodes"` // the NIC's node, then the remote one
	// Cells are the placements asked for, in order; those the host does
	// not allow have Applicable false and a Reason.
	Cells []PlannedCell `json:"cells"`
	// Flow is the flow of the flow placements; nil when none is asked.
	Flow    *FlowPlan `json:"flow,omitempty"`
	Command []string  `json:"command"`
	Parser  Parser    `json:"parser"`
	Repeat  int       `json:"repeat"`
}

// MarshalJSON writes each unknown field's reason beside it.
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	return unknown.MarshalObject(plain(p))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (p *Plan) UnmarshalJSON(b []byte) error {
	type plain Plan
	return unknown.UnmarshalObject(b, (*plain)(p))
}

// Split is how bench divides one node's usable CPUs (online, not
// isolated): the first half of its cores (with their SMT siblings) take
// the queue IRQs, the other cores the command, so that "apart" means
// another physical core.
type Split struct {
	Node    int        `json:"node"`
	IRQCPUs cpuset.Set `json:"irq_cpus"`
	// AppCPUs is empty when the node has a single usable core.
	AppCPUs cpuset.Set `json:"app_cpus"`
	// Unusable says why the node can take nothing: no usable CPU.
	Unusable string `json:"unusable,omitempty"`
}

// PlannedCell is a cell placed on this host, or why it cannot be.
type PlannedCell struct {
	Cell
	Applicable bool   `json:"applicable"`
	Reason     string `json:"reason,omitempty"` // why not applicable
	// IRQNode and AppNode are the nodes of IRQCPUs and AppCPUs; not
	// applicable, with Reason, when the cell is not.
	IRQNode  unknown.Value[int] `json:"irq_node"`
	AppNode  unknown.Value[int] `json:"app_node"`
	IRQCPUs  cpuset.Set         `json:"irq_cpus"`
	AppCPUs  cpuset.Set         `json:"app_cpus"`
	MemNodes cpuset.Set         `json:"mem_nodes"` // empty: memory not bound
	// PinIRQs are the only IRQs the cell pins to IRQCPUs (a flow cell: the
	// flow's queue IRQ, with its NAPI thread), every other IRQ of the
	// NIC left where it is; empty: all the NIC's IRQs.
	PinIRQs []int `json:"pin_irqs,omitempty"`
}

// MarshalJSON writes each unknown field's reason beside it.
func (pc PlannedCell) MarshalJSON() ([]byte, error) {
	type plain PlannedCell
	return unknown.MarshalObject(plain(pc))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (pc *PlannedCell) UnmarshalJSON(b []byte) error {
	type plain PlannedCell
	return unknown.UnmarshalObject(b, (*plain)(pc))
}

// notApplicable is pc refused for its Reason: its nodes not applicable.
func (pc PlannedCell) notApplicable() PlannedCell {
	why := unknown.Because(unknown.KindNotApplicable, pc.Reason)
	pc.Applicable, pc.IRQNode, pc.AppNode = false, unknown.Not[int](why), unknown.Not[int](why)
	return pc
}

// planMatrix places the cells on the host under root for the NIC nic of
// h (whose IRQs t holds); remote chooses the remote node (nil: the
// farthest from the NIC's).
func planMatrix(fsys kfile.FS, h *topology.Host, t *irq.Table, nic string, cells []Cell, remote *int, fp *FlowPlan) (*Plan, error) {
	n, err := h.LookupNIC(nic)
	if err != nil {
		return nil, err
	}
	loc := h.Locality(n)
	nicNode, ok := loc.Node.Get()
	if !ok {
		return nil, fmt.Errorf("%w: %s: its NUMA node is unknown (locality %s), so nothing is local or remote to it", tune.ErrLocalityUnknown, nic, loc.Source)
	}
	p := &Plan{NIC: nic, Driver: n.Driver, Device: n.PCI, NICNode: nicNode, Locality: loc.Source.String(), QueueIRQs: []int{}, Flow: fp}
	if p.Device == "" {
		p.Device = n.Virtio
	}
	for _, q := range t.ForNIC(nic) {
		if q.Owner.Kind == irq.KindQueue {
			p.QueueIRQs = append(p.QueueIRQs, q.IRQ)
		}
	}
	if len(p.QueueIRQs) == 0 {
		return nil, fmt.Errorf("%s: %w: no queue IRQs to place", nic, tune.ErrNoIRQs)
	}
	remoteID, remoteWhy, err := remoteNode(h, nicNode, remote)
	if err != nil {
		return nil, err
	}
	p.RemoteNode, p.RemoteBy = unknown.Of(remoteID), remoteWhy
	if remoteID < 0 {
		p.RemoteNode, p.RemoteBy = unknown.NotAs[int](unknown.KindNotApplicable, remoteWhy), ""
	}
	splits := map[int]Split{}
	for _, node := range []int{p.NICNode, remoteID} {
		if node < 0 {
			continue
		}
		s, err := splitNode(fsys, h, node)
		if err != nil {
			return nil, err
		}
		splits[node] = s
		p.Nodes = append(p.Nodes, s)
	}
	if fp != nil {
		if err := fp.flowCores(fsys, h, p.NICNode); err != nil {
			return nil, err
		}
	}
	for _, c := range cells {
		if c.Flow != "" {
			p.Cells = append(p.Cells, p.placeFlow(c))
		} else {
			p.Cells = append(p.Cells, p.place(c, splits))
		}
	}
	return p, nil
}

// place puts one cell on the plan's nodes.
func (p *Plan) place(c Cell, splits map[int]Split) PlannedCell {
	pc := PlannedCell{Cell: c}
	node := func(s Side) int {
		if s == SideRemote {
			return p.RemoteNode.Or(-1)
		}
		return p.NICNode
	}
	irqNode, appNode := node(c.IRQs), node(c.App)
	if irqNode < 0 || appNode < 0 {
		pc.Reason = "no remote node: " + p.RemoteNode.Why().Detail
		return pc.notApplicable()
	}
	is, as := splits[irqNode], splits[appNode]
	for _, s := range []Split{is, as} {
		if s.Unusable != "" {
			pc.Reason = s.Unusable
			return pc.notApplicable()
		}
	}
	pc.AppCPUs = as.AppCPUs
	if c.Shared {
		pc.AppCPUs = is.IRQCPUs
	} else if pc.AppCPUs.IsEmpty() {
		pc.Reason = fmt.Sprintf("node %d has one usable core (CPUs %s): no core apart from the IRQs' for the command", appNode, as.IRQCPUs)
		return pc.notApplicable()
	}
	pc.Applicable, pc.IRQNode, pc.AppNode, pc.IRQCPUs = true, unknown.Of(irqNode), unknown.Of(appNode), is.IRQCPUs
	if c.Membind {
		pc.MemNodes = cpuset.New(appNode)
	}
	return pc
}

// splitNode divides a node's usable CPUs between the IRQs and the
// command: the IRQs take the first half of its cores (rounded up) with
// their SMT siblings, the command the rest.
func splitNode(fsys kfile.FS, h *topology.Host, node int) (Split, error) {
	s := Split{Node: node}
	all, err := tune.PickOn(fsys, tune.PickRequest{Node: &node})
	if errors.Is(err, tune.ErrNothingLeft) {
		s.Unusable = fmt.Sprintf("node %d has no usable CPU (%v)", node, err)
		return s, nil
	}
	if err != nil {
		return s, err
	}
	cores, err := tune.PickOn(fsys, tune.PickRequest{Node: &node, OnePerCore: true})
	if err != nil {
		return s, err
	}
	k := cores.CPUs.Len()
	s.IRQCPUs = h.SiblingsOf(cores.CPUs.First((k + 1) / 2)).Intersection(all.CPUs)
	if k > 1 {
		s.AppCPUs = all.CPUs.Difference(s.IRQCPUs)
	}
	return s, nil
}

// remoteNode chooses the node the remote cells use: want when given,
// else the farthest node from the NIC's by the NIC node's distance row
// (the lowest id among equals; the lowest id when distances are
// unknown), among the nodes with online CPUs. -1 with the reason when
// there is none.
func remoteNode(h *topology.Host, nicNode int, want *int) (int, string, error) {
	var ids []int
	for _, n := range h.Nodes {
		if n.ID != nicNode && n.CPUs.Intersects(h.Online) {
			ids = append(ids, n.ID)
		}
	}
	if want != nil {
		switch {
		case *want == nicNode:
			return -1, "", usagef("--remote-node %d is the NIC's own node", *want)
		case !slices.Contains(ids, *want):
			return -1, "", usagef("--remote-node %d: no such node with online CPUs (other nodes: %s)", *want, idList(ids))
		}
		return *want, "--remote-node", nil
	}
	switch {
	case len(h.Nodes) == 1:
		return -1, fmt.Sprintf("this host has one NUMA node (node %d)", h.Nodes[0].ID), nil
	case len(ids) == 0:
		return -1, "no other NUMA node has an online CPU", nil
	case len(ids) == 1:
		return ids[0], "the only other node", nil
	}
	nic, _ := h.Node(nicNode)
	dist := func(id int) int {
		for i, n := range h.Nodes {
			if d := nic.Distances.Or(nil); n.ID == id && i < len(d) {
				return d[i]
			}
		}
		return -1
	}
	best := ids[0]
	for _, id := range ids[1:] {
		if dist(id) > dist(best) {
			best = id
		}
	}
	if dist(best) < 0 {
		return best, "distances unknown: the lowest-numbered other node", nil
	}
	return best, fmt.Sprintf("the farthest from node %d, at distance %d", nicNode, dist(best)), nil
}

func idList(ids []int) string {
	if len(ids) == 0 {
		return "none"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ", ")
}
