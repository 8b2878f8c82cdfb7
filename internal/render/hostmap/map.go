// Package hostmap is the picture of a host that `irqnuma map` draws: the
// model (Build: nodes, cores, where each NIC queue IRQ and watched thread
// lands, conflicts and remote placements) and its two renderings, a
// terminal grid (WriteText) and a standalone SVG (WriteSVG).
package hostmap

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Map is the picture of a host as data: its nodes grouped by package, each
// node's cores and threads, which NIC queue IRQs land on each CPU, where
// watched threads run, and what stands out (remote placements, conflicts).
// The terminal renderer (WriteText) and the SVG renderer (WriteSVG) both
// draw it; `irqnuma map -o json` emits it. Fields are added, never renamed.
type Map struct {
	Packages []Package `json:"packages"`
	// UnknownNICs are the NICs whose node is not known; they are drawn in
	// a box of their own.
	UnknownNICs []string   `json:"unknown_nics"`
	NICs        []NIC      `json:"nics"`
	Processes   []Process  `json:"processes"`
	Conflicts   []Conflict `json:"conflicts"`
	Remote      []Remote   `json:"remote"`
	Notes       []string   `json:"notes"`
	// AbsentCPUs are possible CPUs the host does not have (no cpuN folder
	// and not online: a VM's hot-plug slots, or a firmware's count). They
	// are not drawn, as they are neither online nor offline CPUs, and a
	// note says so.
	AbsentCPUs cpuset.Set `json:"absent_cpus"`
}

// Package is the nodes of one package (socket). Packages is empty when
// the package is unknown, and holds several ids for a node whose CPUs span
// packages.
type Package struct {
	Packages []int  `json:"packages"`
	Nodes    []Node `json:"nodes"`
}

// Node is one NUMA node; its ID is unknown for the CPUs of no known
// node.
type Node struct {
	ID          unknown.Value[int]   `json:"id"`
	CPUs        cpuset.Set           `json:"cpus"`
	MemoryBytes unknown.Value[int64] `json:"memory_bytes"`
	Cores       []Core               `json:"cores"`
	NICs        []string             `json:"nics"` // the NICs local to this node
}

// Core is one core: its lowest CPU and its threads. An offline CPU,
// whose siblings the kernel no longer reports, is a core of its own.
type Core struct {
	ID      int   `json:"id"`
	Threads []CPU `json:"threads"`
}

// CPU is one logical CPU and what lands on it.
type CPU struct {
	ID       int   `json:"id"`
	Online   bool  `json:"online"`
	Isolated bool  `json:"isolated"`
	IRQs     []IRQ `json:"irqs"` // NIC queue IRQs that land here
	// LastRan holds the watched threads (TIDs) that last ran here;
	// MayRun counts the watched threads allowed to run here.
	LastRan []int `json:"last_ran"`
	MayRun  int   `json:"may_run"`
	// Remote: a queue IRQ here is off its NIC's local CPUs. Conflict: two
	// queues of one NIC land here alone, or a watched thread may run or
	// last ran on this queue CPU. Requested: an IRQ here is placed by its
	// requested affinity: its effective affinity is unknown, or a move
	// to the request is pending, or it is not started.
	Remote    bool `json:"remote"`
	Conflict  bool `json:"conflict"`
	Requested bool `json:"requested"`
	// NoRSS: every queue IRQ here serves a queue that gets no RSS
	// traffic.
	NoRSS bool `json:"no_rss,omitempty"`
	// Label is the cell text both renderers draw, markers included.
	Label string `json:"label"`
}

// IRQ is one queue IRQ landing on a CPU.
type IRQ struct {
	IRQ       int            `json:"irq"`
	NIC       string         `json:"nic"`
	Queue     int            `json:"queue"`
	Dir       interrupts.Dir `json:"dir,omitempty"`
	Requested bool           `json:"requested"` // placed by the requested affinity, not the effective one
	// Landing is how its CPUs are known (irq.IRQ.Landing): "effective",
	// "pending" (a move to the request is pending), "requested" (no
	// effective affinity), "inactive" (not started; the request is shown).
	Landing irq.Land `json:"landing"`
	Remote  bool     `json:"remote"` // this CPU is not local to the NIC
	// NoRSS: the NIC's RSS table names its queue in none of its entries
	// and no flow rule sends to it, so it gets no RSS traffic (absent
	// when the table is unknown or names the queue).
	NoRSS bool `json:"no_rss,omitempty"`
}

