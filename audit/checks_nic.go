package audit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/irq"
	"github.com/irqnuma/irqnuma/topology"
)

// pinFix is the irqnuma command that moves a NIC's queue IRQs onto its
// own node, one per physical core.
func pinFix(nic string) string { return "irqnuma irq pin " + nic }

// checkNICNode: nic-node-unknown. numa_node -1 on a host with more than
// one node; says whether local_cpulist still tells the local CPUs.
func (a *auditor) checkNICNode(c *nicCtx) {
	if c.nic.Node >= 0 || len(a.h.Nodes) < 2 {
		return
	}
	if c.nic.Inferred && (c.nic.PCI == "" || c.nic.PCIAbsent) {
		a.inferredNICNode(c)
		return
	}
	f := Finding{Check: CheckNICNodeUnknown, Severity: SeverityWarning, NIC: c.nic.Name,
		Subject: fmt.Sprintf("%s numa_node", c.nic.Name),
		Fix:     "the firmware gives the device no node (ACPI _PXM): update the BIOS or enable its PCI NUMA reporting; until then find the slot's socket in the board manual"}
	dev := c.nic.PCI
	if dev == "" {
		dev = c.nic.Device
	}
	if c.loc.Known() {
		f.CPUs = c.loc.CPUs
		if c.loc.Node >= 0 {
			f.Nodes = []int{c.loc.Node}
		}
		f.Message = fmt.Sprintf("%s (%s) has numa_node -1 on a %d-node host; its local_cpulist %s (%s) is used as its locality for the other checks",
			c.nic.Name, dev, len(a.h.Nodes), c.loc.CPUs.List(), nodeOnly(c.loc))
	} else {
		why := "no local_cpulist"
		if c.nic.HasLocal {
			why = fmt.Sprintf("local_cpulist %s names every CPU", c.nic.LocalCPUs.List())
		}
		f.Message = fmt.Sprintf("%s (%s) has numa_node -1 on a %d-node host and %s: its locality is unknown, so its IRQs and processes are not called local or remote",
			c.nic.Name, dev, len(a.h.Nodes), why)
	}
	a.add(f)
}

// inferredNICNode: nic-node-unknown for a NIC inferred from IRQ names
// whose PCI function the tree lacks, so numa_node was never read: its
// locality is the node its IRQs were allocated on, or unknown.
func (a *auditor) inferredNICNode(c *nicCtx) {
	n := c.nic
	f := Finding{Check: CheckNICNodeUnknown, NIC: n.Name, Subject: n.Name + " numa_node",
		Fix: "capture /sys/class/net and the PCI functions it links to (numa_node, local_cpulist)"}
	why := fmt.Sprintf("the tree has no PCI function %s", n.PCI)
	if n.PCI == "" {
		why = "its IRQ names and chips give no PCI address"
	} else {
		f.Fix = fmt.Sprintf("capture /sys/bus/pci/devices/%s and the folder it links to (numa_node, local_cpulist)", n.PCI)
	}
	if c.loc.Source == "irq node" {
		f.Severity, f.CPUs, f.Nodes = SeverityInfo, c.loc.CPUs, []int{c.loc.Node}
		f.Message = fmt.Sprintf("%s is known from IRQ names and %s, so its numa_node is unknown; all %d of its IRQs were allocated on node %d (/proc/irq/N/node), which is used as its locality for the other checks",
			n.Name, why, len(c.irqs), c.loc.Node)
	} else {
		f.Severity = SeverityWarning
		f.Message = fmt.Sprintf("%s is known from IRQ names and %s, so its numa_node is unknown, and its IRQs' /proc/irq/N/node name no single node: its locality is unknown, so its IRQs and processes are not called local or remote",
			n.Name, why)
	}
	a.add(f)
}

