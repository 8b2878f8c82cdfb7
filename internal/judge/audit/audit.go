package audit

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/irqbalance"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/judge/zc"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Severity says how much a finding matters for a network benchmark.
type Severity string

// Severities, least to most severe.
const (
	SeverityInfo    Severity = "info"    // worth knowing before comparing runs
	SeverityWarning Severity = "warning" // likely to cost throughput or to be undone
	SeverityError   Severity = "error"   // traffic is handled off the NIC's node now
)

// Rank orders severities: 1 info, 2 warning, 3 error, 0 for anything else.
func (s Severity) Rank() int {
	switch s {
	case SeverityInfo:
		return 1
	case SeverityWarning:
		return 2
	case SeverityError:
		return 3
	}
	return 0
}

// parseSeverity parses "info", "warning" or "error".
func parseSeverity(s string) (Severity, error) {
	if v := Severity(s); v.Rank() > 0 {
		return v, nil
	}
	return "", fmt.Errorf("severity %q: want info, warning or error", s)
}

// Check is a check's id. Check ids are a contract: scripts, alerts and
// the exporter key on them, so they are added, never renamed.
type Check string

// CheckNotChecked says a check could not be made because the tree lacks
// a file; its subject names the check. It is info, but a warning when
// where a NIC's IRQs land could not be judged, and an error when no NIC
// could be audited at all: a gate never passes on an audit that checked
// nothing. Every other id is declared in its check's file.
const CheckNotChecked Check = "not-checked"

// Finding is one thing the audit found. Its JSON form is a contract:
// fields are added, never renamed or re-typed. The structured fields are
// always present: "" for no NIC, [] for no IRQs, threads or nodes, 0 for
// no process, "" for no CPUs.
type Finding struct {
	Check    Check      `json:"check"`
	Severity Severity   `json:"severity"`
	Subject  string     `json:"subject"` // what it is about, for people: "IRQ 290 (queue 6)"
	Message  string     `json:"message"` // what is wrong, with the numbers
	Fix      string     `json:"fix"`     // what to run or change
	NIC      string     `json:"nic"`
	IRQ      []int      `json:"irq"`
	PID      int        `json:"pid"`
	TID      []int      `json:"tid"`
	CPUs     cpuset.Set `json:"cpus"`
	Nodes    []int      `json:"nodes"`
	// Group is what the finding says of its IRQ, written for several
	// IRQs with %s where their CPUs go ("are delivered to %s (node 0),
	// off the NIC's node 1"); "" when it stands alone. Findings of one
	// NIC with the same check, severity, fix and Group say the same thing
	// of different IRQs: a table shows them as one row, the JSON keeps
	// one finding per IRQ.
	Group string `json:"-"`
}

// Options carries what the audit needs beyond topology, IRQs and
// processes. Everything is read by the caller, so Audit itself never
// touches the host; a nil field means "not read" and the checks that need
// it say so with a not-checked finding.
type Options struct {
	// NICs limits the audit to these NICs; nil audits every NIC that has
	// IRQs.
	NICs []string
	// AppCPUs are CPUs kept for the application (Selection.AppCPUs).
	AppCPUs cpuset.Set
	// Absent are the selectors ("--comm iperf3") that matched no running
	// process, and ProcRoot the /proc they were looked for in.
	Absent   []proc.Selector
	ProcRoot string
	// Partial are the selectors that matched processes the tree holds
	// only in part (proc.Match.Partial), with those PIDs.
	Partial []proc.Match
	// Cgroups are what each --cgroup of the selection found: the group
	// (its processes, CPUs, memory nodes, partition), nil when the root
	// holds no such group.
	Cgroups []proc.Match
	// Irqbalance is what irqbalance.Read found.
	Irqbalance *irqbalance.Settings
	// Cmdline is the kernel command line; IOMMU the host's IOMMU state;
	// IOMMUGroups the group of each audited NIC's PCI function, by PCI
	// address.
	Cmdline     *topology.Cmdline
	IOMMU       *topology.IOMMU
	IOMMUGroups map[string]topology.IOMMUGroup
	// Governor returns a CPU's cpufreq governor, "" when it has none
	// (h.Governor, or a stub in tests).
	Governor func(cpu int) (string, error)
	// Uses says which NICs each watched process uses (nicuse.All); a
	// process missing from it is judged as one whose NIC is unknown.
	Uses []nicuse.Use
	// PCIDrivers holds the driver bound to each NIC's PCI function
	// (h.PCIDriver), by PCI address: the name irqbalance matches --banmod
	// against ("virtio-pci" for a virtio NIC). A NIC missing from it is
	// matched by its netdev driver.
	PCIDrivers map[string]string
	// Steer is the steering of the audited NICs (steer.Read): channels,
	// RSS, flow rules, NAPI; nil when not read.
	Steer *steer.Host
	// NAPIThreads holds the napi/IF-N kernel threads of threaded NAPI
	// instances, by PID, as /proc/PID read them (their affinity and last
	// CPU); a thread missing from it could not be read.
	NAPIThreads map[int]*proc.Process
	// ZC are the zero-copy checks of the audited NICs (zc.Check) by NIC,
	// and ZCErr why one could not be made; both nil when the audit was
	// not asked for them (Selection.ZC).
	ZC    map[string]*zc.Report
	ZCErr map[string]error
}

