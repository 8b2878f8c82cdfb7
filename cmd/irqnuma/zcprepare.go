package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/affinity"
	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/shutdown"
	"github.com/irqnuma/irqnuma/irq"
	"github.com/irqnuma/irqnuma/report"
	"github.com/irqnuma/irqnuma/steer"
	"github.com/irqnuma/irqnuma/topology"
	"github.com/irqnuma/irqnuma/zc"
)

type zcPrepareFlags struct {
	queue, port     int
	dryRun, partial bool
	state           string
}

func newZCPrepareCmd(a *app) *cobra.Command {
	var f zcPrepareFlags
	c := &cobra.Command{
		Use:   "prepare NIC --queue Q --port P",
		Short: "Set a NIC up for zero-copy receive on one queue, undoably (irq restore)",
		Args:  usageArgs(cobra.ExactArgs(1)),
		// No JSON document yet: -o json is refused rather than mixed
		// with the plan's text.
		Annotations: map[string]string{"json": "none"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("queue") || !cmd.Flags().Changed("port") {
				return cli.Usagef("zc prepare needs --queue and --port")
			}
			if f.queue < 0 || f.queue > 4095 {
				return cli.Usagef("--queue %d: want a queue index", f.queue)
			}
			if f.port < 1 || f.port > 65535 {
				return cli.Usagef("--port %d: want 1 to 65535", f.port)
			}
			return runZCPrepare(a, args[0], f)
		},
	}
	c.Flags().IntVar(&f.queue, "queue", 0, "the rx queue zero-copy receive binds to")
	c.Flags().IntVar(&f.port, "port", 0, "the TCP port whose flow the ntuple rule steers to the queue")
	c.Flags().BoolVar(&f.dryRun, "dry-run", false, "show the plan and any refusal; change nothing")
	c.Flags().BoolVar(&f.partial, "partial", false, "apply the steps the NIC supports even though it cannot bind zero-copy receive")
	c.Flags().StringVar(&f.state, "state", "", "state file to save the old values to (default <root>/var/lib/irqnuma/state-<UTC time>.json)")
	return c
}

// zcPlan is what prepare will do on one NIC.
type zcPlan struct {
	NIC   string `json:"nic"`
	Queue int    `json:"queue"`
	Port  int    `json:"port"`
	// Steps are the steering changes, in the order they are made.
	Steps []affinity.SteerStep `json:"-"`
	// Skipped are the steps not made, with why (already so, or the NIC
	// cannot).
	Skipped []zcSkip `json:"skipped"`
	// Blockers say why the NIC cannot bind zero-copy receive; empty
	// when nothing known stops it.
	Blockers []string `json:"blockers"`
	IRQCPU   int      `json:"irq_cpu"`
	AppCPUs  string   `json:"app_cpus"`
	appPick  *affinity.Pick
}

type zcSkip struct {
	Step string `json:"step"`
	Why  string `json:"why"`
}

// zcBlockers are zc check's prerequisites that do not hold and that
// the plan does not make hold (zc.Check with the NIC's reading), first
// blocker first: the refusal.
func zcBlockers(fsys kfile.FS, n *steer.NIC, p *zcPlan) ([]string, error) {
	h, err := topology.Read(fsys)
	if err != nil {
		return nil, err
	}
	q, port := p.Queue, p.Port
	r, err := zc.Check(fsys, h, n.Name, zc.Options{Queue: &q, Port: &port, Steer: n})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range r.Blockers() {
		if !p.fixes(b.ID) {
			out = append(out, b.What+": "+b.Evidence)
		}
	}
	return out, nil
}