// checkIRQPlacement: irq-remote and isolated-irq, per queue IRQ.
func (a *auditor) checkIRQPlacement(c *nicCtx) {
	isolated := a.h.IsolatedCPUs()
	for _, q := range c.queues {
		where, ok := c.where[q.IRQ]
		if !ok {
			continue
		}
		if c.loc.Known() && !a.h.Online.IsEmpty() {
			a.irqRemote(c, q, where)
		}
		// Delivered there: the effective CPUs say so, or the requested
		// mask leaves no other CPU.
		if hit := where.Intersection(isolated); !hit.IsEmpty() && (c.byEffective[q.IRQ] || where.IsSubsetOf(isolated)) {
			nodes, _ := a.h.NodesOf(hit)
			a.add(Finding{Check: CheckIsolatedIRQ, Severity: SeverityWarning, NIC: c.nic.Name,
				Subject: irqSubject(q), IRQ: []int{q.IRQ}, CPUs: hit, Nodes: nodes.IDs(),
				Message: fmt.Sprintf("%s of %s is delivered to isolated %s (%s): the interrupt and its softirq run where other work was meant to run alone",
					irqSubject(q), c.nic.Name, cpusWord(hit), a.isolationKinds(hit)),
				Group: "are delivered to isolated %s (" + a.isolationKinds(hit) + "): the interrupts and their softirqs run where other work was meant to run alone",
				Fix:   c.fix(fixForIRQ(c.ifname, q, pinFix(c.ifname)+"  # it leaves isolated and nohz_full CPUs out"))})
		}
	}
	if !c.loc.Known() && len(c.where) > 0 && len(a.h.Nodes) > 1 {
		a.notChecked(c.nic.Name, string(CheckIRQRemote), fmt.Sprintf("%s's locality is unknown: its IRQs are not called local or remote", c.nic.Name))
	}
}

// isolationKinds says which kinds of isolation cover cpus and where each
// was read: "isolcpus, nohz_full" (sysfs, or a host built by hand), or
// "isolcpus managed_irq, nohz_full from the kernel command line", or
// both groups joined by "; ".
func (a *auditor) isolationKinds(cpus cpuset.Set) string {
	from := a.h.IsolationFrom
	kinds := []struct {
		name string
		set  cpuset.Set
		src  topology.Source
	}{
		{"isolcpus", a.h.Isolated, from.Isolated},
		{"isolcpus managed_irq", a.h.ManagedIRQ, from.ManagedIRQ},
		{"nohz_full", a.h.NohzFull, from.NohzFull},
	}
	var read, cmdline []string
	for _, k := range kinds {
		switch {
		case !cpus.Intersects(k.set):
		case k.src == topology.SourceCmdline:
			cmdline = append(cmdline, k.name)
		default:
			read = append(read, k.name)
		}
	}
	var parts []string
	if len(read) > 0 {
		parts = append(parts, strings.Join(read, ", "))
	}
	if len(cmdline) > 0 {
		parts = append(parts, strings.Join(cmdline, ", ")+" from the kernel command line")
	}
	return strings.Join(parts, "; ")
}

func (a *auditor) irqRemote(c *nicCtx, q *irq.IRQ, where cpuset.Set) {
	local := c.loc.CPUs
	f := Finding{Check: CheckIRQRemote, NIC: c.nic.Name, Subject: irqSubject(q), IRQ: []int{q.IRQ},
		Fix: c.fix(fixForIRQ(c.ifname, q, pinFix(c.ifname)))}
	req := a.online(q.Affinity)
	switch remote := where.Difference(local); {
	case c.byEffective[q.IRQ] && remote.Equal(where):
		f.Severity, f.CPUs = SeverityError, remote
		f.Message = fmt.Sprintf("%s of %s is delivered to %s, off the NIC's %s", irqSubject(q), c.nic.Name,
			a.describeRemote(remote, local), NodeName(c.loc))
		f.Group = a.groupRemote("are delivered to", remote, local, ", off the NIC's "+NodeName(c.loc))
	case c.byEffective[q.IRQ] && !remote.IsEmpty():
		f.Severity, f.CPUs = SeverityWarning, remote
		f.Message = fmt.Sprintf("%s of %s is delivered to CPUs %s, of which %s is off the NIC's %s", irqSubject(q), c.nic.Name,
			where.List(), a.describeRemote(remote, local), NodeName(c.loc))
	case c.byEffective[q.IRQ]:
		reqRemote := req.Difference(local)
		if !q.HasAffinity || reqRemote.IsEmpty() {
			return
		}
		f.Severity, f.CPUs = SeverityWarning, reqRemote
		f.Message = fmt.Sprintf("%s of %s is delivered to local CPU %s, but its requested mask %s also reaches %s: the kernel may move it there",
			irqSubject(q), c.nic.Name, where.List(), q.Affinity.List(), a.describeRemote(reqRemote, local))
	case where.IsEmpty():
		return
	case remote.Equal(where):
		f.Severity, f.CPUs = SeverityError, remote
		f.Message = fmt.Sprintf("%s of %s may only go to %s, off the NIC's %s (effective CPU unknown)", irqSubject(q), c.nic.Name,
			a.describeRemote(remote, local), NodeName(c.loc))
		f.Group = a.groupRemote("may only go to", remote, local, ", off the NIC's "+NodeName(c.loc)+" (effective CPUs unknown)")
	case !remote.IsEmpty():
		f.Severity, f.CPUs = SeverityWarning, remote
		f.Message = fmt.Sprintf("%s of %s has requested mask %s, which reaches %s (effective CPU unknown)", irqSubject(q), c.nic.Name,
			q.Affinity.List(), a.describeRemote(remote, local))
	default:
		return
	}
	nodes, _ := a.h.NodesOf(f.CPUs)
	f.Nodes = nodes.IDs()
	a.add(f)
}