// Run runs every registered check (see check) on the NICs, their IRQs
// and the watched processes, and returns the findings grouped by NIC (NIC names
// ascending, host-wide findings last), worst first within a group. A
// process is judged against the NICs Processes says.
func Run(h *topology.Host, t *irq.Table, procs []*proc.Process, opts Options) []Finding {
	a := &auditor{h: h, t: t, opts: opts, seen: map[string]bool{}, governors: map[int]string{}}
	a.multiNodePackages = multiNodePackages(h)
	nics := a.auditedNICs()
	pns := Processes(nicNames(nics), procs, opts)
	if len(h.Nodes) == 0 {
		a.notCheckedAt(SeverityWarning, "", "locality", "no NUMA nodes under /sys/devices/system/node: nothing can be called local or remote")
	}
	if len(nics) == 0 {
		why := "no NIC with IRQs found"
		if len(t.Notes) > 0 {
			why += " (" + strings.Join(t.Notes, "; ") + "); name a NIC with --nic to check what does not need IRQs"
		}
		if len(h.NICs) == 0 {
			why = "no NICs: the tree has no /sys/class/net entries backed by a device"
		}
		// Nothing was audited: no gate may pass on that.
		a.notCheckedAt(SeverityError, "", "nics", why)
	}
	a.procs, a.pns = procs, pns
	a.runChecks(nics)
	sortFindings(a.out)
	return a.out
}

// auditor collects findings.
type auditor struct {
	h                 *topology.Host
	t                 *irq.Table
	opts              Options
	out               []Finding
	seen              map[string]bool // not-checked (nic, subject) already said
	multiNodePackages bool
	hostIOMMUNeeded   bool
	governors         map[int]string // Governor answers, each CPU asked once
	procs             []*proc.Process
	pns               []ProcessNIC // which NICs each of procs is judged against
}

func (a *auditor) add(f Finding) {
	if f.IRQ == nil {
		f.IRQ = []int{}
	}
	if f.TID == nil {
		f.TID = []int{}
	}
	if f.Nodes == nil {
		f.Nodes = []int{}
	}
	a.out = append(a.out, f)
}

// notChecked says once per NIC (or host, nic "") that a check could not
// be made, and why.
func (a *auditor) notChecked(nic, check, why string) {
	a.notCheckedAt(SeverityInfo, nic, check, why)
}

// notCheckedAt is notChecked for a check whose absence must fail a gate:
// what the audit exists to say (is the NIC's traffic on its node) could
// not be said, so "ready" would be a guess.
func (a *auditor) notCheckedAt(sev Severity, nic, check, why string) {
	fix, ok := notCheckedFixes[check]
	if !ok {
		fix = "run the audit on the live host, or include the missing file in the capture"
	}
	a.notCheckedFix(sev, nic, check, why, fix)
}

// notCheckedFix is notCheckedAt with its own fix.
func (a *auditor) notCheckedFix(sev Severity, nic, check, why, fix string) {
	key := nic + "\x00" + check
	if a.seen[key] {
		return
	}
	a.seen[key] = true
	a.add(Finding{Check: CheckNotChecked, Severity: sev, Subject: check, NIC: nic, Message: why, Fix: fix})
}

// notCheckedFixes says how to make possible what the audit as a whole
// could not judge; a registered check says its own (check.fix).
var notCheckedFixes = map[string]string{
	"locality": "capture /sys/devices/system/node",
	"nics":     "capture /sys/class/net and the PCI functions it links to",
}

