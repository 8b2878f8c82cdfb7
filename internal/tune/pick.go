package tune

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// Errors Pick wraps, for callers that branch on them.
var (
	// ErrNothingLeft: nothing was left after the filters. The message says
	// what each filter removed.
	ErrNothingLeft = errors.New("no CPUs left")
	// ErrTooFewLeft: fewer CPUs were left than PickRequest.Count asked for.
	ErrTooFewLeft = errors.New("too few CPUs left")
	// ErrNoSuchNode: the requested node does not exist.
	ErrNoSuchNode = usage.New("unknown node")
	// ErrNoSuchCPU: a named CPU is not a possible CPU of the host.
	ErrNoSuchCPU = usage.New("unknown CPU")
	// ErrNICNoIRQs: ExcludeIRQCPUs was asked for a NIC with no IRQs.
	ErrNICNoIRQs = errors.New("no IRQs for NIC")
	// ErrBadPick: the request itself is inconsistent (no source, two
	// sources, ExcludeIRQCPUs without a NIC, a negative count).
	ErrBadPick = usage.New("bad CPU request")
)

// PickRequest says which CPUs to pick. Exactly one source of candidates is
// set: NIC (not ""), Node (not nil) or CPUs (not empty).
type PickRequest struct {
	NIC  string     // the NIC's local CPUs, as topology.Host.Locality says
	Node *int       // a NUMA node's CPUs
	CPUs cpuset.Set // an explicit list

	// Exclude drops these CPUs from the candidates.
	Exclude cpuset.Set
	// ExcludeIRQCPUs drops the CPUs where the NIC's queue IRQs are
	// delivered (their effective affinity) and, with OnePerCore, the SMT
	// siblings of those CPUs: they share the core that runs the softirq.
	ExcludeIRQCPUs bool
	// OnePerCore keeps the lowest-numbered remaining thread of each core.
	OnePerCore bool
	// Count keeps the first Count CPUs in ascending order; 0 keeps all.
	Count int
	// Within keeps only the CPUs a group may use (a --cgroup's); alone,
	// without a NIC, node or list, its CPUs are the candidates.
	Within *Within
}

// Within is a set of CPUs a pick must stay inside, and what it is
// ("cgroup /pods/a (cpuset.cpus.effective)").
type Within struct {
	CPUs cpuset.Set
	From string
}

// Drop is one filter's share of the candidates it removed.
type Drop struct {
	Reason string     `json:"reason"` // "offline", "isolated", "excluded", "outside", "irq", "irq-siblings"
	CPUs   cpuset.Set `json:"cpus"`
}

// Pick is the chosen CPUs and how they were chosen.
type Pick struct {
	CPUs cpuset.Set // the picked CPUs, never empty
	// Nodes are the nodes of CPUs; unknown when some CPU's node is.
	Nodes unknown.Value[cpuset.Set]
	// Source says where the candidates came from: "eth0 local CPUs,
	// node 1 (numa_node)", "node 1", "the CPU list".
	Source     string
	Candidates cpuset.Set // the source's CPUs before any filter
	Excluded   cpuset.Set // candidates the filters removed (union of Drops)
	Drops      []Drop     // what each filter removed, in the order applied
	// IRQCPUs is where the NIC's IRQs land; IRQsChecked says they were
	// looked up (ExcludeIRQCPUs).
	IRQCPUs     cpuset.Set
	IRQsChecked bool
	// Notes say what was unknown or assumed, one line each.
	Notes []string
	// Width is the host's CPU mask width in bits (nr_cpu_ids).
	Width int
}