// fixes reports whether a step of the plan makes prerequisite id hold.
func (p *zcPlan) fixes(id zc.ID) bool {
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

// planZC plans the steering steps from the NIC's reading.
func planZC(n *steer.NIC, queue, port int) (*zcPlan, error) {
	p := &zcPlan{NIC: n.Name, Queue: queue, Port: port}
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
func (p *zcPlan) planChannels(n *steer.NIC, q uint32) (uint32, error) {
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
	step := affinity.SteerStep{NIC: n.Name, Channels: &steer.ChannelCounts{}}
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

func (p *zcPlan) planRSS(n *steer.NIC, q, rxq uint32) {
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
	t := steer.EqualTable(len(n.RSS.Table), others)
	// A table nobody configured is spread again by the driver when the
	// channels change: then it will not be the one read now.
	respread := len(p.Steps) > 0 && p.Steps[len(p.Steps)-1].Channels != nil && steer.IsDefaultTable(n.RSS.Table, n.RSS.Rings)
	if slices.Equal(t, n.RSS.Table) && !respread {
		p.skip("rss table", "already spread over every queue but "+strconv.Itoa(int(q)))
		return
	}
	p.Steps = append(p.Steps, affinity.SteerStep{NIC: n.Name, RSS: &steer.RSSSetting{Table: t}})
}

func (p *zcPlan) planRules(n *steer.NIC, q uint32, port uint16) {
	if n.Rules == nil {
		p.skip("ntuple rule", "the driver's rules cannot be read ("+n.Unknown[steer.PartRules].String()+")")
		return
	}
	if f, ok := n.Features["rx-ntuple-filter"]; ok && !f.On {
		p.skip("ntuple rule", "ntuple filters are off: turn them on with ethtool -K "+n.Name+" ntuple on")
		return
	}
	for _, ft := range []steer.FlowType{"tcp4", "tcp6"} {
		spec := steer.RuleSpec{FlowType: ft, DstPort: port, Queue: q}
		if slices.ContainsFunc(n.Rules.Rules, spec.Matches) {
			p.skip("ntuple rule "+string(ft), "already there")
			continue
		}
		p.Steps = append(p.Steps, affinity.SteerStep{NIC: n.Name, Rule: &spec})
	}
}

func (p *zcPlan) planRings(n *steer.NIC) {
	if n.Rings == nil {
		p.skip("rings", "unknown: "+n.Unknown[steer.PartRings].String())
		return
	}
	r := steer.RingSetting{}
	if s := n.Rings.TCPDataSplit; s == nil || *s == steer.TCPDataSplitUnknown {
		p.skip("tcp-data-split on", "tcp-data-split is not reported (a driver without it, or a kernel or capture older than it)")
	} else if *s != steer.TCPDataSplitEnabled {
		on := steer.TCPDataSplitEnabled
		r.TCPDataSplit = &on
	}
	if h := n.Rings.HDSThresh; h == nil {
		p.skip("hds-thresh 0", "hds-thresh is not reported (a driver without it, or a kernel or capture older than 6.13)")
	} else if *h != 0 {
		zero := uint32(0)
		r.HDSThresh = &zero
	}
	if r.TCPDataSplit != nil || r.HDSThresh != nil {
		p.Steps = append(p.Steps, affinity.SteerStep{NIC: n.Name, Rings: &r})
	}
}

// noChannels says the NIC cannot have the channels queue Q needs: the
// channels are skipped (zc check names the blocker).
func (p *zcPlan) noChannels(why string) error {
	why = fmt.Sprintf("queue %d needs %d rx queues: %s", p.Queue, max(p.Queue+1, 2), why)
	p.skip("channels", why) // zc check's channels prerequisite is the blocker
	return nil
}

func (p *zcPlan) skip(step, why string) { p.Skipped = append(p.Skipped, zcSkip{Step: step, Why: why}) }

// pickCPUs chooses the IRQ's core (the first core of the NIC's local
// CPUs) and the application's: another physical core of the same CPUs,
// never a sibling of the IRQ's.
func (p *zcPlan) pickCPUs(fsys kfile.FS) error {
	cores, err := affinity.PickOn(fsys, affinity.PickRequest{NIC: p.NIC, OnePerCore: true})
	if err != nil {
		return err
	}
	if cores.CPUs.Len() < 2 {
		return fmt.Errorf("%s's node has one physical core (%s): zero-copy receive wants the application on another core than the queue's IRQ", p.NIC, cores.CPUs)
	}
	p.IRQCPU = cores.CPUs.IDs()[0]
	app, err := affinity.PickOn(fsys, affinity.PickRequest{NIC: p.NIC, OnePerCore: true, Count: 1,
		Exclude: siblingsOf(fsys, p.IRQCPU)})
	if err != nil {
		return err
	}
	p.appPick, p.AppCPUs = app, app.CPUs.String()
	return nil
}

// siblingsOf is cpu with its SMT siblings, as topology reads them.
func siblingsOf(fsys kfile.FS, cpu int) cpuset.Set {
	set := cpuset.New(cpu)
	if sib, err := fsys.List(fsys.Path("sys/devices/system/cpu", "cpu"+strconv.Itoa(cpu), "topology/thread_siblings_list")); err == nil {
		set = set.Union(sib)
	}
	return set
}

// errZCRefused is the refusal of a NIC that cannot bind zero-copy
// receive.
var errZCRefused = errors.New("cannot do zero-copy receive")

func runZCPrepare(a *app, nic string, f zcPrepareFlags) error {
	sh, err := steer.Read(a.fs, []string{nic})
	if err != nil {
		return err
	}
	n := sh.NICs[0]
	plan, err := planZC(n, f.queue, f.port)
	if err != nil {
		return err
	}
	blockers, err := zcBlockers(a.fs, n, plan)
	if err != nil {
		return err
	}
	plan.Blockers = append(blockers, plan.Blockers...)
	if err := plan.pickCPUs(a.fs); err != nil {
		return err
	}
	writeZCPlan(a.stdout, plan)
	refusal := error(nil)
	if len(plan.Blockers) > 0 {
		refusal = fmt.Errorf("%s %w: %s", nic, errZCRefused, plan.Blockers[0])
	}
	if f.dryRun {
		if refusal != nil && !f.partial {
			return cli.Exit(cli.ExitError, fmt.Errorf("%w; prepare would change nothing (--partial applies the steps it can)", refusal))
		}
		return nil
	}
	if refusal != nil && !f.partial {
		return cli.Exit(cli.ExitError, fmt.Errorf("%w; nothing was changed (--partial applies the steps it can)", refusal))
	}
	return applyZC(a, plan, f, refusal)
}

func applyZC(a *app, plan *zcPlan, f zcPrepareFlags, refusal error) error {
	if err := needRoot(a, "zc prepare", "; --dry-run shows the plan without root"); err != nil {
		return err
	}
	set, err := steer.OpenSetter(a.fs)
	if err != nil {
		return err
	}
	defer set.Close()
	defer shutdown.Critical()()
	irqs, err := queueIRQs(a.fs, plan.NIC, plan.Queue)
	if err != nil {
		return err
	}
	nics := []string{plan.NIC}
	if len(irqs) == 0 {
		// The queue has no IRQ before its channel exists: the steering
		// is made alone, and the IRQ is pinned by running prepare again.
		nics = nil
		fmt.Fprintf(a.stderr, "%s queue %d has no IRQ yet: run zc prepare again once the channels are set to pin it\n", plan.NIC, plan.Queue)
	}
	res, err := affinity.Pin(a.ctx, affinity.PinRequest{
		Root: a.fs, NICs: nics, Writer: a.writer, Threads: a.threads, Now: a.now(), StatePath: f.state,
		Options: affinity.PlanOptions{IRQs: irqs, CPUs: cpuset.New(plan.IRQCPU)},
		Steer:   &affinity.SteerChange{Setter: set, Steps: plan.Steps},
	})
	if err != nil {
		return err
	}
	if err := writePin(a, report.NewPinDoc(res, false), true, true); err != nil {
		return err
	}
	if res.Changes > 0 {
		if err := pinOutcome(a, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(a.stderr, "nothing to change: the NIC is already as the plan puts it")
	}
	if refusal != nil {
		fmt.Fprintf(a.stderr, "%v: the steps it supports are applied, the others skipped; the NIC still cannot bind zero-copy receive\n", refusal)
	}
	return nil
}

// writeZCPlan prints the plan: the steps, those skipped with why, the
// blockers, and the CPUs.
func writeZCPlan(w io.Writer, p *zcPlan) {
	fmt.Fprintf(w, "zc prepare %s queue %d port %d\n", p.NIC, p.Queue, p.Port)
	for _, s := range p.Steps {
		fmt.Fprintf(w, "  change  %s\n", strings.TrimPrefix(s.Name(), p.NIC+" "))
	}
	fmt.Fprintf(w, "  change  queue %d's IRQ and NAPI thread to CPU %d\n", p.Queue, p.IRQCPU)
	for _, s := range p.Skipped {
		fmt.Fprintf(w, "  skip    %s: %s\n", s.Step, s.Why)
	}
	for _, b := range p.Blockers {
		fmt.Fprintf(w, "  blocker %s\n", b)
	}
	fmt.Fprintf(w, "application CPUs (another core of %s's node than CPU %d and its siblings):\n", p.NIC, p.IRQCPU)
	for _, format := range affinity.MaskFormats {
		if s, err := p.appPick.Format(format, false); err == nil {
			fmt.Fprintf(w, "  %-8s %s\n", format, s)
		}
	}
}

// queueIRQs are the IRQs serving queue q of nic (a combined vector, or
// its rx and tx vectors).
func queueIRQs(fsys kfile.FS, nic string, q int) ([]int, error) {
	_, t, err := irq.Read(fsys, irq.Options{NICs: []string{nic}})
	if err != nil {
		return nil, err
	}
	var out []int
	for _, i := range t.ForNIC(nic) {
		if i.Owner != nil && i.Owner.Kind == irq.KindQueue && i.Owner.Queue == q {
			out = append(out, i.IRQ)
		}
	}
	return out, nil
}