// NIC is one NIC as the picture shows it.
type NIC struct {
	Name string `json:"name"`
	// Key is the letter(s) of its queue IRQs in cells: "q" when one NIC
	// has queue IRQs, "a", "b"... when several do, two letters each ("aa",
	// "ab"...) when more than 52 do; "" when it has none.
	Key       string                                 `json:"key"`
	Driver    string                                 `json:"driver"`
	PCI       string                                 `json:"pci"`
	Node      unknown.Value[int]                     `json:"node"`     // the node it is local to
	Locality  unknown.Value[topology.LocalitySource] `json:"locality"` // how Node/LocalCPUs are known
	LocalCPUs cpuset.Set                             `json:"local_cpus"`
	RxQueues  unknown.Value[int]                     `json:"rx_queues"`
	TxQueues  unknown.Value[int]                     `json:"tx_queues"`
	Inferred  bool                                   `json:"inferred,omitempty"`
	// PCIAbsent: PCI comes from IRQ names; the tree has no such function.
	PCIAbsent bool  `json:"pci_absent,omitempty"`
	QueueIRQs []int `json:"queue_irqs"`
	OtherIRQs []int `json:"other_irqs"`
	// QueueCPUs is where its queue IRQs land; UnplacedIRQs are queue IRQs
	// whose affinity the tree does not give.
	QueueCPUs    cpuset.Set `json:"queue_cpus"`
	UnplacedIRQs []int      `json:"unplaced_irqs"`
	RemoteIRQs   []int      `json:"remote_irqs"`
	SharedIRQs   []int      `json:"shared_irqs"` // queue IRQs sharing a CPU with another queue
	// NoRSSIRQs are the queue IRQs whose queue gets no RSS traffic (see
	// IRQ.NoRSS); absent when the RSS table is unknown.
	NoRSSIRQs []int `json:"no_rss_irqs,omitempty"`
}

// Process is one watched process.
type Process struct {
	PID      int        `json:"pid"`
	Comm     string     `json:"comm"`
	Threads  int        `json:"threads"`
	Allowed  cpuset.Set `json:"allowed"`   // union of its threads' allowed CPUs
	LastCPUs cpuset.Set `json:"last_cpus"` // CPUs its threads last ran on
	// NICs, Attribution and How say which NICs it uses and how that was
	// found (nicuse.Use); [], unknown and its reason when Options.Uses does
	// not say.
	NICs        []string                          `json:"nics"`
	Attribution unknown.Value[nicuse.Attribution] `json:"attribution"`
	How         []string                          `json:"how"`
}

// ConflictKind is what conflicts on a CPU.
type ConflictKind string

// Conflict kinds.
const (
	ConflictKindSharedCPU ConflictKind = "queues-share-cpu" // two queues of one NIC on one CPU
	ConflictKindThread    ConflictKind = "thread-on-queue-cpu"
)

// Conflict is one conflict, on one CPU.
type Conflict struct {
	Kind   ConflictKind       `json:"kind"`
	CPU    int                `json:"cpu"`
	Node   unknown.Value[int] `json:"node"`
	NIC    string             `json:"nic,omitempty"`
	IRQs   []int              `json:"irqs"`
	Queues []int              `json:"queues,omitempty"`
	// PIDs is the watched process of a thread-on-queue-cpu conflict (one
	// conflict per process and CPU). LastRan holds its threads that last
	// ran here; without them its threads only may run here.
	PIDs    []int `json:"pids,omitempty"`
	LastRan []int `json:"last_ran,omitempty"`
}

