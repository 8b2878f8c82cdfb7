package audit

import (
	"fmt"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Where queue IRQs land: irq-remote and isolated-irq.
const (
	CheckIRQRemote   Check = "irq-remote"
	CheckIsolatedIRQ Check = "isolated-irq"
)

func init() {
	register(&check{ids: []Check{CheckIRQRemote, CheckIsolatedIRQ}, needs: []fact{factAffinity}, nic: (*auditor).checkIRQPlacement})
}

// checkIRQPlacement: irq-remote and isolated-irq, per queue IRQ.
func (a *auditor) checkIRQPlacement(c *nicCtx) error {
	if len(c.queues) > 0 && len(c.where) == 0 {
		// Where the NIC's traffic is handled, what the audit exists to
		// say, is unknown: a gate must not pass on that.
		return &notChecked{sev: SeverityWarning, nic: c.nic.Name, subject: string(CheckIRQRemote),
			why: fmt.Sprintf("no /proc/irq/N affinity files for %s's queue IRQs: placement unknown", c.nic.Name)}
	}
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
		return skip(c.nic.Name, string(CheckIRQRemote), fmt.Sprintf("%s's locality is unknown: its IRQs are not called local or remote", c.nic.Name))
	}
	return nil
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
		src  unknown.Value[topology.Source]
	}{
		{"isolcpus", a.h.Isolated, from.Isolated},
		{"isolcpus managed_irq", a.h.ManagedIRQ, from.ManagedIRQ},
		{"nohz_full", a.h.NohzFull, from.NohzFull},
	}
	var read, cmdline []string
	for _, k := range kinds {
		switch {
		case !cpus.Intersects(k.set):
		case unknown.Is(k.src, topology.SourceCmdline):
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
	req := a.online(q.Affinity.Or(cpuset.Set{}))
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
		if !q.Affinity.Known() || reqRemote.IsEmpty() {
			return
		}
		f.Severity, f.CPUs = SeverityWarning, reqRemote
		f.Message = fmt.Sprintf("%s of %s is delivered to local CPU %s, but its requested mask %s also reaches %s: the kernel may move it there",
			irqSubject(q), c.nic.Name, where.List(), q.Affinity.Or(cpuset.Set{}).List(), a.describeRemote(reqRemote, local))
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
			q.Affinity.Or(cpuset.Set{}).List(), a.describeRemote(remote, local))
	default:
		return
	}
	nodes, _ := a.h.NodesOf(f.CPUs)
	f.Nodes = nodes.IDs()
	weighByTable(c, q, &f)
	a.add(f)
}

// weighByTable weighs a remote queue IRQ by the share of the RSS table
// its queue holds, when the table is known: the message says the share,
// and a queue the table leaves out (and no flow rule targets) gets no
// RSS traffic, so its placement is worth knowing, not a warning.
func weighByTable(c *nicCtx, q *irq.IRQ, f *Finding) {
	s := c.steer
	if !s.tableKnown() || q.Owner == nil || !q.Owner.Queue.Known() || q.Owner.Dir == "tx" {
		return
	}
	qn := uint32(q.Owner.Queue.Or(0))
	if s.share[qn] > 0 {
		f.Message += "; its queue takes " + s.shareOf(qn)
		return
	}
	if len(s.ruleTargets()[qn]) > 0 {
		f.Message += "; its queue takes no RSS traffic but flow rules send to it"
		return
	}
	f.Severity = SeverityInfo
	f.Message += "; its queue gets no RSS traffic (the table names it in none of its " + fmt.Sprint(s.entries) + " entries)"
	if f.Group != "" {
		f.Group += "; their queues get no RSS traffic"
	}
}
