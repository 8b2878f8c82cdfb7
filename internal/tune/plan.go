package tune

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// Strategy is how a plan places a NIC's queue IRQs on its target CPUs.
type Strategy string

// Strategies.
const (
	// StrategySpread gives each queue IRQ one CPU: one thread per physical
	// core first, siblings after every core has one.
	StrategySpread Strategy = "spread"
	// StrategyNode gives every queue IRQ the whole target set.
	StrategyNode Strategy = "node"
)

// ParseStrategy accepts "spread" and "node".
func ParseStrategy(s string) (Strategy, error) {
	switch Strategy(s) {
	case StrategySpread, StrategyNode:
		return Strategy(s), nil
	}
	return "", fmt.Errorf("strategy %q: want spread or node", s)
}

// Action is what a step does.
type Action string

// Actions.
const (
	ActionChange      Action = "change"
	ActionKeep        Action = "keep"
	ActionSkipManaged Action = "skip-managed"
	// ActionSkipUnknown: the step is not made because what it needs is
	// not known: the tree has no /proc/irq/N affinity file (the IRQ's
	// affinity cannot be set), or a NAPI thread's IRQ or CPUs are
	// not. A pin's outcome, as the JSON and text show it.
	ActionSkipUnknown Action = "skip-unknown"
	// ActionRestore writes back a value a pin saved.
	ActionRestore Action = "restore"
)

// KindXPS marks a step that sets a tx queue's xps_cpus.
const KindXPS irq.Kind = "xps"

// Errors a plan is refused with.
var (
	// ErrLocalityUnknown: what was asked needs a NUMA locality that is
	// not known: a NIC's node and local CPUs (for a plan or a pick
	// without --node or --cpus), or the nodes of the picked CPUs (for a
	// format that carries them). It is unknown.ErrUnknown, and it is the
	// user's to fix (usage.ErrUsage): they can name the CPUs instead.
	// Only Format's refusal of a format that needs nodes is not the
	// user's (it exits 1, as it always has), though it is this error.
	ErrLocalityUnknown error = localitySentinel{}
	// ErrNoCPUs: nothing is left of the target set.
	ErrNoCPUs = errors.New("no CPU left to place IRQs on")
	// ErrNoIRQs: the NIC has no IRQ to place.
	ErrNoIRQs = errors.New("no IRQs")
)

// PlanOptions says where and how to place the IRQs.
type PlanOptions struct {
	Strategy Strategy
	// Node, when not nil, targets that node's online CPUs instead of the
	// NIC's own node.
	Node *int
	// CPUs, when not empty, is the target set itself. Isolated and
	// nohz_full CPUs named here are used; offline ones never are.
	CPUs cpuset.Set
	// Exclude is taken out of the target set (e.g. a benchmark's CPUs).
	Exclude cpuset.Set
	// ExcludeAs names Exclude in a target's Left ("--exclude" when "").
	ExcludeAs string
	// XPS also sets each tx queue's xps_cpus to the CPUs of the queue IRQ
	// with the same index.
	XPS bool
	// IRQs, when not empty, limits the plan to these IRQs of the NICs
	// (e.g. one flow's queue IRQ): every other IRQ, tx queue and NAPI
	// thread of the NICs is left out of the plan, neither written nor
	// saved, so a restore puts back exactly what was moved. Each must
	// be one of the NICs' IRQs. NAPI threads go only with an IRQ they
	// are paired with; one whose queue is unknown is left alone.
	IRQs []int
}

// ErrNotNICIRQ: PlanOptions.IRQs names an IRQ that is none of the
// NICs'.
var ErrNotNICIRQ = usage.New("not an IRQ of the NIC")

// planStep is one IRQ (or tx queue, Kind KindXPS) of the plan.
type planStep struct {
	IRQ     int // -1 for an xps step
	NIC     string
	Queue   int            // queue index; -1 for a non-queue vector
	Dir     interrupts.Dir // rx, tx or "" (both)
	Kind    irq.Kind       // irq.KindQueue, irq.KindOther or KindXPS
	From    cpuset.Set
	HasFrom bool
	To      cpuset.Set // empty for skipped steps
	Action  Action
}