// fixForIRQ is the fix for a misplaced IRQ: fix, or for a kernel-managed
// IRQ what can be done instead.
func fixForIRQ(nic string, q *irq.IRQ, fix string) string {
	if q.Managed {
		return fmt.Sprintf("kernel-managed: its affinity cannot be changed; keep traffic off this queue with `ethtool -X %s` (RSS indirection) or fewer queues with `ethtool -L %s`", nic, nic)
	}
	return fix
}

// checkSharedCPU: irq-shared-cpu. Two or more queue IRQs delivered to
// the same single CPU while local CPUs without any of them remain.
func (a *auditor) checkSharedCPU(c *nicCtx) {
	byCPU := map[int][]*irq.IRQ{}
	for _, q := range c.queues {
		w, ok := c.where[q.IRQ]
		if !ok || w.Len() != 1 {
			continue
		}
		cpu, _ := w.Min()
		byCPU[cpu] = append(byCPU[cpu], q)
	}
	pool, where := a.h.Online, "online CPUs"
	if c.loc.Known() {
		pool, where = a.online(c.loc.CPUs), "local CPUs"
	}
	// Isolated CPUs (any kind, sysfs or command line) are no place for
	// queue IRQs: they neither count in an even spread nor are offered as
	// free.
	if iso := pool.Intersection(a.h.IsolatedCPUs()); !iso.IsEmpty() {
		pool, where = pool.Difference(iso), strings.Replace(where, " CPUs", " non-isolated CPUs", 1)
	}
	free := pool.Difference(c.irqCPUs)
	if free.IsEmpty() {
		return
	}
	placed := 0
	for _, qs := range byCPU {
		placed += queueCount(qs)
	}
	if placed > pool.Len() {
		a.unevenShare(c, byCPU, pool, free, where, placed)
		return
	}
	for _, cpu := range slices.Sorted(maps.Keys(byCPU)) {
		qs := byCPU[cpu]
		if queueCount(qs) < 2 {
			continue // one queue's rx and tx vectors belong together
		}
		ns := irqNumbers(qs)
		var names []string
		for _, q := range qs {
			names = append(names, irqSubject(q))
		}
		verb := "both land"
		if len(qs) > 2 {
			verb = "all land"
		}
		a.add(Finding{Check: CheckIRQSharedCPU, Severity: SeverityWarning, NIC: c.nic.Name,
			Subject: fmt.Sprintf("%s on CPU %d", irqsSubjectList(ns), cpu), IRQ: ns,
			CPUs: cpuset.New(cpu), Nodes: nodeIDs(a.h.NodeOf(cpu)),
			Message: fmt.Sprintf("%s %s on CPU %d while %s none of %s's queue IRQs (%s)",
				joinAnd(names), verb, cpu, servesNone(free.Len(), where), c.nic.Name, free.List()),
			Fix: c.fix(sharedFix(c.ifname, qs))})
	}
}