// Remote is one queue IRQ landing off its NIC's local CPUs.
type Remote struct {
	IRQ     int                `json:"irq"`
	NIC     string             `json:"nic"`
	Queue   int                `json:"queue"`
	CPUs    cpuset.Set         `json:"cpus"`  // the CPUs that are not local
	Nodes   []int              `json:"nodes"` // their nodes
	NICNode unknown.Value[int] `json:"nic_node"`
}

// Options selects what Build draws.
type Options struct {
	// NICs narrows the picture to these NICs; nil means every NIC.
	NICs []string
	// Uses says which NICs each watched process uses (nicuse.All).
	Uses []nicuse.Use
	// Findings are the audit's findings on the same host, IRQs and
	// processes (audit.Read's State.Findings). The conflicts drawn are
	// theirs: irq-shared-cpu and proc-irq-overlap, on the CPUs where the
	// IRQs they name land; the map judges none itself.
	Findings []audit.Finding
	// Steer is the NICs' steering (audit.State.Steer): a queue its NIC's
	// RSS table leaves out is marked; nil marks none.
	Steer *steer.Host
}

// Build computes the picture of h from its IRQ table and the watched
// processes. An IRQ lands where Place (irq.IRQ.Landing) says: its
// effective affinity, or its request when that is all the tree gives or a
// move is pending, and then the cell says so. It only reads what it is
// given: its conflicts are the audit's (Options.Findings).
func Build(h *topology.Host, t *irq.Table, procs []*proc.Process, opt Options) *Map {
	b := &mapBuilder{h: h, t: t, m: &Map{Notes: append(slices.Clone(h.Notes), t.Notes...)},
		cells: make(map[int]*CPU, len(h.CPUs)), judged: indexFindings(opt.Findings), steer: opt.Steer}
	for _, c := range h.CPUs {
		b.cells[c.ID] = &CPU{ID: c.ID, Online: c.Online, Isolated: c.Isolated}
	}
	for i := range h.NICs {
		if len(opt.NICs) == 0 || slices.Contains(opt.NICs, h.NICs[i].Name) {
			b.placeNIC(&h.NICs[i])
		}
	}
	b.noteOutside()
	b.noteAbsent()
	assignKeys(b.m.NICs)
	b.markSharedCPUs()
	b.placeThreads(procs, opt.Uses)
	m := b.m
	slices.SortStableFunc(m.Conflicts, func(a, b Conflict) int {
		if a.CPU != b.CPU {
			return a.CPU - b.CPU
		}
		return strings.Compare(string(a.Kind), string(b.Kind))
	})

	keys := map[string]string{}
	for _, n := range m.NICs {
		keys[n.Name] = n.Key
	}
	for _, c := range b.cells {
		c.NoRSS = len(c.IRQs) > 0 && !slices.ContainsFunc(c.IRQs, func(mi IRQ) bool { return !mi.NoRSS })
		c.Label = cellLabel(c, keys)
	}
	m.Packages = groupNodes(h, b.cells)

	// Each NIC under the node it is local to.
	for _, n := range m.NICs {
		placed := false
		if node, ok := n.Node.Get(); ok {
			for pi := range m.Packages {
				for ni := range m.Packages[pi].Nodes {
					if nd := &m.Packages[pi].Nodes[ni]; unknown.Is(nd.ID, node) {
						nd.NICs = append(nd.NICs, n.Name)
						placed = true
					}
				}
			}
		}
		if !placed {
			m.UnknownNICs = append(m.UnknownNICs, n.Name)
		}
	}
	m.fillNil()
	return m
}

// mapBuilder holds the cells while Build fills them in.
type mapBuilder struct {
	h       *topology.Host
	t       *irq.Table
	m       *Map
	cells   map[int]*CPU
	judged  map[judgedIRQ][]*audit.Finding
	outside []int // CPUs an affinity names that the host lacks
	steer   *steer.Host
}