// Target is where one NIC's IRQs go, and how that set was chosen.
type Target struct {
	NIC    string
	CPUs   cpuset.Set
	Source string // e.g. "node 1, from numa_node", "--cpus 16-23"
	// Left says what was taken out of the source set, e.g.
	// "isolated/nohz_full 10-11".
	Left []string
}

// pinPlan is the placement of the IRQs of one or more NICs.
type pinPlan struct {
	Strategy Strategy
	Targets  []Target
	Steps    []planStep
	Notes    []string
	// Only is PlanOptions.IRQs: the plan places these IRQs and nothing
	// else of the NICs; empty: all of them.
	Only []int
}

// planPin plans the IRQs (and with XPS the tx queues) of the named NICs.
// t must hold those NICs' IRQs (irq.Load with their names).
//
// The target set is the NIC's local node's online CPUs (or its
// local_cpulist when numa_node is -1; see topology.Host.Locality), or
// opt.Node's, or opt.CPUs; minus isolated and nohz_full CPUs unless opt.CPUs
// names them; minus opt.Exclude; never an offline CPU. Under
// StrategySpread queue vectors, ordered by queue index, take one CPU each
// from SpreadOrder, wrapping when there are more queues than CPUs; NICs that
// share a target set continue one rotation. Under StrategyNode they get the
// whole set. Non-queue vectors get the whole set under both. Managed IRQs
// are skipped.
func planPin(h *topology.Host, t *irq.Table, nics []string, opt PlanOptions) (*pinPlan, error) {
	if opt.Strategy == "" {
		opt.Strategy = StrategySpread
	}
	if _, err := ParseStrategy(string(opt.Strategy)); err != nil {
		return nil, err
	}
	p := &pinPlan{Strategy: opt.Strategy, Only: slices.Clone(opt.IRQs)}
	cursor := map[string]int{} // rotation position per target set
	var all []int              // every IRQ of the NICs, for checking opt.IRQs
	for _, name := range nics {
		nic, ok := h.NICByName(name)
		if !ok {
			return nil, fmt.Errorf("%w %q", topology.ErrUnknownNIC, name)
		}
		tg, err := targetFor(h, nic, opt)
		if err != nil {
			return nil, err
		}
		p.Targets = append(p.Targets, tg)
		qs := t.ForNIC(name)
		if len(qs) == 0 {
			return nil, fmt.Errorf("%s: %w in this host's /proc/interrupts or msi_irqs", name, ErrNoIRQs)
		}
		for _, q := range qs {
			all = append(all, q.IRQ)
		}
		if len(opt.IRQs) > 0 {
			qs = slices.DeleteFunc(slices.Clone(qs), func(q *irq.IRQ) bool { return !slices.Contains(opt.IRQs, q.IRQ) })
		}
		p.planNIC(h, nic, qs, tg.CPUs, opt, cursor)
	}
	for _, n := range opt.IRQs {
		if !slices.Contains(all, n) {
			return nil, fmt.Errorf("IRQ %d: %w %s (%s: %s)", n, ErrNotNICIRQ, strings.Join(nics, ", "), units.Choose(len(all), "its IRQ", "their IRQs"), irqList(all))
		}
	}
	return p, nil
}

// irqList is a list of IRQ numbers as messages show it.
func irqList(irqs []int) string {
	s := make([]string, len(irqs))
	for i, n := range irqs {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " ")
}

