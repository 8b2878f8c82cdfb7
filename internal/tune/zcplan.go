package tune

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/zc"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// ZCOptions say what zc prepare readies a NIC for.
type ZCOptions struct {
	Queue int // the rx queue zero-copy receive binds to
	Port  int // the TCP port whose flow the ntuple rules steer to Queue
}

// ZCPlan is what zc prepare will do on one NIC.
type ZCPlan struct {
	NIC   string `json:"nic"`
	Queue int    `json:"queue"`
	Port  int    `json:"port"`
	// Steps are the steering changes, in the order they are made.
	Steps []SteerStep `json:"-"`
	// Skipped are the steps not made, with why (already so, or the NIC
	// cannot).
	Skipped []ZCSkip `json:"skipped"`
	// Blockers say why the NIC cannot bind zero-copy receive; empty
	// when nothing known stops it.
	Blockers []string `json:"blockers"`
	IRQCPU   int      `json:"irq_cpu"`
	AppCPUs  string   `json:"app_cpus"`
	// App is the application's pick, AppCPUs in every MaskFormats form.
	App *Pick `json:"-"`
}

// ZCSkip is a step the plan does not make, and why.
type ZCSkip struct {
	Step string `json:"step"`
	// Because says why the step is not made: already done ("already
	// there"), not possible on the NIC, or what it needs is unknown
	// (then it quotes the part's reason). It is a plan's explanation,
	// not an unknown of the plan's own.
	Because string `json:"why"`
}

// planZC plans zc prepare on the NIC n of host h: the steering steps
// from n's reading, the blockers of check (zc.Check of the same NIC,
// queue and port) that no step makes hold, first blocker first, and the
// CPUs: the queue's IRQ on the first core of the NIC's local CPUs, the
// application on another physical core of them, never a sibling of the
// IRQ's.
func planZC(h *topology.Host, n *steer.NIC, check *zc.Report, o ZCOptions) (*ZCPlan, error) {
	p, err := planZCSteps(n, o.Queue, o.Port)
	if err != nil {
		return nil, err
	}
	p.Blockers = append(p.blockers(check), p.Blockers...)
	if err := p.pickCPUs(h); err != nil {
		return nil, err
	}
	return p, nil
}

// PlanZCOn reads nic's steering and the host under fsys, checks the NIC
// for zero-copy receive on o's queue and port (zc.Check), and plans zc
// prepare from what it read (PlanZC).
func PlanZCOn(fsys kfile.FS, nic string, o ZCOptions) (*ZCPlan, error) {
	h, err := topology.Read(fsys)
	if err != nil {
		return nil, err
	}
	// A NIC the host does not have is the user's mistake, as it is to
	// every command: topology.ErrUnknownNIC, before steer looks.
	if _, err := h.LookupNIC(nic); err != nil {
		return nil, err
	}
	sh, err := steer.Read(fsys, []string{nic})
	if err != nil {
		return nil, err
	}
	n := sh.NICs[0]
	q, port := o.Queue, o.Port
	check, err := zc.Check(fsys, h, n.Name, zc.Options{Queue: &q, Port: &port, Steer: n})
	if err != nil {
		return nil, err
	}
	return planZC(h, n, check, o)
}

// PinRequest is the pin that carries the plan out: its steering steps
// through set, then the queue's IRQs (QueueIRQs) to the plan's IRQ CPU.
// noIRQ says the queue has no IRQ yet, as before its channel exists: the
// steering is then made alone, and the IRQ is pinned by preparing again.
// The caller adds its writer, threads, clock and state path.
func (p *ZCPlan) PinRequest(fsys kfile.FS, set nicset.Setter) (req PinRequest, noIRQ bool, err error) {
	irqs, err := queueIRQs(fsys, p.NIC, p.Queue)
	if err != nil {
		return PinRequest{}, false, err
	}
	nics := []string{p.NIC}
	if len(irqs) == 0 {
		nics = nil
	}
	return PinRequest{
		Root: fsys, NICs: nics,
		Options: PlanOptions{IRQs: irqs, CPUs: cpuset.New(p.IRQCPU)},
		Steer:   &SteerChange{Setter: set, Steps: p.Steps},
	}, len(irqs) == 0, nil
}

