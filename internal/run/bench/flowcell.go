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
	"github.com/irqnuma/irqnuma/internal/unknown"
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
	// unknown, its reason's Detail says why in flow's words (the flow
	// placements are then refused).
	Queue   unknown.Value[uint32] `json:"queue"`
	QueueBy string                `json:"queue_by,omitempty"`
	// Observed is what --observe's first run saw of the NIC's per-queue
	// counters; nil without --observe (Flow is then "").
	Observed *flow.Observation `json:"observed,omitempty"`
	// IRQ is the queue's interrupt; NAPIPID its NAPI kthread, not
	// applicable when NAPI is not threaded; Processing what runs its
	// NET_RX work (flow.Path.Processing). A NAPIPID unknown for another
	// reason (NAPI is threaded, and its thread is not known) refuses the
	// flow placements, as pinning the IRQ would not place the receive
	// work.
	IRQ        unknown.Value[int]             `json:"irq"`
	Managed    bool                           `json:"irq_managed,omitempty"` // its affinity is the kernel's
	NAPIPID    unknown.Value[int]             `json:"napi_pid"`
	Processing unknown.Value[flow.Processing] `json:"processing"`
	// Core is the CPU C that takes the flow's queue IRQ.
	Core unknown.Value[int] `json:"core"`
	// Sibling and Other are the command's CPU of flow-sibling and
	// flow-other-core; unknown, the reason says why there is none.
	Sibling unknown.Value[int] `json:"sibling"`
	Other   unknown.Value[int] `json:"other"`
}