// unevenShare reports, when a NIC has more queue IRQs than CPUs to put
// them on (so some sharing cannot be avoided), the CPUs that take more
// than an even spread would give them while others take none: one
// finding for the NIC.
func (a *auditor) unevenShare(c *nicCtx, byCPU map[int][]*irq.IRQ, pool, free cpuset.Set, where string, placed int) {
	even := (placed + pool.Len() - 1) / pool.Len()
	var over []int
	var qs []*irq.IRQ
	var parts []string
	cpus := slices.Sorted(maps.Keys(byCPU))
	slices.SortStableFunc(cpus, func(x, y int) int { return queueCount(byCPU[y]) - queueCount(byCPU[x]) })
	for _, cpu := range cpus {
		n := queueCount(byCPU[cpu])
		if n <= even {
			continue
		}
		over = append(over, cpu)
		qs = append(qs, byCPU[cpu]...)
		if len(parts) < 4 {
			parts = append(parts, fmt.Sprintf("CPU %d takes %d", cpu, n))
		}
	}
	if len(over) == 0 {
		return
	}
	if more := len(over) - len(parts); more == 1 {
		parts = append(parts, fmt.Sprintf("1 more CPU takes more than %d", even))
	} else if more > 1 {
		parts = append(parts, fmt.Sprintf("%d more CPUs take more than %d", more, even))
	}
	set := cpuset.New(over...)
	nodes, _ := a.h.NodesOf(set)
	a.add(Finding{Check: CheckIRQSharedCPU, Severity: SeverityWarning, NIC: c.nic.Name,
		Subject: fmt.Sprintf("%d queues on %d %s", placed, pool.Len(), where), IRQ: irqNumbers(qs), CPUs: set, Nodes: nodes.IDs(),
		Message: fmt.Sprintf("%s has %d queues for %d %s, so an even spread puts at most %d on each; instead %s, while %s none (%s)",
			c.nic.Name, placed, pool.Len(), where, even, strings.Join(parts, ", "), servesNone(free.Len(), where), free.List()),
		Fix: c.fix(sharedFix(c.ifname, qs))})
}

// sharedFix is the fix for IRQs sharing a CPU.
func sharedFix(nic string, qs []*irq.IRQ) string {
	fix := pinFix(nic)
	for _, q := range qs {
		if q.Managed {
			fix = fixForIRQ(nic, q, fix)
		}
	}
	return fix
}

// queueCount is the number of distinct queues among a NIC's queue IRQs:
// the rx and tx vectors of one queue (virtio input.0/output.0,
// eth0-rx-0/eth0-tx-0) count once.
func queueCount(qs []*irq.IRQ) int {
	seen := map[int]bool{}
	for _, q := range qs {
		seen[q.Owner.Queue] = true
	}
	return len(seen)
}

// irqsSubjectList is "IRQs 286, 290".
func irqsSubjectList(ns []int) string {
	if len(ns) == 1 {
		return fmt.Sprintf("IRQ %d", ns[0])
	}
	return "IRQs " + intsList(ns, false)
}

// servesNone is "1 local CPU serves" or "17 local CPUs serve".
func servesNone(n int, where string) string {
	if n == 1 {
		return "1 " + strings.TrimSuffix(where, "s") + " serves"
	}
	return fmt.Sprintf("%d %s serve", n, where)
}

func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func nodeIDs(n int) []int {
	if n < 0 {
		return []int{}
	}
	return []int{n}
}

// checkManaged: irq-managed. Queue IRQs whose affinity the kernel
// manages.
func (a *auditor) checkManaged(c *nicCtx) {
	var managed []*irq.IRQ
	for _, q := range c.queues {
		if q.Managed {
			managed = append(managed, q)
		}
	}
	if len(managed) == 0 {
		return
	}
	ns := irqNumbers(managed)
	a.add(Finding{Check: CheckIRQManaged, Severity: SeverityInfo, NIC: c.nic.Name, Subject: irqsSubject(ns), IRQ: ns,
		Message: fmt.Sprintf("%d of %s's %d queue IRQs are kernel-managed (read-only smp_affinity): neither irqnuma nor irqbalance can move them",
			len(managed), c.nic.Name, len(c.queues)),
		Fix: c.fix(fmt.Sprintf("choose which queues carry traffic instead: `ethtool -L %s` (queue count), `ethtool -X %s` (RSS indirection)", c.ifname, c.ifname))})
}