// pickCPUs chooses CPUs on host h as r asks. t holds the host's IRQs; it
// is needed only with r.ExcludeIRQCPUs and may be nil otherwise.
//
// The candidates are the source's CPUs; then, in order: offline CPUs go;
// isolated CPUs (h.IsolatedCPUs: isolcpus= of any flag and nohz_full=,
// from sysfs or the kernel command line) go unless r.CPUs names them; r.Exclude
// goes; with r.ExcludeIRQCPUs the CPUs of the NIC's queue IRQs go (and
// their siblings under r.OnePerCore); r.OnePerCore keeps the lowest
// remaining thread of each core; r.Count keeps the first Count.
func pickCPUs(h *topology.Host, t *irq.Table, r PickRequest) (*Pick, error) {
	p := &Pick{Width: h.MaxCPUs()}
	if err := p.candidates(h, r); err != nil {
		return nil, err
	}
	left := p.Candidates
	drop := func(reason string, cpus cpuset.Set) {
		gone := left.Intersection(cpus)
		if gone.IsEmpty() {
			return
		}
		left = left.Difference(gone)
		p.Drops = append(p.Drops, Drop{Reason: reason, CPUs: gone})
		p.Excluded = p.Excluded.Union(gone)
	}
	drop("offline", left.Difference(h.Online))
	// Isolated CPUs stay when the user named them: a CPU list, or a
	// group's CPUs as the candidates (a pod's exclusive CPUs often are).
	if r.CPUs.IsEmpty() && !r.withinOnly() {
		drop("isolated", h.IsolatedCPUs())
	}
	drop("excluded", r.Exclude)
	if r.Within != nil {
		drop("outside", left.Difference(r.Within.CPUs))
	}
	beforeIRQ := left
	if r.ExcludeIRQCPUs {
		cpus, err := p.irqCPUs(h, t, r.NIC)
		if err != nil {
			return nil, err
		}
		p.IRQCPUs, p.IRQsChecked = cpus, true
		drop("irq", cpus)
		if r.OnePerCore {
			drop("irq-siblings", h.SiblingsOf(cpus))
		}
	}
	if r.OnePerCore {
		left = pickOnePerCore(h, left)
	}
	if left.IsEmpty() {
		return nil, fmt.Errorf("%w: %s%s%s", ErrNothingLeft, p.explain(), p.irqAdvice(t, r, beforeIRQ), p.notesSuffix())
	}
	if r.Count > 0 {
		if n := left.Len(); n < r.Count {
			return nil, fmt.Errorf("%w: want %d CPUs, %d remain: %s; left %s%s", ErrTooFewLeft, r.Count, n, p.explain(), left, p.notesSuffix())
		}
		left = left.First(r.Count)
	}
	p.CPUs = left
	nodes, notKnown := h.NodesOf(left)
	p.Nodes = unknown.Of(nodes)
	if !notKnown.IsEmpty() {
		note := fmt.Sprintf("NUMA node of CPUs %s unknown", notKnown)
		p.Nodes = unknown.NotAs[cpuset.Set](unknown.KindNotReported, note)
		p.Notes = append(p.Notes, note)
	}
	return p, nil
}

// PickOn reads the host under root, and the NIC's IRQs when
// r.ExcludeIRQCPUs needs them, and picks as PickCPUs does.
func PickOn(fsys kfile.FS, r PickRequest) (*Pick, error) {
	h, err := topology.Read(fsys)
	if err != nil {
		return nil, err
	}
	var t *irq.Table
	if r.ExcludeIRQCPUs {
		if t, err = irq.Load(h, irq.Options{NICs: []string{r.NIC}}); err != nil {
			return nil, err
		}
	}
	return pickCPUs(h, t, r)
}

// sources counts the candidate sources the request names.
func (r PickRequest) sources() int {
	n := 0
	for _, set := range []bool{r.NIC != "", r.Node != nil, !r.CPUs.IsEmpty()} {
		if set {
			n++
		}
	}
	return n
}

// withinOnly reports whether Within is the candidates' only source.
func (r PickRequest) withinOnly() bool { return r.Within != nil && r.sources() == 0 }