// AuditedNICs returns the names of the NICs an audit of h covers: those
// named (that exist), or every NIC that has IRQs in t.
func AuditedNICs(h *topology.Host, t *irq.Table, named []string) []string {
	a := &auditor{h: h, t: t, opts: Options{NICs: named}}
	return nicNames(a.auditedNICs())
}

func nicNames(nics []*topology.NIC) []string {
	out := make([]string, len(nics))
	for i, n := range nics {
		out[i] = n.Name
	}
	return out
}

// auditedNICs returns the NICs to audit: those named, or every NIC that
// has IRQs, by name.
func (a *auditor) auditedNICs() []*topology.NIC { return Audited(a.h, a.t, a.opts.NICs) }

// Audited returns the NICs an audit looks at, by name: those named, or
// every NIC that has IRQs.
func Audited(h *topology.Host, t *irq.Table, named []string) []*topology.NIC {
	var out []*topology.NIC
	if len(named) > 0 {
		names := slices.Clone(named)
		slices.Sort(names)
		for _, name := range slices.Compact(names) {
			if n, ok := h.NICByName(name); ok {
				out = append(out, n)
			}
		}
		return out
	}
	for i := range h.NICs {
		if len(t.ForNIC(h.NICs[i].Name)) > 0 {
			out = append(out, &h.NICs[i])
		}
	}
	return out
}

// queueIRQsOn lists, sorted, the NIC's queue IRQs whose CPUs in by
// (where or whereCores) meet on.
func (c *nicCtx) queueIRQsOn(by map[int]cpuset.Set, on cpuset.Set) []int {
	var irqs []int
	for _, q := range c.queues {
		if w, ok := by[q.IRQ]; ok && w.Intersects(on) {
			irqs = append(irqs, q.IRQ)
		}
	}
	slices.Sort(irqs)
	return irqs
}

// nicCtx is what the checks of one NIC share.
type nicCtx struct {
	nic    *topology.NIC
	loc    topology.Locality
	irqs   []*irq.IRQ // every IRQ of the NIC
	queues []*irq.IRQ // its queue IRQs
	// where holds, per queue IRQ, the CPUs it is delivered to: the
	// effective CPUs when known, else the online CPUs of its requested
	// mask; byEffective says which.
	where       map[int]cpuset.Set
	byEffective map[int]bool
	irqCPUs     cpuset.Set // union of where
	// whereCores holds where plus its SMT siblings, per queue IRQ, and
	// irqCores their union: the cores that service the queue IRQs.
	whereCores map[int]cpuset.Set
	irqCores   cpuset.Set
	localNodes cpuset.Set // the nodes of the local CPUs
	steer      steerCtx   // the NIC's steering
	// ifname is what a fix command names the NIC by: its interface, or
	// "<interface>" for a NIC the tree knows only by its PCI address or
	// virtio device (see fix).
	ifname string
}

// fix returns cmd, a fix naming the NIC by c.ifname. For a NIC without an
// interface name cmd names a placeholder, as ethtool and irqnuma on the
// host take only the interface, and the fix first says how to find it.
func (c *nicCtx) fix(cmd string) string {
	n := c.nic
	if n.HasIfName() {
		return cmd
	}
	by, dir := "its PCI address", "/sys/bus/pci/devices/"+n.PCI+"/net"
	if n.Virtio != "" {
		by, dir = "its virtio device", "/sys/bus/virtio/devices/"+n.Virtio+"/net"
	}
	return fmt.Sprintf("this capture names %s by %s, not by an interface, and the command needs the interface name: on the host, find it with `ls %s`, then run: %s",
		n.Name, by, dir, cmd)
}