// checkIrqbalance: irqbalance-active. irqbalance runs and does not ban
// the NIC's (movable) IRQs.
func (a *auditor) checkIrqbalance(c *nicCtx) {
	ib := a.opts.Irqbalance
	switch {
	case len(c.irqs) == 0:
		return
	case ib == nil:
		a.notChecked("", string(CheckIrqbalance), "irqbalance was not read")
		return
	case !ib.ProcessesKnown:
		a.notChecked("", string(CheckIrqbalance), "no process folders under /proc: whether irqbalance runs is unknown")
		return
	case !ib.Running:
		return
	}
	driver, ok := a.opts.PCIDrivers[c.nic.PCI]
	if !ok || c.nic.PCI == "" {
		driver = c.nic.Driver
	}
	var free []*irq.IRQ
	for _, q := range c.irqs {
		if q.Managed {
			continue
		}
		if banned, _ := ib.IRQBanned(q.IRQ, driver, q.Name); !banned {
			free = append(free, q)
		}
	}
	if len(free) == 0 {
		return
	}
	ns := irqNumbers(free)
	var onBanned []int
	for _, q := range free {
		if w, ok := c.where[q.IRQ]; ok && ib.CPUsBanned(w) {
			onBanned = append(onBanned, q.IRQ)
		}
	}
	pids := make([]string, len(ib.PIDs))
	for i, p := range ib.PIDs {
		pids[i] = fmt.Sprint(p)
	}
	are := "are"
	if len(free) == 1 {
		are = "is"
	}
	msg := fmt.Sprintf("irqbalance (PID %s) is running and %d of %s's %d IRQs %s not banned from it (--banirq, --banmod): it will rewrite their affinity, undoing any pinning",
		strings.Join(pids, ", "), len(free), c.nic.Name, len(c.irqs), are)
	if len(onBanned) > 0 {
		msg += fmt.Sprintf("; %s sit on CPUs it bans (%s from %s) and will be moved off them", irqsSubjectList(onBanned), ib.BannedCPUs.List(), ib.BannedCPUsFrom)
	}
	if ib.PolicyScript != "" {
		msg += fmt.Sprintf(" (its --policyscript %s may ban some; irqnuma does not run it)", ib.PolicyScript)
	}
	lines := ib.BanConfig(ns, cpuset.Set{})
	fix := strings.Join(lines[1:], " ")
	if f, ok := strings.CutPrefix(lines[0], "# in "); ok {
		fix = "set " + fix + " in " + f
	}
	pid := 0
	if len(ib.PIDs) > 0 {
		pid = ib.PIDs[0]
	}
	a.add(Finding{Check: CheckIrqbalance, Severity: SeverityWarning, NIC: c.nic.Name, Subject: "irqbalance: " + irqsSubject(ns),
		IRQ: ns, PID: pid, Message: msg, Fix: fix})
}

// checkSteering: rps-remote and xps-remote. Queues whose rps_cpus or
// xps_cpus include CPUs off the NIC's node.
func (a *auditor) checkSteering(c *nicCtx) {
	if len(c.nic.Queues) == 0 {
		a.notChecked(c.nic.Name, "rps-remote, xps-remote", fmt.Sprintf("no /sys/class/net/%s/queues: RPS and XPS steering unknown", c.nic.Name))
		return
	}
	known := false
	for _, kind := range []string{"rx", "tx"} {
		var idx []int
		var remote cpuset.Set
		for _, q := range c.nic.Queues {
			if q.Kind != kind || !q.Known {
				continue
			}
			known = true
			if !c.loc.Known() || q.CPUs.IsEmpty() {
				continue
			}
			if r := q.CPUs.Difference(c.loc.CPUs); !r.IsEmpty() {
				idx = append(idx, q.Index)
				remote = remote.Union(r)
			}
		}
		if len(idx) == 0 {
			continue
		}
		check, file := CheckRPSRemote, "rps_cpus"
		fix := fmt.Sprintf(`m=$(irqnuma mask --nic %s --format mask) && echo "$m" | tee %s`, c.ifname, queueFiles(c.ifname, kind, idx, file))
		what := units.Choose(len(idx), "steers received packets to", "steer received packets to")
		if kind == "tx" {
			check, file = CheckXPSRemote, "xps_cpus"
			fix = pinFix(c.ifname) + " --xps"
			what = units.Choose(len(idx), "takes packets sent from", "take packets sent from")
		}
		nodes, _ := a.h.NodesOf(remote)
		qs := "queue"
		if len(idx) > 1 {
			qs = "queues"
		}
		a.add(Finding{Check: check, Severity: SeverityWarning, NIC: c.nic.Name,
			Subject: fmt.Sprintf("%s %s %s", kind, qs, cpuset.New(idx...).List()), CPUs: remote, Nodes: nodes.IDs(),
			Message: fmt.Sprintf("%s %s %s %s (%s) %s %s, off the NIC's %s", c.nic.Name, kind, qs, cpuset.New(idx...).List(), file, what,
				a.describeRemote(remote, c.loc.CPUs), NodeName(c.loc)),
			Fix: c.fix(fix)})
	}
	if !known {
		a.notChecked(c.nic.Name, "rps-remote, xps-remote", fmt.Sprintf("no readable rps_cpus or xps_cpus under /sys/class/net/%s/queues", c.nic.Name))
	} else if !c.loc.Known() && len(a.h.Nodes) > 1 {
		a.notChecked(c.nic.Name, "rps-remote, xps-remote", fmt.Sprintf("%s's locality is unknown: steering CPUs are not called local or remote", c.nic.Name))
	}
}

