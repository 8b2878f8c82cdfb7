package flow

import (
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// arfs says when accelerated RFS may move the flow: with ntuple filters
// on, the kernel's RFS tables sized (net.core.rps_sock_flow_entries and
// a queue's rps_flow_cnt), a driver that implements ndo_rx_flow_steer
// steers each flow to the queue of the CPU its socket was last read on.
func (p *Path) arfs(n *steer.NIC, st *steer.Host) {
	// The kernel's name (netlink), or ethtool -k's (a sosreport).
	on := n.Features["rx-ntuple-filter"].On || n.Features["ntuple-filters"].On
	if !on {
		return
	}
	entries, ok := st.Sysctls["rps_sock_flow_entries"]
	flowCnt := false
	for _, c := range n.Sysfs.RPSFlowCnt {
		flowCnt = flowCnt || c > 0
	}
	if ok && entries > 0 && flowCnt {
		p.ARFS = fmt.Sprintf("aRFS may move the flow: ntuple-filters is on, rps_sock_flow_entries is %d and rps_flow_cnt is set, so a driver with accelerated RFS steers the flow to the queue of the CPU that last read its socket", entries)
	}
}

// place fills in the queue's IRQ, NAPI, RPS and nodes.
func (p *Path) place(fsys kfile.FS, h *topology.Host, t *irq.Table, nic *topology.NIC, sn *steer.NIC, q uint32) {
	napi := napiOf(sn, q)
	p.IRQ = queueIRQ(t, nic.Name, int(q), napi)
	threaded := sn != nil && sn.Sysfs.Threaded != nil && *sn.Sysfs.Threaded != 0
	var qn *QueueNAPI
	switch {
	case napi != nil:
		qn = &QueueNAPI{ID: napi.ID, Threaded: napi.PID != 0}
	case threaded:
		why := whyOf(sn, "threaded NAPI is on, and which thread serves the queue is unknown (", ")", steer.PartQueues, steer.PartNAPI)
		qn = &QueueNAPI{Threaded: true, PID: unknown.Not[int](why)}
	}
	var cpus cpuset.Set
	known := false
	qi, hasIRQ := p.IRQ.Get()
	switch {
	case qn != nil && qn.Threaded:
		p.Processing = unknown.Of(ProcessingNAPIThread)
		cpus, known = qn.thread(fsys, napi)
	case hasIRQ:
		p.Processing = unknown.Of(ProcessingIRQ)
		cpus, known = qi.landing(t)
	default:
		p.Processing = unknown.NotAs[Processing](unknown.KindNotReported, "neither the queue's IRQ nor its NAPI thread is known")
	}
	switch {
	case qn == nil:
		p.NAPI = unknown.Not[QueueNAPI](whyOf(sn, "no NAPI instance is known for the queue (", ")", steer.PartQueues, steer.PartNAPI))
	case !qn.Threaded:
		na := unknown.Because(unknown.KindNotApplicable, "NAPI is not threaded")
		qn.PID, qn.Allowed, qn.LastCPU = unknown.Not[int](na), unknown.Not[string](na), unknown.Not[int](na)
		p.NAPI = unknown.Of(*qn)
	default:
		p.NAPI = unknown.Of(*qn)
	}
	if known {
		nodes, _ := h.NodesOf(cpus)
		p.CPUNodes = nodes.String()
	}
	p.RPS = unknown.NotAs[string](unknown.KindNotCaptured, fmt.Sprintf("no rps_cpus for rx queue %d", q))
	for _, qu := range nic.Queues {
		if qu.Kind == topology.QueueKindRx && qu.Index == int(q) {
			if rps, ok := qu.CPUs.Get(); !ok {
				p.RPS = unknown.Not[string](qu.CPUs.Why())
			} else if p.RPS = unknown.Of(""); !rps.IsEmpty() {
				p.RPS = unknown.Of(rps.String())
			}
		}
	}
}

// unplaced says the queue's IRQ, NAPI, processing and RPS are unknown
// for why (the queue is unknown, or no NIC receives the flow).
func (p *Path) unplaced(why unknown.Reason) {
	p.IRQ, p.NAPI = unknown.Not[QueueIRQ](why), unknown.Not[QueueNAPI](why)
	p.Processing, p.RPS = unknown.Not[Processing](why), unknown.Not[string](why)
}

// napiOf returns the NAPI instance netdev says serves rx queue q.
func napiOf(n *steer.NIC, q uint32) *steer.NAPI {
	if n == nil {
		return nil
	}
	for _, qu := range n.Queues {
		if qu.Type != steer.QueueTypeRX || qu.ID != q || qu.NAPI == 0 {
			continue
		}
		for i := range n.NAPIs {
			if n.NAPIs[i].ID == qu.NAPI {
				return &n.NAPIs[i]
			}
		}
	}
	return nil
}

// queueIRQ finds the queue's IRQ: the one netdev ties its NAPI to, else
// the rx (or combined) IRQ the irq package matches to the queue.
func queueIRQ(t *irq.Table, nic string, q int, napi *steer.NAPI) unknown.Value[QueueIRQ] {
	var hit *irq.IRQ
	by := ""
	for i := range t.IRQs {
		x := &t.IRQs[i]
		if napi != nil && unknown.Is(napi.IRQ, x.IRQ) {
			hit, by = x, "netdev napi"
			break
		}
		if o := x.Owner; hit == nil && o != nil && o.NIC == nic && o.Kind == irq.KindQueue && unknown.Is(o.Queue, q) && o.Dir != interrupts.DirTX {
			hit, by = x, "irq name ("+o.By+")"
		}
	}
	if hit == nil {
		return unknown.NotAs[QueueIRQ](unknown.KindNotReported, fmt.Sprintf("no IRQ of %s is matched to queue %d", nic, q))
	}
	out := QueueIRQ{IRQ: hit.IRQ, Name: hit.Name, By: by, Effective: unknown.Not[string](hit.Effective.Why())}
	if aff, ok := hit.Affinity.Get(); ok {
		out.Requested = aff.String()
	}
	if eff, ok := hit.Effective.Get(); ok {
		out.Effective = unknown.Of(eff.String())
	}
	return unknown.Of(out)
}

// landing is where the IRQ is delivered: its effective CPUs, else the
// request.
func (q *QueueIRQ) landing(t *irq.Table) (cpuset.Set, bool) {
	for i := range t.IRQs {
		x := &t.IRQs[i]
		if x.IRQ != q.IRQ {
			continue
		}
		if eff, ok := x.Effective.Get(); ok {
			return eff, true
		}
		if aff, ok := x.Affinity.Get(); ok {
			return aff, true
		}
	}
	return cpuset.Set{}, false
}

// thread reads the NAPI kthread's allowed CPUs and last CPU.
func (n *QueueNAPI) thread(fsys kfile.FS, napi *steer.NAPI) (cpuset.Set, bool) {
	if napi == nil || napi.PID == 0 {
		if n.PID.Why().Detail == "" {
			n.PID = unknown.NotAs[int](unknown.KindNotReported, "netdev reports no kthread pid for the queue's NAPI")
		}
		n.Allowed, n.LastCPU = unknown.Not[string](n.PID.Why()), unknown.Not[int](n.PID.Why())
		return cpuset.Set{}, false
	}
	n.PID = unknown.Of(napi.PID)
	pr, err := proc.Read(fsys, napi.PID)
	if err != nil {
		why := unknown.Because(unknown.KindFailed, err.Error())
		n.Allowed, n.LastCPU = unknown.Not[string](why), unknown.Not[int](why)
		return cpuset.Set{}, false
	}
	n.Comm, n.Allowed = pr.Comm, unknown.Of(pr.Allowed.String())
	n.LastCPU = unknown.NotAs[int](unknown.KindNotReported, fmt.Sprintf("no last CPU in /proc/%d/stat", napi.PID))
	for _, th := range pr.Threads {
		if c, ok := th.LastCPU.Get(); ok && th.TID == napi.PID {
			n.LastCPU = unknown.Of(c)
		}
	}
	return pr.Allowed, true
}