// candidates fills in Source and Candidates from the request's source.
func (p *Pick) candidates(h *topology.Host, r PickRequest) error {
	sources := r.sources()
	switch {
	case sources == 0 && r.Within != nil:
		p.Candidates, p.Source = r.Within.CPUs, r.Within.From
		if r.ExcludeIRQCPUs && r.NIC == "" {
			return fmt.Errorf("%w: excluding IRQ CPUs needs the NIC whose IRQs to avoid", ErrBadPick)
		}
		return nil
	case sources == 0:
		return fmt.Errorf("%w: choose the candidate CPUs with a NIC, a node or a CPU list", ErrBadPick)
	case sources > 1:
		return fmt.Errorf("%w: a NIC, a node and a CPU list are alternatives; give one", ErrBadPick)
	case r.ExcludeIRQCPUs && r.NIC == "":
		return fmt.Errorf("%w: excluding IRQ CPUs needs the NIC whose IRQs to avoid", ErrBadPick)
	case r.Count < 0:
		return fmt.Errorf("%w: count %d is negative", ErrBadPick, r.Count)
	}
	switch {
	case r.NIC != "":
		nic, err := h.LookupNIC(r.NIC)
		if err != nil {
			return err
		}
		loc := h.Locality(nic)
		if !loc.Known() {
			local := "none"
			if cpus, ok := nic.LocalCPUs.Get(); ok {
				local = pickOrNone(cpus)
			}
			return localityErrorf(true, "NIC locality unknown: %s has numa_node %d and local_cpulist %s on a host with %d NUMA nodes known; choose the CPUs with --node or --cpus",
				nic.Name, nic.Node.Or(-1), local, len(h.Nodes))
		}
		p.Candidates = loc.CPUs
		p.Source = fmt.Sprintf("%s local CPUs (%s)", nic.Name, loc.Source)
		if node, ok := loc.Node.Get(); ok {
			p.Source = fmt.Sprintf("%s local CPUs, node %d (%s)", nic.Name, node, loc.Source)
		}
	case r.Node != nil:
		cpus, ok := h.NodeCPUs(*r.Node)
		if !ok {
			have := "no NUMA nodes known"
			if ids := h.NodeIDs(); !ids.IsEmpty() {
				have = "nodes " + ids.List()
			}
			return fmt.Errorf("%w %d (this host has %s)", ErrNoSuchNode, *r.Node, have)
		}
		p.Candidates = cpus
		p.Source = "node " + strconv.Itoa(*r.Node)
	default:
		if bad := r.CPUs.Difference(h.Possible); !bad.IsEmpty() {
			return fmt.Errorf("%w: %s %s %s on this host (possible: %s)", ErrNoSuchCPU, units.Choose(bad.Len(), "CPU", "CPUs"), bad, units.Choose(bad.Len(), "does not exist", "do not exist"), h.Possible)
		}
		p.Candidates = r.CPUs
		p.Source = "the CPU list"
	}
	return nil
}

// irqCPUs returns where the NIC's queue IRQs are delivered: each IRQ's
// effective affinity, or its requested affinity when the effective one is
// unknown (said in a note), or both while a move is pending (effective
// outside requested, said in a note). An IRQ with a known but empty effective
// affinity is not active and lands nowhere. A NIC without queue IRQs has
// its other IRQs used instead; a NIC without IRQs is an error.
func (p *Pick) irqCPUs(h *topology.Host, t *irq.Table, nic string) (cpuset.Set, error) {
	if t == nil {
		return cpuset.Set{}, fmt.Errorf("%w: IRQs of %s not loaded", ErrNICNoIRQs, nic)
	}
	all := t.ForNIC(nic)
	var qs []*irq.IRQ
	for _, q := range all {
		if q.Owner.Kind == irq.KindQueue {
			qs = append(qs, q)
		}
	}
	if len(qs) == 0 {
		if len(all) == 0 {
			return cpuset.Set{}, fmt.Errorf("%w: %s has no IRQs in /proc/interrupts or its msi_irqs: where its interrupts land is unknown", ErrNICNoIRQs, nic)
		}
		qs = all
		p.Notes = append(p.Notes, fmt.Sprintf("%s has no queue IRQs: used all its IRQs (%s)", nic, pickIRQList(qs)))
	}
	var cpus cpuset.Set
	var requested, moving, inactive, unknown []*irq.IRQ
	for _, q := range qs {
		switch where, how := q.Landing(); how.Or("") {
		case irq.LandInactive:
			inactive = append(inactive, q)
		case irq.LandEffective:
			cpus = cpus.Union(where)
		case irq.LandPending:
			// x86 moves an IRQ at its next interrupt: it fires once
			// more where it was, then where it was asked to go, which
			// is where its softirq runs from the first packet on.
			cpus = cpus.Union(where)
			moving = append(moving, q)
		case irq.LandRequested:
			cpus = cpus.Union(where)
			requested = append(requested, q)
		default:
			unknown = append(unknown, q)
		}
	}
	if len(requested) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("effective affinity unknown for IRQs %s: excluded their requested CPUs", pickIRQList(requested)))
	}
	switch q := moving; {
	case len(q) == 1:
		p.Notes = append(p.Notes, fmt.Sprintf("IRQ %d is still delivered to CPU %s until its next interrupt, then to %s (a move is pending): excluded %s", q[0].IRQ, q[0].Effective, q[0].Affinity, q[0].Affinity))
	case len(q) > 1:
		var to cpuset.Set
		for _, m := range q {
			to = to.Union(m.Affinity.Or(cpuset.Set{}))
		}
		p.Notes = append(p.Notes, fmt.Sprintf("IRQs %s are still delivered to their old CPUs until their next interrupts, then to %s (moves are pending): excluded %s", pickIRQList(q), to, to))
	}
	if len(inactive) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("IRQs %s have no effective CPU (not active): nothing excluded for them", pickIRQList(inactive)))
	}
	if len(unknown) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("affinity unknown for IRQs %s: their CPUs could not be excluded", pickIRQList(unknown)))
	}
	return cpus, nil
}

