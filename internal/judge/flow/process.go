package flow

import (
	"fmt"
	"net/netip"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Process is one selected process's connected sockets, each as a flow
// with its path and where the process's threads run relative to it.
type Process struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
	// Flows are its connected sockets' flows; unknown when its sockets
	// are, the reason's Detail saying why in words.
	Flows unknown.Value[[]*Path] `json:"flows"`
	// Skipped counts its sockets that are not connected (listening,
	// unconnected UDP): they are no one flow.
	Skipped int `json:"skipped_sockets"`
}

// MarshalJSON writes each unknown field's reason beside it.
func (p Process) MarshalJSON() ([]byte, error) {
	type plain Process
	return unknown.MarshalObject(plain(p))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (p *Process) UnmarshalJSON(b []byte) error {
	type plain Process
	return unknown.UnmarshalObject(b, (*plain)(p))
}

// Relation is where a thread runs relative to the CPU that processes
// its flow's packets.
type Relation string

// The relations, nearest first.
const (
	RelationSameCPU  Relation = "same-cpu"
	RelationSibling  Relation = "smt-sibling"
	RelationSameNode Relation = "other-core-same-node"
	RelationRemote   Relation = "remote-node"
)

// ThreadPlace is one thread's last CPU and its relation to the flow's
// processing CPU.
type ThreadPlace struct {
	TID      int                     `json:"tid"`
	Comm     string                  `json:"comm"`
	LastCPU  unknown.Value[int]      `json:"last_cpu"`
	Relation unknown.Value[Relation] `json:"relation"`
}

// MarshalJSON writes each unknown field's reason beside it.
func (t ThreadPlace) MarshalJSON() ([]byte, error) {
	type plain ThreadPlace
	return unknown.MarshalObject(plain(t))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (t *ThreadPlace) UnmarshalJSON(b []byte) error {
	type plain ThreadPlace
	return unknown.UnmarshalObject(b, (*plain)(t))
}

// PredictProcesses predicts, for every process sel selects, each of its
// connected TCP and UDP sockets as a flow (the peer the source, the
// socket's own address the destination, looked up in the process's
// network namespace), and says where its threads last ran relative to
// the CPU processing the flow.
func PredictProcesses(fsys kfile.FS, sel proc.Selection, opt Options) ([]Process, error) {
	procs, matches, err := proc.SelectPresent(fsys, sel)
	if err != nil {
		return nil, err
	}
	for _, m := range matches {
		if err := m.Err(); err != nil {
			return nil, err
		}
	}
	pr, err := newPredictor(fsys, opt)
	if err != nil {
		return nil, err
	}
	var out []Process
	for _, p := range procs {
		pp, err := pr.process(p)
		if err != nil {
			return nil, err
		}
		out = append(out, pp)
	}
	return out, nil
}

func (pr *predictor) process(p *proc.Process) (Process, error) {
	out := Process{PID: p.PID, Comm: p.Comm}
	socks, ok := p.Net.Sockets.Get()
	if !ok {
		out.Flows = unknown.NotAs[[]*Path](unknown.KindFailed, "its sockets are unknown: "+p.Net.Sockets.Why().Detail)
		return out, nil
	}
	flows := []*Path{}
	for _, s := range socks {
		if !s.Connected() {
			out.Skipped++
			continue
		}
		f := Flow{Proto: s.Proto, srcPort: true, dstPort: true,
			Src: netip.AddrPortFrom(s.Remote.Addr().Unmap(), s.Remote.Port()),
			Dst: netip.AddrPortFrom(s.Local.Addr().Unmap(), s.Local.Port())}
		path, err := pr.predict(f, netView{net: p.Net})
		if err != nil {
			return out, fmt.Errorf("process %d, %s: %w", p.PID, f, err)
		}
		path.Threads = places(pr.h, p, path.processingCPU())
		flows = append(flows, path)
	}
	out.Flows = unknown.Of(flows)
	return out, nil
}

// processingCPU is the one CPU the flow's packets are processed on when
// it is known: the IRQ's single effective CPU, or the NAPI thread's last
// CPU; -1 otherwise.
func (p *Path) processingCPU() int {
	pr, _ := p.Processing.Get()
	switch pr {
	case ProcessingIRQ:
		q, _ := p.IRQ.Get()
		if eff, ok := q.Effective.Get(); ok {
			if s, err := cpuset.ParseList(eff); err == nil && s.Len() == 1 {
				c, _ := s.Min()
				return c
			}
		}
	case ProcessingNAPIThread:
		n, _ := p.NAPI.Get()
		if c, ok := n.LastCPU.Get(); ok {
			return c
		}
	}
	return -1
}

// places says where each thread of p last ran relative to cpu.
func places(h *topology.Host, p *proc.Process, cpu int) []ThreadPlace {
	out := make([]ThreadPlace, 0, len(p.Threads))
	for _, th := range p.Threads {
		out = append(out, ThreadPlace{TID: th.TID, Comm: th.Comm, LastCPU: th.LastCPU, Relation: relation(h, th.LastCPU.Or(-1), cpu)})
	}
	return out
}

func relation(h *topology.Host, a, b int) unknown.Value[Relation] {
	switch {
	case a < 0:
		return unknown.NotAs[Relation](unknown.KindNotReported, "the thread's last CPU is not known")
	case b < 0:
		return unknown.NotAs[Relation](unknown.KindNotReported, "the processing CPU is not known")
	case a == b:
		return unknown.Of(RelationSameCPU)
	case h.CoreOf(a) >= 0 && h.CoreOf(a) == h.CoreOf(b):
		return unknown.Of(RelationSibling)
	case unknown.Same(h.NodeOf(a), h.NodeOf(b)):
		return unknown.Of(RelationSameNode)
	case h.NodeOf(a).Known() && h.NodeOf(b).Known():
		return unknown.Of(RelationRemote)
	}
	return unknown.NotAs[Relation](unknown.KindNotReported, fmt.Sprintf("the node of CPU %d or CPU %d is not known", a, b))
}

// String names the relation in words.
func (r Relation) String() string {
	switch r {
	case RelationSameCPU:
		return "the same CPU"
	case RelationSibling:
		return "its SMT sibling (the same core)"
	case RelationSameNode:
		return "another core of the same node"
	case RelationRemote:
		return "another node"
	}
	return "unknown (the processing CPU or the thread's last CPU is not known)"
}