// blockers are check's prerequisites that do not hold and that the plan
// does not make hold, first blocker first: the refusal.
func (p *ZCPlan) blockers(check *zc.Report) []string {
	var out []string
	for _, b := range check.Blockers() {
		if !p.fixes(b.ID) {
			out = append(out, b.What+": "+b.Evidence)
		}
	}
	return out
}

// fixes reports whether a step of the plan makes prerequisite id hold.
func (p *ZCPlan) fixes(id zc.ID) bool {
	for _, s := range p.Steps {
		switch {
		case id == zc.IDChannels && s.Channels != nil,
			id == zc.IDRSS && s.RSS != nil,
			id == zc.IDFlowRule && s.Rule != nil,
			id == zc.IDHeaderSplt && s.Rings != nil:
			return true
		}
	}
	return false
}

// planZCSteps plans the steering steps from the NIC's reading.
func planZCSteps(n *steer.NIC, queue, port int) (*ZCPlan, error) {
	p := &ZCPlan{NIC: n.Name, Queue: queue, Port: port}
	rxq, err := p.planChannels(n, uint32(queue))
	if err != nil {
		return nil, err
	}
	p.planRSS(n, uint32(queue), rxq)
	p.planRules(n, uint32(queue), uint16(port))
	p.planRings(n)
	return p, nil
}

// planChannels adds the channel step when the NIC has fewer rx queues
// than Q+1 (and 2); it returns the rx queues there will be (0 when
// unknown).
func (p *ZCPlan) planChannels(n *steer.NIC, q uint32) (uint32, error) {
	c := n.Channels
	if c == nil {
		p.skip("channels", "unknown: "+n.Unknown[steer.PartChannels].String())
		return 0, nil
	}
	need := max(q+1, 2)
	have := c.RXQueues()
	if have >= need {
		p.skip("channels", fmt.Sprintf("already %d rx queues", have))
		return have, nil
	}
	step := SteerStep{NIC: n.Name, Channels: &nicset.ChannelCounts{}}
	switch {
	case c.MaxCombined > 0:
		v := need - c.RX
		if v > c.MaxCombined {
			return 0, p.noChannels(fmt.Sprintf("%s has at most %d combined channels", n.Name, c.MaxCombined))
		}
		step.Channels.Combined = &v
	case c.MaxRX > 0:
		v := need - c.Combined
		if v > c.MaxRX {
			return 0, p.noChannels(fmt.Sprintf("%s has at most %d rx channels", n.Name, c.MaxRX))
		}
		step.Channels.RX = &v
	default:
		return 0, p.noChannels(n.Name + " reports no rx or combined channels to add")
	}
	p.Steps = append(p.Steps, step)
	return need, nil
}

func (p *ZCPlan) planRSS(n *steer.NIC, q, rxq uint32) {
	switch {
	case n.RSS == nil:
		p.skip("rss table", "unknown: "+n.Unknown[steer.PartRSS].String())
		return
	case len(n.RSS.Table) == 0:
		p.skip("rss table", "the driver reports no indirection table ("+n.Unknown[steer.PartRSSTable].String()+")")
		return
	case rxq == 0:
		p.skip("rss table", "the channels are unknown, so the queues to spread over are")
		return
	}
	var others []uint32
	for i := uint32(0); i < rxq; i++ {
		if i != q {
			others = append(others, i)
		}
	}
	t := nicset.EqualTable(len(n.RSS.Table), others)
	// A table nobody configured is spread again by the driver when the
	// channels change: then it will not be the one read now.
	respread := len(p.Steps) > 0 && p.Steps[len(p.Steps)-1].Channels != nil && nicset.IsDefaultTable(n.RSS.Table, n.RSS.Rings)
	if slices.Equal(t, n.RSS.Table) && !respread {
		p.skip("rss table", "already spread over every queue but "+strconv.Itoa(int(q)))
		return
	}
	p.Steps = append(p.Steps, SteerStep{NIC: n.Name, RSS: &nicset.RSSSetting{Table: t}})
}