// MarshalJSON writes each unknown field's reason beside it.
func (fp FlowPlan) MarshalJSON() ([]byte, error) {
	type plain FlowPlan
	return unknown.MarshalObject(plain(fp))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (fp *FlowPlan) UnmarshalJSON(b []byte) error {
	type plain FlowPlan
	return unknown.UnmarshalObject(b, (*plain)(fp))
}

// newFlowPlan is a plan that knows nothing yet: each part unknown for
// why.
func newFlowPlan(why unknown.Reason) *FlowPlan {
	return &FlowPlan{Queue: unknown.Not[uint32](why), IRQ: unknown.Not[int](why), NAPIPID: unknown.Not[int](why),
		Processing: unknown.Not[flow.Processing](why), Core: unknown.Not[int](why),
		Sibling: unknown.Not[int](why), Other: unknown.Not[int](why)}
}

// napiUnknown is why the flow's NAPI kthread is not known when NAPI is
// threaded; false when it is known or NAPI is not threaded.
func (fp *FlowPlan) napiUnknown() (string, bool) {
	if fp.NAPIPID.Known() || fp.NAPIPID.Why().Kind == unknown.KindNotApplicable {
		return "", false
	}
	return fp.NAPIPID.Why().Detail, true
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
	fp := newFlowPlan(unknown.Because(unknown.KindNotApplicable, "the flow's queue is unknown"))
	fp.fromPath(p)
	return fp, nil
}

// fromPath takes the flow's queue, IRQ and NAPI thread from flow's path.
func (fp *FlowPlan) fromPath(p *flow.Path) {
	fp.Flow, fp.Queue, fp.QueueBy, fp.Processing = p.Flow, p.Queue, p.QueueBy, p.Processing
	qi, hasIRQ := p.IRQ.Get()
	switch {
	case !p.Queue.Known():
		fp.IRQ = unknown.Not[int](p.Queue.Why())
	case hasIRQ:
		fp.IRQ = unknown.Of(qi.IRQ)
	default:
		fp.IRQ = unknown.Not[int](p.IRQ.Why())
	}
	fp.NAPIPID = unknown.NotAs[int](unknown.KindNotApplicable, "NAPI is not threaded")
	if n, ok := p.NAPI.Get(); ok && n.Threaded {
		fp.NAPIPID = n.PID
		if !n.PID.Known() && n.PID.Why().Detail == "" {
			fp.NAPIPID = unknown.NotAs[int](unknown.KindNotReported, "threaded NAPI is on, and which thread serves the queue is unknown")
		}
	}
}

// flowCores chooses C, the first CPU of the first usable core of node,
// C's SMT sibling and another core's CPU, each usable (online, not
// isolated); when one is missing it says why.
func (fp *FlowPlan) flowCores(fsys kfile.FS, h *topology.Host, node int) error {
	all, err := tune.PickOn(fsys, tune.PickRequest{Node: &node})
	if errors.Is(err, tune.ErrNothingLeft) {
		fp.Core = unknown.NotAs[int](unknown.KindNotApplicable, fmt.Sprintf("node %d has no usable CPU", node))
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
	core := ids[0]
	fp.Core = unknown.Of(core)
	c := cpuset.New(core)
	sibs := h.SiblingsOf(c).Difference(c)
	switch usable := sibs.Intersection(all.CPUs); {
	case !hostSMT(h):
		fp.Sibling = unknown.NotAs[int](unknown.KindNotApplicable, "no SMT sibling: the host has SMT off")
	case sibs.IsEmpty():
		fp.Sibling = unknown.NotAs[int](unknown.KindNotApplicable, fmt.Sprintf("no SMT sibling: CPU %d's core has no other online thread", core))
	case usable.IsEmpty():
		fp.Sibling = unknown.NotAs[int](unknown.KindNotApplicable, fmt.Sprintf("no usable SMT sibling: CPU %d's siblings %s are isolated", core, sibs))
	default:
		fp.Sibling = unknown.Of(usable.IDs()[0])
	}
	fp.Other = unknown.NotAs[int](unknown.KindNotApplicable, fmt.Sprintf("node %d has one usable core (CPUs %s): no other core for the command", node, all.CPUs))
	for _, id := range ids[1:] {
		if h.CoreOf(id) != h.CoreOf(core) && !h.SiblingsOf(c).Contains(id) {
			fp.Other = unknown.Of(id)
			break
		}
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
	pc := PlannedCell{Cell: c}
	fp := p.Flow
	var app unknown.Value[int]
	q, queueKnown := unknown.Value[uint32]{}, false
	irq, irqKnown := 0, false
	core, coreKnown := 0, false
	napiWhy, napiUnknown := "", false
	if fp != nil {
		q, queueKnown = fp.Queue, fp.Queue.Known()
		irq, irqKnown = fp.IRQ.Get()
		core, coreKnown = fp.Core.Get()
		napiWhy, napiUnknown = fp.napiUnknown()
	}
	switch {
	case fp == nil:
		pc.Reason = "no flow: give --flow \"udp|tcp SRC[:PORT] DST[:PORT]\" or --observe"
	case !queueKnown:
		pc.Reason = q.Why().Detail // flow's words: "queue unknown: …", "no queue: …"
	case !irqKnown:
		pc.Reason = fmt.Sprintf("queue %d's IRQ is unknown: no queue IRQ of %s matches it", q.Or(0), p.NIC)
	case fp.Managed:
		pc.Reason = fmt.Sprintf("IRQ %d of queue %d is kernel-managed: its affinity cannot be set", irq, q.Or(0))
	case !coreKnown:
		pc.Reason = fmt.Sprintf("node %d has no usable CPU", p.NICNode)
	case napiUnknown:
		pc.Reason = fmt.Sprintf("queue %d's receive work runs in a NAPI kthread: %s; pinning IRQ %d alone would not place it (threaded NAPI off: echo 0 > /sys/class/net/%s/threaded)",
			q.Or(0), napiWhy, irq, p.NIC)
	}
	if pc.Reason != "" {
		return pc.notApplicable()
	}
	switch c.Flow {
	case FlowSameCore:
		app = fp.Core
	case FlowSibling:
		app = fp.Sibling
	case FlowOtherCore:
		app = fp.Other
	}
	a, ok := app.Get()
	if !ok {
		pc.Reason = app.Why().Detail
		return pc.notApplicable()
	}
	pc.Applicable, pc.IRQNode, pc.AppNode = true, unknown.Of(p.NICNode), unknown.Of(p.NICNode)
	pc.IRQCPUs, pc.AppCPUs, pc.PinIRQs = cpuset.New(core), cpuset.New(a), []int{irq}
	return pc
}
