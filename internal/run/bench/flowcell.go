package bench

import (
	"errors"
	"fmt"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/flow"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/tune"
)

// The flow placements: the flow's queue IRQ (and its NAPI thread) on
// one core C of the NIC's node, the NIC's other IRQs left where they
// are, the command on C, on C's SMT sibling, or on another physical
// core of that node.
const (
	FlowSameCore  = "same-core"
	FlowSibling   = "sibling"
	FlowOtherCore = "other-core"
)

// flowCells are the placements for one flow (--flow).
var flowCells = []Cell{
	{Name: "flow-same-core", IRQs: SideLocal, App: SideLocal, Shared: true, Flow: FlowSameCore,
		Doc: "the flow's queue IRQ (and NAPI thread) on one core C of the NIC's node, the command on C too"},
	{Name: "flow-sibling", IRQs: SideLocal, App: SideLocal, Flow: FlowSibling,
		Doc: "the flow's queue IRQ on C, the command on C's SMT sibling (none on a host without SMT)"},
	{Name: "flow-other-core", IRQs: SideLocal, App: SideLocal, Flow: FlowOtherCore,
		Doc: "the flow's queue IRQ on C, the command on another physical core of the NIC's node (never a sibling of C)"},
}

// FlowPlan is the flow the flow placements are for, and where its
// packets land as package flow predicts it.
type FlowPlan struct {
	Flow string `json:"flow"`
	// Queue is the rx queue the flow lands on, QueueBy how that is known;
	// Unknown says why when Queue is nil (the flow placements are then
	// refused).
	Queue   *uint32 `json:"queue"`
	QueueBy string  `json:"queue_by,omitempty"`
	Unknown string  `json:"queue_unknown,omitempty"`
	// Observed is what --observe's first run saw of the NIC's per-queue
	// counters; nil without --observe (Flow is then "").
	Observed *flow.Observation `json:"observed,omitempty"`
	// IRQ is the queue's interrupt, -1 when unknown; NAPIPID its NAPI
	// kthread when NAPI is threaded (0: none known); Processing what runs
	// its NET_RX work (flow.Path.Processing).
	IRQ        int    `json:"irq"`
	Managed    bool   `json:"irq_managed,omitempty"` // its affinity is the kernel's
	NAPIPID    int    `json:"napi_pid,omitempty"`
	Processing string `json:"processing,omitempty"`
	// NAPIUnknown says why the queue's NAPI kthread is not known when
	// NAPI is threaded and NAPIPID is 0: the flow placements are then
	// refused, as pinning the IRQ would not place the receive work.
	NAPIUnknown string `json:"napi_unknown,omitempty"`
	// Core is the CPU C that takes the flow's queue IRQ, -1 when none is
	// usable.
	Core int `json:"core"`
	// Sibling and Other are the command's CPU of flow-sibling and
	// flow-other-core, -1 with SiblingWhy or OtherWhy when there is none.
	Sibling    int    `json:"sibling"`
	SiblingWhy string `json:"sibling_why,omitempty"`
	Other      int    `json:"other"`
	OtherWhy   string `json:"other_why,omitempty"`
}