// noRSSQueues returns the rx queues of the NIC the RSS table names in
// none of its entries and no flow rule sends to; nil when its table is
// unknown.
func (b *mapBuilder) noRSSQueues(name string) map[int]bool {
	n := b.steer.NIC(name)
	if n == nil || n.RSS == nil || len(n.RSS.Table) == 0 {
		return nil
	}
	share := n.RSS.Share()
	ruled := map[uint64]bool{}
	if n.Rules != nil {
		for _, r := range n.Rules.Rules {
			if r.Action == steer.RuleActionQueue && r.Context == nil && r.VF == 0 {
				ruled[r.Queue] = true
			}
		}
	}
	out := map[int]bool{}
	for _, q := range b.t.ForNIC(name) {
		if o := q.Owner; o.Kind == irq.KindQueue && o.Queue.Known() && o.Dir != interrupts.DirTX && share[uint32(o.Queue.Or(0))] == 0 && !ruled[uint64(o.Queue.Or(0))] {
			out[o.Queue.Or(0)] = true
		}
	}
	return out
}

// placeNIC puts a NIC's queue IRQs on the cells they land on and notes
// the remote ones.
func (b *mapBuilder) placeNIC(n *topology.NIC) {
	h := b.h
	loc := h.Locality(n)
	mn := NIC{Name: n.Name, Driver: n.Driver, PCI: n.PCI, Node: loc.Node, Locality: loc.Source,
		LocalCPUs: loc.CPUs, RxQueues: n.RxQueues, TxQueues: n.TxQueues, Inferred: n.Inferred,
		PCIAbsent: n.PCIAbsent, QueueIRQs: []int{}, OtherIRQs: []int{}, UnplacedIRQs: []int{}, RemoteIRQs: []int{}, SharedIRQs: []int{}}
	var queueCPUs []int
	noRSS := b.noRSSQueues(n.Name)
	for _, q := range b.t.ForNIC(n.Name) {
		if q.Owner.Kind != irq.KindQueue {
			mn.OtherIRQs = append(mn.OtherIRQs, q.IRQ)
			continue
		}
		mn.QueueIRQs = append(mn.QueueIRQs, q.IRQ)
		quiet := noRSS[q.Owner.Queue.Or(-1)] && q.Owner.Dir != interrupts.DirTX
		if quiet {
			mn.NoRSSIRQs = append(mn.NoRSSIRQs, q.IRQ)
		}
		p := audit.Place(h, q)
		where, ok := p.Where.Get()
		if !ok || where.IsEmpty() {
			mn.UnplacedIRQs = append(mn.UnplacedIRQs, q.IRQ)
			continue
		}
		_, how := q.Landing()
		requested := !unknown.Is(how, irq.LandEffective)
		var remote []int
		local, localKnown := p.LocalCPUs.Get()
		for cpu := range where.All() {
			c, ok := b.cells[cpu]
			if !ok {
				b.outside = append(b.outside, cpu)
				continue
			}
			mi := IRQ{IRQ: q.IRQ, NIC: n.Name, Queue: q.Owner.Queue.Or(-1), Dir: q.Owner.Dir,
				Requested: requested, Landing: how.Or(""), Remote: localKnown && !local.Contains(cpu), NoRSS: quiet}
			c.IRQs = append(c.IRQs, mi)
			c.Requested = c.Requested || requested
			if mi.Remote {
				c.Remote = true
				remote = append(remote, cpu)
			}
			queueCPUs = append(queueCPUs, cpu)
		}
		if len(remote) > 0 {
			rs := cpuset.New(remote...)
			nodes, _ := h.NodesOf(rs)
			b.m.Remote = append(b.m.Remote, Remote{IRQ: q.IRQ, NIC: n.Name, Queue: q.Owner.Queue.Or(-1),
				CPUs: rs, Nodes: nodes.IDs(), NICNode: loc.Node})
			mn.RemoteIRQs = append(mn.RemoteIRQs, q.IRQ)
		}
	}
	mn.QueueCPUs = cpuset.New(queueCPUs...)
	b.m.NICs = append(b.m.NICs, mn)
}