func (p *pinPlan) planNIC(h *topology.Host, nic *topology.NIC, qs []*irq.IRQ, target cpuset.Set, opt PlanOptions, cursor map[string]int) {
	// Queue rank: the k-th distinct queue index, ascending. Vectors that
	// share an index (rx-3 and tx-3) share a CPU.
	var idx []int
	for _, q := range qs {
		if q.Owner.Kind == irq.KindQueue && !slices.Contains(idx, q.Owner.Queue.Or(-1)) {
			idx = append(idx, q.Owner.Queue.Or(-1))
		}
	}
	slices.Sort(idx)
	queueCPUs := make(map[int]cpuset.Set, len(idx))
	if opt.Strategy == StrategySpread {
		order := spreadOrder(h, target)
		if len(order) == 0 {
			order = target.IDs() // not reached: target holds online CPUs only
		}
		key := target.String()
		for k, i := range idx {
			queueCPUs[i] = cpuset.New(order[(cursor[key]+k)%len(order)])
		}
		cursor[key] += len(idx)
	} else {
		for _, i := range idx {
			queueCPUs[i] = target
		}
	}

	managedQueue := map[int]bool{}
	for _, q := range qs {
		aff, hasAff := q.Affinity.Get()
		s := planStep{IRQ: q.IRQ, NIC: nic.Name, Queue: q.Owner.Queue.Or(-1), Dir: q.Owner.Dir, Kind: q.Owner.Kind,
			From: aff, HasFrom: hasAff}
		switch {
		case !hasAff:
			s.Action = ActionSkipUnknown
			p.Notes = append(p.Notes, fmt.Sprintf("IRQ %d (%s): no /proc/irq/%d affinity file: skipped", q.IRQ, nic.Name, q.IRQ))
		case unknown.Is(q.Managed, true):
			s.Action = ActionSkipManaged
			if s.Kind == irq.KindQueue {
				managedQueue[s.Queue] = true
			}
		default:
			s.To = target
			if s.Kind == irq.KindQueue {
				s.To = queueCPUs[s.Queue]
			}
			s.Action = ActionChange
			if s.To.Equal(aff) {
				s.Action = ActionKeep
			}
		}
		p.Steps = append(p.Steps, s)
	}
	if opt.XPS {
		p.planXPS(nic, queueCPUs, managedQueue, len(opt.IRQs) > 0)
	}
}

// planXPS sets each tx queue's xps_cpus to the CPUs of the queue IRQ
// with its index; with only some IRQs placed (filtered), a tx queue
// whose queue IRQ is not one of them is left out.
func (p *pinPlan) planXPS(nic *topology.NIC, queueCPUs map[int]cpuset.Set, managedQueue map[int]bool, filtered bool) {
	for _, tq := range nic.Queues {
		if tq.Kind != topology.QueueKindTx {
			continue
		}
		cpus, ok := queueCPUs[tq.Index]
		xps, known := tq.CPUs.Get()
		switch {
		case !known:
			p.Notes = append(p.Notes, fmt.Sprintf("%s tx-%d: no readable xps_cpus: left alone", nic.Name, tq.Index))
			continue
		case !ok && filtered:
			continue // its queue IRQ is not one this plan places
		case !ok:
			p.Notes = append(p.Notes, fmt.Sprintf("%s tx-%d: no queue IRQ with index %d: xps_cpus left alone", nic.Name, tq.Index, tq.Index))
			continue
		case managedQueue[tq.Index]:
			p.Notes = append(p.Notes, fmt.Sprintf("%s tx-%d: its queue IRQ is managed: xps_cpus left alone", nic.Name, tq.Index))
			continue
		}
		s := planStep{IRQ: -1, NIC: nic.Name, Queue: tq.Index, Dir: interrupts.DirTX, Kind: KindXPS,
			From: xps, HasFrom: true, To: cpus, Action: ActionChange}
		if cpus.Equal(xps) {
			s.Action = ActionKeep
		}
		p.Steps = append(p.Steps, s)
	}
}