func (a *auditor) nicContext(n *topology.NIC) *nicCtx {
	c := &nicCtx{nic: n, loc: a.h.Locality(n), irqs: a.t.ForNIC(n.Name),
		where: map[int]cpuset.Set{}, byEffective: map[int]bool{}, whereCores: map[int]cpuset.Set{}, ifname: n.Name}
	if !n.HasIfName() {
		c.ifname = "<interface>"
	}
	for _, q := range c.irqs {
		if q.Owner.Kind != irq.KindQueue {
			continue
		}
		c.queues = append(c.queues, q)
		// Where it lands, as irq.IRQ.Landing says: effective CPUs outside
		// the request mean a move is pending (x86 moves at the next
		// interrupt; a tree never moves), and the request is then where
		// it will land: certainly so for a single CPU.
		switch where, how := q.Landing(); how.Or("") {
		case irq.LandEffective:
			c.where[q.IRQ], c.byEffective[q.IRQ] = where, true
		case irq.LandPending:
			w := a.online(where)
			c.where[q.IRQ], c.byEffective[q.IRQ] = w, w.Len() == 1
		case irq.LandRequested, irq.LandInactive:
			if aff, ok := q.Affinity.Get(); ok {
				c.where[q.IRQ] = a.online(aff)
			}
		}
		if w, ok := c.where[q.IRQ]; ok {
			c.irqCPUs = c.irqCPUs.Union(w)
			c.whereCores[q.IRQ] = a.h.SiblingsOf(w)
			c.irqCores = c.irqCores.Union(c.whereCores[q.IRQ])
		}
	}
	if c.loc.Known() && a.online(c.loc.CPUs).IsEmpty() {
		// A node without (online) CPUs, as CXL or memory-only nodes
		// are: nothing can be local, so nothing is called remote.
		a.notCheckedAt(SeverityWarning, n.Name, "locality", fmt.Sprintf("%s's %s has no online CPUs: nothing is local to it, so nothing is called remote", n.Name, NodeName(c.loc)))
		why := unknown.NotAs[int](unknown.KindNotApplicable, NodeName(c.loc)+" has no online CPUs")
		c.loc = topology.Locality{Node: why, Source: unknown.Not[topology.LocalitySource](why.Why())}
	}
	if c.loc.Known() {
		c.localNodes, _ = a.h.NodesOf(c.loc.CPUs)
	}
	c.steer = a.steerContext(n.Name)
	if len(c.irqs) == 0 {
		a.notCheckedAt(SeverityWarning, n.Name, "irqs", fmt.Sprintf("no IRQs of %s found in /proc/interrupts or /proc/irq", n.Name))
	} else if len(c.queues) == 0 {
		a.notChecked(n.Name, "queues", fmt.Sprintf("none of %s's %d IRQs is named as a queue vector: queue checks skipped", n.Name, len(c.irqs)))
	}
	return c
}

// online returns the online CPUs of s (all of s when online is unknown).
func (a *auditor) online(s cpuset.Set) cpuset.Set {
	if a.h.Online.IsEmpty() {
		return s
	}
	return s.Intersection(a.h.Online)
}

// queueName is "queue 6", "queue 3 rx", or "" for a non-queue vector.
func queueName(q *irq.IRQ) string {
	if q.Owner == nil || q.Owner.Kind != irq.KindQueue {
		return ""
	}
	s := fmt.Sprintf("queue %d", q.Owner.Queue.Or(-1))
	if q.Owner.Dir != "" {
		s += " " + string(q.Owner.Dir)
	}
	return s
}

// irqSubject is "IRQ 290 (queue 6)".
func irqSubject(q *irq.IRQ) string {
	if qn := queueName(q); qn != "" {
		return fmt.Sprintf("IRQ %d (%s)", q.IRQ, qn)
	}
	return fmt.Sprintf("IRQ %d", q.IRQ)
}

// irqNumbers returns the numbers of qs, ascending.
func irqNumbers(qs []*irq.IRQ) []int {
	out := make([]int, len(qs))
	for i, q := range qs {
		out[i] = q.IRQ
	}
	slices.Sort(out)
	return out
}

// irqsSubject is "IRQs 284-299" or "IRQ 283".
func irqsSubject(ns []int) string {
	if len(ns) == 1 {
		return fmt.Sprintf("IRQ %d", ns[0])
	}
	return "IRQs " + cpuset.New(ns...).List()
}

// nodeName says which node(s) the local CPUs are and how that is known:
// "node 1", "node 1 (from local_cpulist)", "CPUs 8,10-15 (from
// local_cpulist)".
func NodeName(loc topology.Locality) string {
	s := nodeOnly(loc)
	switch loc.Source.Or("") {
	case topology.LocalitySourceLocalCPUList:
		s += " (from local_cpulist)"
	case topology.LocalitySourceIRQNode:
		s += " (from its IRQs' /proc/irq/N/node)"
	}
	return s
}

// nodeOnly is "node 1", or "local CPUs 8,10-15" when no single node holds
// them.
func nodeOnly(loc topology.Locality) string {
	node, ok := loc.Node.Get()
	if !ok {
		return "local CPUs " + loc.CPUs.List()
	}
	return fmt.Sprintf("node %d", node)
}