// noteOutside says which CPUs named by an affinity the host does not have.
func (b *mapBuilder) noteOutside() {
	if len(b.outside) > 0 {
		b.m.Notes = append(b.m.Notes, fmt.Sprintf("queue IRQ affinities name %s, which this host does not have; not drawn",
			countedList(cpuset.New(b.outside...), "CPU", "CPUs")))
	}
}

// noteAbsent says which possible CPUs the host does not have and so are
// not drawn.
func (b *mapBuilder) noteAbsent() {
	ids := make([]int, 0, len(b.h.CPUs))
	for _, c := range b.h.CPUs {
		ids = append(ids, c.ID)
	}
	absent := b.h.Possible.Difference(cpuset.New(ids...))
	b.m.AbsentCPUs = absent
	if !absent.IsEmpty() {
		b.m.Notes = append(b.m.Notes, fmt.Sprintf("%d possible CPUs are not present (no cpuN folder, not online): %s; not drawn",
			absent.Len(), absent.List()))
	}
}

// judgedIRQ is one IRQ of a NIC as a check of the audit names it.
type judgedIRQ struct {
	check audit.Check
	nic   string
	irq   int
}

// indexFindings indexes the audit's conflict findings by the IRQs they
// name.
func indexFindings(fs []audit.Finding) map[judgedIRQ][]*audit.Finding {
	idx := map[judgedIRQ][]*audit.Finding{}
	for i := range fs {
		f := &fs[i]
		if f.Check != audit.CheckIRQSharedCPU && f.Check != audit.CheckProcIRQOverlap {
			continue
		}
		for _, n := range f.IRQ {
			k := judgedIRQ{f.Check, f.NIC, n}
			idx[k] = append(idx[k], f)
		}
	}
	return idx
}

// judgedOn returns the findings of check that name IRQ mi on CPU cpu.
func (b *mapBuilder) judgedOn(check audit.Check, mi IRQ, cpu int) []*audit.Finding {
	var out []*audit.Finding
	for _, f := range b.judged[judgedIRQ{check, mi.NIC, mi.IRQ}] {
		if f.CPUs.Contains(cpu) {
			out = append(out, f)
		}
	}
	return out
}

// markSharedCPUs draws the audit's irq-shared-cpu findings: on each CPU
// a finding names, the queues of its NIC whose IRQs it names.
func (b *mapBuilder) markSharedCPUs() {
	for _, c := range sortedCells(b.cells) {
		byNIC := map[string][]IRQ{}
		var order []string
		for _, mi := range c.IRQs {
			if len(b.judgedOn(audit.CheckIRQSharedCPU, mi, c.ID)) == 0 {
				continue
			}
			if _, ok := byNIC[mi.NIC]; !ok {
				order = append(order, mi.NIC)
			}
			byNIC[mi.NIC] = append(byNIC[mi.NIC], mi)
		}
		for _, nic := range order {
			var queues, ns []int
			for _, mi := range byNIC[nic] {
				ns = append(ns, mi.IRQ)
				if !slices.Contains(queues, mi.Queue) {
					queues = append(queues, mi.Queue)
				}
			}
			slices.Sort(queues)
			c.Conflict = true
			b.m.Conflicts = append(b.m.Conflicts, Conflict{Kind: ConflictKindSharedCPU, CPU: c.ID,
				Node: b.h.NodeOf(c.ID), NIC: nic, IRQs: ns, Queues: queues})
			for i := range b.m.NICs {
				if b.m.NICs[i].Name == nic {
					b.m.NICs[i].SharedIRQs = append(b.m.NICs[i].SharedIRQs, ns...)
					slices.Sort(b.m.NICs[i].SharedIRQs)
				}
			}
		}
	}
}