// queueFiles is /sys/class/net/eth0/queues/rx-{0,2}/rps_cpus.
func queueFiles(nic, kind string, idx []int, file string) string {
	if len(idx) == 1 {
		return fmt.Sprintf("/sys/class/net/%s/queues/%s-%d/%s", nic, kind, idx[0], file)
	}
	return fmt.Sprintf("/sys/class/net/%s/queues/%s-{%s}/%s", nic, kind, intsList(idx, false), file)
}

// checkQueueCount: queues-vs-cpus. More queues than local online CPUs,
// or fewer than half the local online cores. A queue's rx and tx vectors
// count as one queue.
func (a *auditor) checkQueueCount(c *nicCtx) {
	if len(c.queues) == 0 || !c.loc.Known() {
		return
	}
	// Isolated CPUs are no place for a queue: they do not count.
	local := a.online(c.loc.CPUs).Difference(a.h.IsolatedCPUs())
	cpusWord := "local online CPUs"
	if a.online(c.loc.CPUs).Intersects(a.h.IsolatedCPUs()) {
		cpusWord = "local online CPUs not isolated"
	}
	cores := len(a.h.Cores(local))
	n := queueCount(c.queues)
	what := units.Plural(n, "queue", "queues")
	if n != len(c.queues) {
		what += fmt.Sprintf(" (%d queue IRQs)", len(c.queues))
	}
	var msg, fix string
	switch {
	case local.IsEmpty():
		return
	case n > local.Len():
		msg = fmt.Sprintf("%s has %s for %d %s: some CPUs must take several queues, or queues go remote",
			c.nic.Name, what, local.Len(), cpusWord)
		fix = fmt.Sprintf("ethtool -L %s combined %d  # or rx N tx N, as the driver counts queues", c.ifname, local.Len())
	case 2*n < cores:
		msg = fmt.Sprintf("%s has %s for %d local online cores (%d CPUs): multi-stream tests may be limited by too few queues",
			c.nic.Name, what, cores, local.Len())
		fix = fmt.Sprintf("ethtool -l %s; ethtool -L %s combined %d  # -l shows the maximum", c.ifname, c.ifname, cores)
	default:
		return
	}
	a.add(Finding{Check: CheckQueuesVsCPUs, Severity: SeverityInfo, NIC: c.nic.Name,
		Subject: units.Plural(n, "queue", "queues"), CPUs: local, Nodes: nodeIDs(c.loc.Node), Message: msg, Fix: c.fix(fix)})
}

// checkGovernor: cpu-governor. Local CPUs whose cpufreq governor is not
// performance.
func (a *auditor) checkGovernor(c *nicCtx) {
	if !c.loc.Known() {
		return
	}
	if a.opts.Governor == nil {
		a.notChecked(c.nic.Name, string(CheckCPUGovernor), "cpufreq governors were not read")
		return
	}
	local := a.online(c.loc.CPUs)
	byGov := map[string][]int{}
	seen := 0
	for cpu := range local.All() {
		g, ok := a.governors[cpu]
		if !ok {
			var err error
			if g, err = a.opts.Governor(cpu); err != nil {
				a.notChecked(c.nic.Name, string(CheckCPUGovernor), err.Error())
				return
			}
			a.governors[cpu] = g
		}
		if g == "" {
			continue
		}
		seen++
		if g != "performance" {
			byGov[g] = append(byGov[g], cpu)
		}
	}
	if seen == 0 {
		a.notChecked("", string(CheckCPUGovernor), "no cpufreq/scaling_governor for the NICs' local CPUs (no cpufreq driver, or not captured)")
		return
	}
	if len(byGov) == 0 {
		return
	}
	var all cpuset.Set
	var parts []string
	for _, g := range slices.Sorted(maps.Keys(byGov)) {
		set := cpuset.New(byGov[g]...)
		all = all.Union(set)
		parts = append(parts, fmt.Sprintf("%s on CPUs %s", g, set.List()))
	}
	a.add(Finding{Check: CheckCPUGovernor, Severity: SeverityInfo, NIC: c.nic.Name,
		Subject: "governor of local CPUs", CPUs: all, Nodes: nodeIDs(c.loc.Node),
		Message: fmt.Sprintf("%d of %s's %d local CPUs do not use the performance governor (%s): clock ramp-up adds run-to-run variance",
			all.Len(), c.nic.Name, local.Len(), strings.Join(parts, "; ")),
		Fix: fmt.Sprintf("cpupower -c %s frequency-set -g performance", all.List())})
}