func (p *ZCPlan) planRules(n *steer.NIC, q uint32, port uint16) {
	if n.Rules == nil {
		p.skip("ntuple rule", "the driver's rules cannot be read ("+n.Unknown[steer.PartRules].String()+")")
		return
	}
	if f, ok := n.Features["rx-ntuple-filter"]; ok && !f.On {
		p.skip("ntuple rule", "ntuple filters are off: turn them on with ethtool -K "+n.Name+" ntuple on")
		return
	}
	for _, ft := range []steer.FlowType{"tcp4", "tcp6"} {
		spec := nicset.RuleSpec{FlowType: ft, DstPort: port, Queue: q}
		if slices.ContainsFunc(n.Rules.Rules, spec.Matches) {
			p.skip("ntuple rule "+string(ft), "already there")
			continue
		}
		p.Steps = append(p.Steps, SteerStep{NIC: n.Name, Rule: &spec})
	}
}

func (p *ZCPlan) planRings(n *steer.NIC) {
	if n.Rings == nil {
		p.skip("rings", "unknown: "+n.Unknown[steer.PartRings].String())
		return
	}
	r := nicset.RingSetting{}
	if s, ok := n.Rings.TCPDataSplit.Get(); !ok {
		p.skip("tcp-data-split on", "tcp-data-split is not reported (a driver without it, or a kernel or capture older than it)")
	} else if s != steer.TCPDataSplitEnabled {
		on := nicset.DataSplitOn
		r.TCPDataSplit = &on
	}
	if h := n.Rings.HDSThresh; h == nil {
		p.skip("hds-thresh 0", "hds-thresh is not reported (a driver without it, or a kernel or capture older than 6.13)")
	} else if *h != 0 {
		zero := uint32(0)
		r.HDSThresh = &zero
	}
	if r.TCPDataSplit != nil || r.HDSThresh != nil {
		p.Steps = append(p.Steps, SteerStep{NIC: n.Name, Rings: &r})
	}
}

// noChannels says the NIC cannot have the channels queue Q needs: the
// channels are skipped (zc check names the blocker).
func (p *ZCPlan) noChannels(why string) error {
	why = fmt.Sprintf("queue %d needs %d rx queues: %s", p.Queue, max(p.Queue+1, 2), why)
	p.skip("channels", why) // zc check's channels prerequisite is the blocker
	return nil
}

func (p *ZCPlan) skip(step, why string) {
	p.Skipped = append(p.Skipped, ZCSkip{Step: step, Because: why})
}

// pickCPUs chooses the IRQ's core (the first core of the NIC's local
// CPUs) and the application's: another physical core of the same CPUs,
// never a sibling of the IRQ's (topology.Host.SiblingsOf).
func (p *ZCPlan) pickCPUs(h *topology.Host) error {
	cores, err := pickCPUs(h, nil, PickRequest{NIC: p.NIC, OnePerCore: true})
	if err != nil {
		return err
	}
	if cores.CPUs.Len() < 2 {
		return fmt.Errorf("%s's node has one physical core (%s): zero-copy receive wants the application on another core than the queue's IRQ", p.NIC, cores.CPUs)
	}
	p.IRQCPU = cores.CPUs.IDs()[0]
	app, err := pickCPUs(h, nil, PickRequest{NIC: p.NIC, OnePerCore: true, Count: 1,
		Exclude: h.SiblingsOf(cpuset.New(p.IRQCPU))})
	if err != nil {
		return err
	}
	p.App, p.AppCPUs = app, app.CPUs.String()
	return nil
}

// queueIRQs are the IRQs serving queue q of nic (a combined vector, or
// its rx and tx vectors), as irq.Read matches them on fsys: what zc
// prepare pins.
func queueIRQs(fsys kfile.FS, nic string, q int) ([]int, error) {
	_, t, err := irq.Read(fsys, irq.Options{NICs: []string{nic}})
	if err != nil {
		return nil, err
	}
	var out []int
	for _, i := range t.ForNIC(nic) {
		if i.Owner != nil && i.Owner.Kind == irq.KindQueue && unknown.Is(i.Owner.Queue, q) {
			out = append(out, i.IRQ)
		}
	}
	return out, nil
}