// parseFlow reads --flow: "udp|tcp SRC[:PORT] DST[:PORT]", as irqnuma
// flow takes it.
func parseFlow(s string) (flow.Flow, error) {
	w := strings.Fields(s)
	if len(w) != 3 {
		return flow.Flow{}, usagef("--flow %q: want \"udp|tcp SRC[:PORT] DST[:PORT]\" (3 words, %d given)", clip(s), len(w))
	}
	f, err := flow.Parse(w[0], w[1], w[2])
	if err != nil {
		return flow.Flow{}, usagef("--flow: %v", err)
	}
	return f, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// predictFlow finds where f lands on nic: its queue and IRQ, through
// package flow. A queue flow cannot tell is kept, with why.
func predictFlow(fsys kfile.FS, f flow.Flow, nic string) (*FlowPlan, error) {
	p, err := flow.Predict(fsys, f, flow.Options{NIC: nic})
	if err != nil {
		return nil, err
	}
	fp := &FlowPlan{IRQ: -1, Core: -1, Sibling: -1, Other: -1}
	fp.fromPath(p)
	return fp, nil
}

// fromPath takes the flow's queue, IRQ and NAPI thread from flow's path.
func (fp *FlowPlan) fromPath(p *flow.Path) {
	fp.Flow, fp.Queue, fp.QueueBy, fp.Unknown, fp.Processing = p.Flow, p.Queue, p.QueueBy, p.Unknown, p.Processing
	if p.Queue != nil && p.IRQ != nil {
		fp.IRQ = p.IRQ.IRQ
	}
	if p.NAPI != nil && p.NAPI.Threaded {
		fp.NAPIPID = p.NAPI.PID
		if fp.NAPIPID == 0 {
			fp.NAPIUnknown = p.NAPI.Why
			if fp.NAPIUnknown == "" {
				fp.NAPIUnknown = "threaded NAPI is on, and which thread serves the queue is unknown"
			}
		}
	}
}

// flowCores chooses C, the first CPU of the first usable core of node,
// C's SMT sibling and another core's CPU, each usable (online, not
// isolated); when one is missing it says why.
func (fp *FlowPlan) flowCores(fsys kfile.FS, h *topology.Host, node int) error {
	all, err := tune.PickOn(fsys, tune.PickRequest{Node: &node})
	if errors.Is(err, tune.ErrNothingLeft) {
		return nil
	}
	if err != nil {
		return err
	}
	cores, err := tune.PickOn(fsys, tune.PickRequest{Node: &node, OnePerCore: true})
	if err != nil {
		return err
	}
	ids := cores.CPUs.IDs()
	fp.Core = ids[0]
	c := cpuset.New(fp.Core)
	sibs := h.SiblingsOf(c).Difference(c)
	switch usable := sibs.Intersection(all.CPUs); {
	case !hostSMT(h):
		fp.SiblingWhy = "no SMT sibling: the host has SMT off"
	case sibs.IsEmpty():
		fp.SiblingWhy = fmt.Sprintf("no SMT sibling: CPU %d's core has no other online thread", fp.Core)
	case usable.IsEmpty():
		fp.SiblingWhy = fmt.Sprintf("no usable SMT sibling: CPU %d's siblings %s are isolated", fp.Core, sibs)
	default:
		fp.Sibling = usable.IDs()[0]
	}
	for _, id := range ids[1:] {
		if h.CoreOf(id) != h.CoreOf(fp.Core) && !h.SiblingsOf(c).Contains(id) {
			fp.Other = id
			break
		}
	}
	if fp.Other < 0 {
		fp.OtherWhy = fmt.Sprintf("node %d has one usable core (CPUs %s): no other core for the command", node, all.CPUs)
	}
	return nil
}

// hostSMT reports whether any online CPU has an SMT sibling.
func hostSMT(h *topology.Host) bool {
	for _, c := range h.CPUs {
		if c.Online && c.Siblings.Or(cpuset.Set{}).Len() > 1 {
			return true
		}
	}
	return false
}

// placeFlow places a flow cell.
func (p *Plan) placeFlow(c Cell) PlannedCell {
	pc := PlannedCell{Cell: c, IRQNode: -1, AppNode: -1}
	fp := p.Flow
	app := -1
	switch {
	case fp == nil:
		pc.Reason = "no flow: give --flow \"udp|tcp SRC[:PORT] DST[:PORT]\" or --observe"
		return pc
	case fp.Queue == nil:
		pc.Reason = fp.Unknown // flow's words: "queue unknown: …", "no queue: …"
		return pc
	case fp.IRQ < 0:
		pc.Reason = fmt.Sprintf("queue %d's IRQ is unknown: no queue IRQ of %s matches it", *fp.Queue, p.NIC)
		return pc
	case fp.Managed:
		pc.Reason = fmt.Sprintf("IRQ %d of queue %d is kernel-managed: its affinity cannot be set", fp.IRQ, *fp.Queue)
		return pc
	case fp.Core < 0:
		pc.Reason = fmt.Sprintf("node %d has no usable CPU", p.NICNode)
		return pc
	case fp.NAPIUnknown != "":
		pc.Reason = fmt.Sprintf("queue %d's receive work runs in a NAPI kthread: %s; pinning IRQ %d alone would not place it (threaded NAPI off: echo 0 > /sys/class/net/%s/threaded)",
			*fp.Queue, fp.NAPIUnknown, fp.IRQ, p.NIC)
		return pc
	}
	switch c.Flow {
	case FlowSameCore:
		app = fp.Core
	case FlowSibling:
		app, pc.Reason = fp.Sibling, fp.SiblingWhy
	case FlowOtherCore:
		app, pc.Reason = fp.Other, fp.OtherWhy
	}
	if app < 0 {
		return pc
	}
	pc.Applicable, pc.IRQNode, pc.AppNode = true, p.NICNode, p.NICNode
	pc.IRQCPUs, pc.AppCPUs, pc.PinIRQs = cpuset.New(fp.Core), cpuset.New(app), []int{fp.IRQ}
	return pc
}