// placeThreads marks where the watched threads may run and last ran, and
// the audit's conflicts of each process (markThreads).
func (b *mapBuilder) placeThreads(procs []*proc.Process, uses []nicuse.Use) {
	// on[cpu][pid] holds the process's threads that last ran on cpu; the
	// key alone says some thread may run there.
	on := map[int]map[int][]int{}
	mark := func(cpu, pid int) map[int][]int {
		if on[cpu] == nil {
			on[cpu] = map[int][]int{}
		}
		if _, ok := on[cpu][pid]; !ok {
			on[cpu][pid] = nil
		}
		return on[cpu]
	}
	for _, p := range procs {
		none := nicuse.NotRead(p.PID, p.Comm)
		mp := Process{PID: p.PID, Comm: p.Comm, Threads: len(p.Threads), NICs: []string{}, Attribution: none.Attribution, How: []string{}}
		if i := slices.IndexFunc(uses, func(u nicuse.Use) bool { return u.PID == p.PID }); i >= 0 {
			mp.NICs, mp.Attribution, mp.How = uses[i].NICs, uses[i].Attribution, uses[i].How
		}
		var last []int
		allowed := p.Allowed
		for _, th := range p.Threads {
			allowed = allowed.Union(th.Allowed)
			for cpu := range th.Allowed.All() {
				if c, ok := b.cells[cpu]; ok {
					c.MayRun++
					mark(cpu, p.PID)
				}
			}
			cpu, ok := th.LastCPU.Get()
			if !ok {
				continue
			}
			last = append(last, cpu)
			if c, ok := b.cells[cpu]; ok {
				c.LastRan = append(c.LastRan, th.TID)
				m := mark(cpu, p.PID)
				m[p.PID] = append(m[p.PID], th.TID)
			}
		}
		mp.Allowed, mp.LastCPUs = allowed, cpuset.New(last...)
		b.m.Processes = append(b.m.Processes, mp)
	}
	for _, c := range sortedCells(b.cells) {
		b.markThreads(c, on[c.ID])
	}
}

// markThreads draws the audit's proc-irq-overlap findings on cell c: a
// conflict per process a finding names on c's CPU, with the IRQs it names
// there; on holds the process's threads that last ran on c.
func (b *mapBuilder) markThreads(c *CPU, on map[int][]int) {
	byPID := map[int][]int{}
	for _, mi := range c.IRQs {
		for _, f := range b.judgedOn(audit.CheckProcIRQOverlap, mi, c.ID) {
			if !slices.Contains(byPID[f.PID], mi.IRQ) {
				byPID[f.PID] = append(byPID[f.PID], mi.IRQ)
			}
		}
	}
	for _, pid := range slices.Sorted(maps.Keys(byPID)) {
		c.Conflict = true
		tids := slices.Sorted(slices.Values(on[pid]))
		b.m.Conflicts = append(b.m.Conflicts, Conflict{Kind: ConflictKindThread, CPU: c.ID, Node: b.h.NodeOf(c.ID),
			IRQs: byPID[pid], PIDs: []int{pid}, LastRan: tids})
	}
}

// keyLetters are the letters of the NIC keys, in order.
const keyLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// assignKeys gives each NIC with queue IRQs its cell key: "q" when one
// NIC has queue IRQs; "a", "b"... "Z" when up to 52 do; beyond that every
// key has two letters ("aa", "ab"... "ZZ"), or as many as it takes, so
// keys stay distinct and of one length for any number of NICs, and a cell
// such as "2ab" or "ab3" reads one way.
func assignKeys(nics []NIC) {
	var with []int
	for i, n := range nics {
		if len(n.QueueIRQs) > 0 {
			with = append(with, i)
		}
	}
	if len(with) == 1 {
		nics[with[0]].Key = "q"
		return
	}
	width := 1
	for capacity := len(keyLetters); capacity < len(with); capacity *= len(keyLetters) {
		width++
	}
	for k, i := range with {
		key := make([]byte, width)
		for j, v := width-1, k; j >= 0; j, v = j-1, v/len(keyLetters) {
			key[j] = keyLetters[v%len(keyLetters)]
		}
		nics[i].Key = string(key)
	}
}