// targetFor computes the CPUs a NIC's IRQs may go to.
func targetFor(h *topology.Host, nic *topology.NIC, opt PlanOptions) (Target, error) {
	tg := Target{NIC: nic.Name}
	var set cpuset.Set
	isolated := h.IsolatedCPUs()
	switch {
	case !opt.CPUs.IsEmpty():
		if missing := opt.CPUs.Difference(h.Possible); !missing.IsEmpty() {
			return tg, fmt.Errorf("--cpus %s: %w: %s %s %s on this host (possible: %s)", opt.CPUs, ErrNoSuchCPU, units.Choose(missing.Len(), "CPU", "CPUs"), missing, units.Choose(missing.Len(), "does not exist", "do not exist"), h.Possible)
		}
		set = opt.CPUs
		tg.Source = "--cpus " + opt.CPUs.String()
		isolated = cpuset.Set{} // named explicitly: used
	case opt.Node != nil:
		cpus, ok := h.NodeCPUs(*opt.Node)
		if !ok {
			return tg, fmt.Errorf("--node %d: %w (this host has nodes %s)", *opt.Node, ErrNoSuchNode, h.NodeIDs())
		}
		set = cpus
		tg.Source = "node " + strconv.Itoa(*opt.Node) + ", from --node"
	default:
		loc := h.Locality(nic)
		if !loc.Known() {
			return tg, fmt.Errorf("%s: %w: numa_node is %d and local_cpulist does not narrow it (%s); give --node or --cpus",
				nic.Name, ErrLocalityUnknown, nic.Node.Or(-1), orNone(nic.LocalCPUs.Or(cpuset.Set{}), nic.LocalCPUs.Known()))
		}
		set = loc.CPUs
		if node, ok := loc.Node.Get(); ok {
			tg.Source = "node " + strconv.Itoa(node) + ", from " + loc.Source.String()
		} else {
			tg.Source = loc.Source.String() + " " + loc.CPUs.String()
		}
	}
	if off := set.Difference(h.Online); !off.IsEmpty() {
		tg.Left = append(tg.Left, "offline "+off.String())
		set = set.Intersection(h.Online)
	}
	if iso := set.Intersection(isolated); !iso.IsEmpty() {
		tg.Left = append(tg.Left, "isolated/nohz_full "+iso.String())
		set = set.Difference(iso)
	}
	if ex := set.Intersection(opt.Exclude); !ex.IsEmpty() {
		name := opt.ExcludeAs
		if name == "" {
			name = "--exclude"
		}
		tg.Left = append(tg.Left, name+" "+ex.String())
		set = set.Difference(ex)
	}
	if set.IsEmpty() {
		return tg, fmt.Errorf("%s: %w: %s without %s is empty", nic.Name, ErrNoCPUs, tg.Source, strings.Join(tg.Left, ", "))
	}
	tg.CPUs = set
	return tg, nil
}

func orNone(s cpuset.Set, known bool) string {
	if !known {
		return "local_cpulist absent"
	}
	return "local_cpulist " + s.String()
}

// spreadOrder returns the online CPUs of cpus in the order spread hands
// them out: the first thread of every physical core (cores in order of
// their lowest CPU, alternating between L3 groups when every core's L3 is
// known), then the second thread of every core, and so on.
func spreadOrder(h *topology.Host, cpus cpuset.Set) []int {
	type core struct {
		id, l3  int
		threads []int
	}
	cores := make([]core, 0, cpus.Len())
	at := make(map[int]int, cpus.Len()) // core id -> index in cores
	for id := range cpus.All() {
		c, ok := h.CPU(id)
		if !ok || !c.Online {
			continue
		}
		cid := h.CoreOf(id)
		i, seen := at[cid]
		if !seen {
			i = len(cores)
			at[cid] = i
			cores = append(cores, core{id: cid, l3: c.L3.Or(-1)})
		}
		cores[i].threads = append(cores[i].threads, id) // ascending: cpus.All is
	}
	slices.SortFunc(cores, func(a, b core) int { return a.id - b.id })

	// Alternate L3 groups: round-robin over groups in order of their first
	// core, each group's cores in core order.
	l3Known := len(cores) > 0
	for _, c := range cores {
		if c.l3 < 0 {
			l3Known = false
			break
		}
	}
	if l3Known {
		var groups [][]core
		gi := map[int]int{}
		for _, c := range cores {
			i, ok := gi[c.l3]
			if !ok {
				i = len(groups)
				gi[c.l3] = i
				groups = append(groups, nil)
			}
			groups[i] = append(groups[i], c)
		}
		if len(groups) > 1 {
			cores = cores[:0:0]
			for k := 0; ; k++ {
				added := false
				for _, g := range groups {
					if k < len(g) {
						cores = append(cores, g[k])
						added = true
					}
				}
				if !added {
					break
				}
			}
		}
	}

	order := make([]int, 0, cpus.Len())
	for pass := 0; ; pass++ {
		added := false
		for _, c := range cores {
			if pass < len(c.threads) {
				order = append(order, c.threads[pass])
				added = true
			}
		}
		if !added {
			break
		}
	}
	return order
}
