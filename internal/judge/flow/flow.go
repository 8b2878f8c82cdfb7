// Package flow predicts where one connection's received packets are
// processed: the NIC that receives them, the fields it hashes for the
// flow's type, the RSS hash (package rsshash) over the NIC's key, the
// indirection-table entry and queue, or the ntuple rule that overrides
// RSS; then the queue's IRQ, or its NAPI kernel thread when NAPI is
// threaded, with their requested and effective CPUs, RPS on the queue and
// the node. It reads the steering with package steer, the IRQs with irq,
// the CPUs and nodes with topology, and which NIC owns the destination
// address with nicuse. Every part is known or says why not: a NIC that
// reports no table, key or hash fields gives "queue unknown" with the
// reason, never a guess. What-if values (WhatIf) stand in for what the
// NIC says, for planning without the NIC.
package flow

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/irqnuma/irqnuma/internal/usage"
	"github.com/irqnuma/irqnuma/rsshash"
)

// WhatIf holds values that stand in for what the NIC says; a nil or
// empty field leaves the NIC's.
type WhatIf struct {
	Key    []byte
	Table  []uint32
	Fields *steer.HashFields
	Func   *rsshash.Func
}

// hashable reports whether the what-if values alone give the hash (the
// function, without a NIC or --rss-func, is Toeplitz and says so); with
// a table, they give the queue too.
func (w WhatIf) hashable() bool { return len(w.Key) > 0 && w.Fields != nil }

// Options say which NIC receives the flow (else the one owning its
// destination address) and what stands in for the NIC's answers.
type Options struct {
	NIC    string
	WhatIf WhatIf
}

// ErrNoNIC is wrapped by Predict's error when no NIC can be said to
// receive the flow and the what-if values do not make one unneeded.
var ErrNoNIC = usage.New("which NIC receives the flow is unknown")

// Predict says where f's packets are received and processed on the root
// fsys.
func Predict(fsys kfile.FS, f Flow, opt Options) (*Path, error) {
	pr, err := newPredictor(fsys, opt)
	if err != nil {
		return nil, err
	}
	return pr.predict(f, hostNet(fsys))
}

// netView is the network namespace a destination address is looked up
// in: its tables, or why they are not known.
type netView struct {
	net *proc.Net
	why string
}

// hostNet is the root's own namespace, PID 1's.
func hostNet(fsys kfile.FS) netView {
	n, err := proc.ReadNet(fsys, 1)
	switch {
	case errors.Is(err, proc.ErrNoProcess):
		return netView{why: "no /proc/1 to read the host's addresses from"}
	case err != nil:
		return netView{why: err.Error()}
	}
	return netView{net: n}
}

// predictor predicts flows on one reading of the host, each NIC's
// steering read once.
type predictor struct {
	fsys  kfile.FS
	h     *topology.Host
	t     *irq.Table
	opt   Options
	steer map[string]*steer.Host
}

func newPredictor(fsys kfile.FS, opt Options) (*predictor, error) {
	h, t, err := irq.Read(fsys, irq.Options{})
	if err != nil {
		return nil, err
	}
	return &predictor{fsys: fsys, h: h, t: t, opt: opt, steer: map[string]*steer.Host{}}, nil
}

// steering returns the steering of one NIC, read once.
func (pr *predictor) steering(name string) (*steer.Host, error) {
	if st, ok := pr.steer[name]; ok {
		return st, nil
	}
	st, err := steer.Read(pr.fsys, []string{name})
	if err != nil {
		return nil, err
	}
	pr.steer[name] = st
	return st, nil
}

func (pr *predictor) predict(f Flow, view netView) (*Path, error) {
	p := &Path{Flow: f.String(), Proto: string(f.Proto), FlowType: f.FlowType(),
		Src: endpoint(f.Src, f.HasSrcPort()), Dst: endpoint(f.Dst, f.HasDstPort()),
		Node: unknown.NotAs[int](unknown.KindNotApplicable, "no NIC receives the flow")}
	h := pr.h
	nic, err := receiver(h, f, pr.opt, view, p)
	if err != nil {
		return nil, err
	}
	var sn *steer.NIC
	var st *steer.Host
	if nic != nil {
		if st, err = pr.steering(nic.Name); err != nil {
			return nil, err
		}
		sn = st.NIC(nic.Name)
		p.Source = st.Source
		p.Node = h.Locality(nic).Node
	}
	p.steer(f, sn, pr.opt.WhatIf)
	if sn != nil {
		p.arfs(sn, st)
		if c, q, ok := sn.Channels, p.Queue.Or(0), p.Queue.Known(); c != nil && ok && c.RXQueues() > 0 && q >= c.RXQueues() {
			p.Notes = append(p.Notes, fmt.Sprintf("queue %d does not exist: %s has %d rx queues (channels), so the packets' fate is the driver's", q, sn.Name, c.RXQueues()))
		}
	}
	q, ok := p.Queue.Get()
	switch {
	case nic == nil:
		p.unplaced(unknown.Because(unknown.KindNotApplicable, "no NIC receives the flow"))
	case !ok:
		p.unplaced(unknown.Because(p.Queue.Why().Kind, "the flow's queue is unknown"))
	default:
		p.place(pr.fsys, h, pr.t, nic, sn, q)
	}
	return p, nil
}

// receiver returns the NIC that receives f: --nic, else the NIC under
// the interface owning the destination address. Without either, a
// what-if giving the hash needs none (nil, nil).
func receiver(h *topology.Host, f Flow, opt Options, view netView, p *Path) (*topology.NIC, error) {
	if opt.NIC != "" {
		nic, err := h.LookupNIC(opt.NIC)
		if err != nil {
			return nil, err
		}
		p.NIC, p.NICBy = nic.Name, "--nic"
		return nic, nil
	}
	nics, why := owningNICs(h, view, f.Dst.Addr())
	if len(nics) == 1 {
		p.NIC, p.NICBy = nics[0].Name, why
		return nics[0], nil
	}
	if opt.WhatIf.hashable() {
		p.NICBy = why + "; what-if values only"
		return nil, nil
	}
	return nil, fmt.Errorf("%w: %s; name it with --nic, or give --rss-key and --rss-fields (and --rss-table for the queue)", ErrNoNIC, why)
}

// owningNICs returns the NICs under the interface owning a, with why.
func owningNICs(h *topology.Host, view netView, a netip.Addr) ([]*topology.NIC, string) {
	if view.net == nil {
		return nil, fmt.Sprintf("%s: which interface owns %s is unknown", view.why, a)
	}
	iface, why, ok := nicuse.AddrOwner(view.net, a)
	if !ok {
		return nil, why
	}
	nics, err := h.IfaceNICs(iface)
	switch {
	case err != nil:
		return nil, why + "; " + err.Error()
	case len(nics) > 1:
		names := make([]string, len(nics))
		for i, x := range nics {
			names[i] = x.Name
		}
		return nil, fmt.Sprintf("%s, which is on %d NICs (%v): which one receives the flow is unknown", why, len(nics), names)
	case nics[0].Name != iface:
		why += ", which is on " + nics[0].Name
	}
	return nics, why
}