// cellLabel is the text of a CPU's cell: its queue IRQs ("q3" for one,
// "2q" for two of one NIC, "3+" for several NICs), its watched threads
// ("P" last ran here, "p" may run here), then the markers: "-" no RSS
// traffic for any of its queues, "!" conflict,
// "*" remote, "?" requested affinity, "i" isolated; "x" for an offline
// CPU; "." when nothing applies.
func cellLabel(c *CPU, keys map[string]string) string {
	var b strings.Builder
	if !c.Online {
		b.WriteByte('x')
	}
	switch n := len(c.IRQs); {
	case n == 1:
		b.WriteString(keys[c.IRQs[0].NIC])
		b.WriteString(strconv.Itoa(c.IRQs[0].Queue))
	case n > 1:
		b.WriteString(strconv.Itoa(n))
		key := keys[c.IRQs[0].NIC]
		for _, mi := range c.IRQs[1:] {
			if keys[mi.NIC] != key {
				key = "+"
				break
			}
		}
		b.WriteString(key)
	}
	if c.NoRSS {
		b.WriteByte('-')
	}
	switch {
	case len(c.LastRan) > 0:
		b.WriteByte('P')
	case c.MayRun > 0:
		b.WriteByte('p')
	}
	if c.Conflict {
		b.WriteByte('!')
	}
	if c.Remote {
		b.WriteByte('*')
	}
	if c.Requested {
		b.WriteByte('?')
	}
	if c.Isolated {
		b.WriteByte('i')
	}
	if b.Len() == 0 {
		return "."
	}
	return b.String()
}

func sortedCells(cells map[int]*CPU) []*CPU {
	out := make([]*CPU, 0, len(cells))
	for _, c := range cells {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *CPU) int { return a.ID - b.ID })
	return out
}

// groupNodes builds the nodes with their cores and groups them by package.
func groupNodes(h *topology.Host, cells map[int]*CPU) []Package {
	type group struct {
		pkgs  []int
		nodes []Node
	}
	var groups []*group
	find := func(pkgs []int) *group {
		for _, g := range groups {
			if slices.Equal(g.pkgs, pkgs) {
				return g
			}
		}
		g := &group{pkgs: pkgs}
		groups = append(groups, g)
		return g
	}
	byNode := map[int][]topology.CPU{}
	for _, c := range h.CPUs {
		node := c.Node.Or(-1)
		byNode[node] = append(byNode[node], c)
	}
	add := func(id unknown.Value[int], cpus cpuset.Set, mem unknown.Value[int64]) {
		nd := Node{ID: id, CPUs: cpus, NICs: []string{}, Cores: []Core{}, MemoryBytes: mem}
		var pkgs []int
		cores := map[int]*Core{}
		var order []int
		for _, c := range byNode[id.Or(-1)] {
			if pkg, ok := c.Package.Get(); ok && !slices.Contains(pkgs, pkg) {
				pkgs = append(pkgs, pkg)
			}
			key := h.CoreOf(c.ID)
			mc, ok := cores[key]
			if !ok {
				mc = &Core{ID: key}
				cores[key] = mc
				order = append(order, key)
			}
			mc.Threads = append(mc.Threads, *cells[c.ID])
		}
		slices.Sort(order)
		for _, k := range order {
			nd.Cores = append(nd.Cores, *cores[k])
		}
		slices.Sort(pkgs)
		g := find(pkgs)
		g.nodes = append(g.nodes, nd)
	}
	for _, n := range h.Nodes {
		ids := n.CPUs.IDs()
		for _, c := range byNode[n.ID] {
			ids = append(ids, c.ID)
		}
		add(unknown.Of(n.ID), cpuset.New(ids...), n.MemoryBytes)
	}
	if unk := byNode[-1]; len(unk) > 0 {
		ids := make([]int, len(unk))
		for i, c := range unk {
			ids[i] = c.ID
		}
		noNode := unknown.Because(unknown.KindNotReported, "CPUs "+cpuset.New(ids...).List()+" are in no node's cpulist")
		add(unknown.Not[int](noNode), cpuset.New(ids...), unknown.Not[int64](noNode))
	}
	// Known packages by id, then unknown; a group's nodes stay by id,
	// the unknown node last.
	slices.SortStableFunc(groups, func(a, b *group) int {
		ka, kb := 1<<30, 1<<30
		if len(a.pkgs) > 0 {
			ka = a.pkgs[0]
		}
		if len(b.pkgs) > 0 {
			kb = b.pkgs[0]
		}
		if ka != kb {
			return ka - kb
		}
		return len(a.pkgs) - len(b.pkgs)
	})
	out := make([]Package, 0, len(groups))
	for _, g := range groups {
		pk := g.pkgs
		if pk == nil {
			pk = []int{}
		}
		out = append(out, Package{Packages: pk, Nodes: g.nodes})
	}
	return out
}