// checkIOMMU: iommu-mode for a NIC whose IOMMU group type is known. NICs
// without it are judged host-wide by checkHostIOMMU.
func (a *auditor) checkIOMMU(c *nicCtx) {
	g, ok := a.opts.IOMMUGroups[c.nic.PCI]
	if c.nic.PCI == "" || !ok || g.ID < 0 || g.Type == "" {
		a.hostIOMMUNeeded = true
		return
	}
	if !g.Translating() {
		return
	}
	a.add(Finding{Check: CheckIOMMUMode, Severity: SeverityInfo, NIC: c.nic.Name,
		Subject: fmt.Sprintf("IOMMU group %d", g.ID),
		Message: fmt.Sprintf("%s (%s) is in IOMMU group %d whose default domain is %s: every DMA address is translated; results can differ from an iommu=pt host",
			c.nic.Name, c.nic.PCI, g.ID, g.Type),
		Fix: "to compare with passthrough, boot with iommu=pt (or set /sys/kernel/iommu_groups/N/type to identity with the device unbound)"})
}

// checkHostIOMMU: iommu-mode host-wide, when some audited NIC's IOMMU
// group type is unknown: whether an IOMMU is active from /sys/class/iommu
// and the groups, its mode from the kernel command line, and the command
// line alone when the tree has neither folder (topology.ResolveIOMMUMode).
func (a *auditor) checkHostIOMMU() {
	if !a.hostIOMMUNeeded {
		return
	}
	m := a.opts.IOMMU
	mode := topology.ResolveIOMMUMode(m, a.opts.Cmdline)
	var msg string
	switch {
	case mode.Mode == "passthrough" || mode.Mode == "off":
		return
	case mode.Mode == "unknown" && m.Known():
		a.notChecked("", string(CheckIOMMUMode), "an IOMMU is active but there is no /proc/cmdline: its mode is unknown")
		return
	case mode.Mode == "unknown":
		a.notChecked("", string(CheckIOMMUMode), "no /sys/class/iommu or /sys/kernel/iommu_groups: whether an IOMMU translates DMA is unknown")
		return
	case !m.Known() && mode.Mode == "translated":
		msg = fmt.Sprintf("the kernel command line asks for translation (%s) and the tree has no /sys/class/iommu to show an IOMMU active: DMA is translated wherever one is",
			mode.Param)
	case !m.Known():
		msg = fmt.Sprintf("the kernel command line turns the IOMMU on (%s) without iommu=pt or iommu.passthrough=1, and the tree has no /sys/class/iommu to confirm it: DMA is translated unless the kernel was built to default to passthrough",
			mode.Param)
	case mode.Mode == "translated":
		msg = fmt.Sprintf("an IOMMU is active (%s) and the kernel command line asks for translation (%s): every DMA address is translated", iommuUnits(m), mode.Param)
	default:
		msg = fmt.Sprintf("an IOMMU is active (%s) and the kernel command line has no iommu=pt or iommu.passthrough=1: DMA is translated unless the kernel was built to default to passthrough",
			iommuUnits(m))
	}
	a.add(Finding{Check: CheckIOMMUMode, Severity: SeverityInfo, Subject: "IOMMU",
		Message: msg + "; zero-copy and small-packet results can differ from an iommu=pt host",
		Fix:     "to compare with passthrough, boot with iommu=pt (Intel: intel_iommu=on iommu=pt)"})
}

// iommuUnits is "dmar0, dmar1; 40 IOMMU groups".
func iommuUnits(m *topology.IOMMU) string {
	what := fmt.Sprintf("%d IOMMU groups", m.Groups)
	if len(m.Units) > 0 {
		what = fmt.Sprintf("%s; %s", strings.Join(m.Units, ", "), what)
	}
	return what
}