// multiNodePackages reports whether some package holds CPUs of more than
// one node (AMD NPS2/NPS4, Intel SNC).
func multiNodePackages(h *topology.Host) bool {
	nodeOfPkg := map[int]int{}
	for _, c := range h.CPUs {
		pkg, ok := c.Package.Get()
		node, nodeOK := c.Node.Get()
		if !ok || !nodeOK {
			continue
		}
		if n, ok := nodeOfPkg[pkg]; ok && n != node {
			return true
		}
		nodeOfPkg[pkg] = node
	}
	return false
}

// describeRemote says where remote CPUs are: "CPU 3 (node 0)", "CPUs
// 0-15 (node 0)"; on hosts with several nodes per package it adds "same
// package" or "other package" relative to the local CPUs.
func (a *auditor) describeRemote(remote, local cpuset.Set) string {
	nodes, _ := a.h.NodesOf(remote)
	word := "CPU"
	if remote.Len() > 1 {
		word = "CPUs"
	}
	var parts []string
	for _, n := range nodes.IDs() {
		p := fmt.Sprintf("node %d", n)
		if a.multiNodePackages {
			cpus, _ := a.h.NodeCPUs(n)
			switch a.samePackage(cpus.Intersection(remote), local) {
			case 1:
				p += ", same package"
			case -1:
				p += ", other package"
			}
		}
		parts = append(parts, p)
	}
	if _, unknown := a.h.NodesOf(remote); !unknown.IsEmpty() {
		parts = append(parts, "node unknown for "+unknown.List())
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%s %s", word, remote.List())
	}
	return fmt.Sprintf("%s %s (%s)", word, remote.List(), strings.Join(parts, "; "))
}

// groupRemote is the Group of an IRQ finding about remote CPUs: the CPUs
// left as %s, their nodes (and package) said, and the rest of the
// sentence after them.
func (a *auditor) groupRemote(verb string, remote, local cpuset.Set, rest string) string {
	d := a.describeRemote(remote, local)
	if i := strings.IndexByte(d, '('); i >= 0 {
		d = d[i:]
	} else {
		d = ""
	}
	return strings.TrimSpace(verb+" %s "+d) + rest
}

// samePackage returns 1 when every CPU of cpus shares a package with
// some local CPU, -1 when none does, 0 when mixed or unknown.
func (a *auditor) samePackage(cpus, local cpuset.Set) int {
	pkgs := map[int]bool{}
	for id := range local.All() {
		if c, ok := a.h.CPU(id); ok && c.Package.Known() {
			pkgs[c.Package.Or(0)] = true
		}
	}
	same, other := 0, 0
	for id := range cpus.All() {
		c, ok := a.h.CPU(id)
		switch {
		case !ok || !c.Package.Known():
			return 0
		case pkgs[c.Package.Or(0)]:
			same++
		default:
			other++
		}
	}
	switch {
	case same > 0 && other == 0:
		return 1
	case other > 0 && same == 0:
		return -1
	}
	return 0
}

// sortFindings orders findings by group (NIC name, host-wide last), then
// severity (worst first), check order, first IRQ, PID, subject.
func sortFindings(fs []Finding) {
	first := func(v []int) int {
		if len(v) == 0 {
			return -1
		}
		return v[0]
	}
	slices.SortStableFunc(fs, func(x, y Finding) int {
		if x.NIC != y.NIC {
			if x.NIC == "" {
				return 1
			}
			if y.NIC == "" {
				return -1
			}
			return strings.Compare(x.NIC, y.NIC)
		}
		return cmp.Or(
			cmp.Compare(y.Severity.Rank(), x.Severity.Rank()),
			cmp.Compare(x.Check.Place(), y.Check.Place()),
			cmp.Compare(first(x.IRQ), first(y.IRQ)),
			cmp.Compare(x.PID, y.PID),
			strings.Compare(x.Subject, y.Subject),
		)
	})
}

// Summary counts findings by severity.
type Summary struct {
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
}

// Summarize counts the findings by severity.
func Summarize(fs []Finding) Summary {
	var s Summary
	for _, f := range fs {
		switch f.Severity {
		case SeverityError:
			s.Error++
		case SeverityWarning:
			s.Warning++
		case SeverityInfo:
			s.Info++
		}
	}
	return s
}

// AtOrAbove returns the findings whose severity is at or above min.
func AtOrAbove(fs []Finding, min Severity) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Severity.Rank() >= min.Rank() && min.Rank() > 0 {
			out = append(out, f)
		}
	}
	return out
}

// intsList is "286, 290" (or "286 and 290" with and=true for two).
func intsList(v []int, and bool) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	if and && len(s) >= 2 {
		return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
	}
	return strings.Join(s, ", ")
}