// fillNil makes empty lists [] rather than null in JSON.
func (m *Map) fillNil() {
	for _, p := range []*[]string{&m.UnknownNICs, &m.Notes} {
		if *p == nil {
			*p = []string{}
		}
	}
	if m.NICs == nil {
		m.NICs = []NIC{}
	}
	if m.Processes == nil {
		m.Processes = []Process{}
	}
	if m.Conflicts == nil {
		m.Conflicts = []Conflict{}
	}
	if m.Remote == nil {
		m.Remote = []Remote{}
	}
	for pi := range m.Packages {
		for ni := range m.Packages[pi].Nodes {
			for ci := range m.Packages[pi].Nodes[ni].Cores {
				th := m.Packages[pi].Nodes[ni].Cores[ci].Threads
				for ti := range th {
					if th[ti].IRQs == nil {
						th[ti].IRQs = []IRQ{}
					}
					if th[ti].LastRan == nil {
						th[ti].LastRan = []int{}
					}
				}
			}
		}
	}
}

// NIC returns the named NIC of the map.
func (m *Map) NIC(name string) (NIC, bool) {
	for _, n := range m.NICs {
		if n.Name == name {
			return n, true
		}
	}
	return NIC{}, false
}

// CPU returns the cell of a CPU.
func (m *Map) CPU(id int) (CPU, bool) {
	for _, p := range m.Packages {
		for _, n := range p.Nodes {
			for _, c := range n.Cores {
				for _, th := range c.Threads {
					if th.ID == id {
						return th, true
					}
				}
			}
		}
	}
	return CPU{}, false
}

// MarshalJSON writes an unknown attribution as null with its reason.
func (p Process) MarshalJSON() ([]byte, error) {
	type plain Process
	return unknown.MarshalObject(plain(p))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (p *Process) UnmarshalJSON(b []byte) error {
	type plain Process
	return unknown.UnmarshalObject(b, (*plain)(p))
}

// MarshalJSON writes an unknown memory size as null with its reason.
func (n Node) MarshalJSON() ([]byte, error) {
	type plain Node
	return unknown.MarshalObject(plain(n))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (n *Node) UnmarshalJSON(b []byte) error {
	type plain Node
	return unknown.UnmarshalObject(b, (*plain)(n))
}

// MarshalJSON writes an unknown node or queue count as null with its
// reason.
func (n NIC) MarshalJSON() ([]byte, error) {
	type plain NIC
	return unknown.MarshalObject(plain(n))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (n *NIC) UnmarshalJSON(b []byte) error {
	type plain NIC
	return unknown.UnmarshalObject(b, (*plain)(n))
}

// MarshalJSON writes an unknown NIC node as null with its reason.
func (r Remote) MarshalJSON() ([]byte, error) {
	type plain Remote
	return unknown.MarshalObject(plain(r))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (r *Remote) UnmarshalJSON(b []byte) error {
	type plain Remote
	return unknown.UnmarshalObject(b, (*plain)(r))
}

// MarshalJSON writes an unknown node as null with its reason.
func (c Conflict) MarshalJSON() ([]byte, error) {
	type plain Conflict
	return unknown.MarshalObject(plain(c))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (c *Conflict) UnmarshalJSON(b []byte) error {
	type plain Conflict
	return unknown.UnmarshalObject(b, (*plain)(c))
}