// notesSuffix is the pick's notes for an error, which a failed pick
// does not otherwise show: " (note: ...; ...)", or "".
func (p *Pick) notesSuffix() string {
	if len(p.Notes) == 0 {
		return ""
	}
	return " (note: " + strings.Join(p.Notes, "; ") + ")"
}

// irqAdvice says what to do when the NIC's queue IRQs took every CPU
// that was left (before was what the IRQ filter started from): fewer
// queues, or the queues pinned to part of those CPUs first.
func (p *Pick) irqAdvice(t *irq.Table, r PickRequest, before cpuset.Set) string {
	if !r.ExcludeIRQCPUs || before.IsEmpty() || t == nil {
		return ""
	}
	queues := map[int]bool{}
	for _, q := range t.ForNIC(r.NIC) {
		if q.Owner.Kind == irq.KindQueue {
			queues[q.Owner.Queue.Or(-1)] = true
		}
	}
	fewer := fmt.Sprintf("fewer queues (ethtool -L %s combined N", r.NIC)
	if len(queues) > 1 {
		fewer += fmt.Sprintf(", N below %d", len(queues))
	}
	fewer += ")"
	siblings := ""
	if r.OnePerCore {
		siblings = " with their SMT siblings"
	}
	msg := fmt.Sprintf(". %s's queue IRQs%s take all of %s: use %s", r.NIC, siblings, before, fewer)
	if n := before.Len(); n > 1 {
		msg += fmt.Sprintf(", or pin the queues to part of them first (irqnuma irq pin %s --cpus %s) and ask again", r.NIC, before.First(n/2))
	}
	return msg
}

// pickOnePerCore keeps the lowest member of cpus on each core
// (topology's CoreOf: a CPU whose core is unknown is its own core).
func pickOnePerCore(h *topology.Host, cpus cpuset.Set) cpuset.Set {
	seen := make(map[int]bool)
	var keep []int
	for id := range cpus.All() {
		core := h.CoreOf(id)
		if !seen[core] {
			seen[core] = true
			keep = append(keep, id)
		}
	}
	return cpuset.New(keep...)
}

// explain says what the candidates were and what each filter removed.
func (p *Pick) explain() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "candidates %s from %s", pickOrNone(p.Candidates), p.Source)
	for _, d := range p.Drops {
		fmt.Fprintf(&sb, "; %s removed %s", pickDropWords[d.Reason], d.CPUs)
	}
	return sb.String()
}

var pickDropWords = map[string]string{
	"offline":      "offline",
	"isolated":     "isolated/nohz_full",
	"excluded":     "exclude",
	"irq":          "IRQ CPUs",
	"irq-siblings": "IRQ CPUs' SMT siblings",
}

func pickOrNone(s cpuset.Set) string {
	if s.IsEmpty() {
		return "none"
	}
	return s.List()
}

// pickIRQList writes IRQ numbers in list form ("284-299").
func pickIRQList(qs []*irq.IRQ) string {
	ids := make([]int, 0, len(qs))
	for _, q := range qs {
		if q.IRQ >= 0 && q.IRQ <= cpuset.MaxID {
			ids = append(ids, q.IRQ)
		}
	}
	return cpuset.New(ids...).List()
}
