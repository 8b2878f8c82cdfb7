package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Words and fixes the checks of selected control groups share
// (check_cgroup_*.go): every group the selection found is judged, a
// --cgroup's and each container of a --pod's alike.

// groups returns the selection's groups the root holds, in its order.
func (a *auditor) groups() []proc.Match {
	var out []proc.Match
	for _, m := range a.opts.Cgroups {
		if m.Group != nil {
			out = append(out, m)
		}
	}
	return out
}

// groupSubject is a finding's subject: the selector as the user wrote
// it ("--cgroup /pod", "--pod ns/name"), which the exporter's per-group
// series key on; the message names the group itself (groupWords), a
// pod's container among its others.
func groupSubject(m proc.Match) string { return m.Selector.String() }

// groupNotChecked is the subject of a check's not-checked finding about
// a group: "cgroup-mem-remote for --cgroup /pod", with the container
// when a selector found several (a pod's).
func groupNotChecked(c Check, m proc.Match) string {
	s := fmt.Sprintf("%s for %s", c, m.Selector)
	if p := m.Group.Pod; p != nil && p.Container != "" {
		s += " container " + p.Container
	}
	return s
}

// groupWords names a group in a sentence: "control group /pod", or
// "pod default/iperf container server (control group /kubepods/…)".
func groupWords(g *proc.Cgroup) string {
	if g.Pod != nil {
		return podWords(g.Pod) + " (control group " + g.Path + ")"
	}
	return "control group " + g.Path
}

// podWords is "pod default/iperf container server", with what the pod's
// source said ("pod UID 1f2e…" without a name).
func podWords(p *proc.PodRef) string {
	var b strings.Builder
	switch {
	case p.Name != "" && p.Namespace != "":
		b.WriteString("pod " + p.Namespace + "/" + p.Name)
	case p.Name != "":
		b.WriteString("pod " + p.Name)
	case p.UID != "":
		b.WriteString("pod UID " + p.UID)
	default:
		b.WriteString("pod")
	}
	switch {
	case p.Container != "":
		b.WriteString(" container " + p.Container)
	case p.ContainerID != "":
		b.WriteString(" container " + p.ContainerID)
	}
	return b.String()
}

// keepOff says what keeps IRQs off cpus for good, beside a pin that
// moves them now: for a pod, CRI-O's annotation (it takes the
// container's CPUs out of every IRQ's mask and irqbalance's, while the
// container runs); for a running irqbalance that does not ban them all,
// its banned list, or it may put IRQs back. "" when neither applies.
func (a *auditor) keepOff(g *proc.Cgroup, cpus cpuset.Set) string {
	var parts []string
	if g.Pod != nil && !g.Pod.IRQBalancing.Or(proc.IRQBalancing{}).Off {
		parts = append(parts, `annotate the pod irq-load-balancing.crio.io: "disable" (CRI-O; a Guaranteed pod with whole CPUs under the static CPU manager policy, its runtime class allowing the annotation, e.g. performance-<profile>)`)
	}
	if ib := a.opts.Irqbalance; ib != nil && unknown.Is(ib.Running, true) && !cpus.IsSubsetOf(ib.BannedCPUs) {
		parts = append(parts, fmt.Sprintf("add %s to IRQBALANCE_BANNED_CPULIST and restart irqbalance, or it may put IRQs back", cpus.Union(ib.BannedCPUs).List()))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; to keep them off: " + strings.Join(parts, "; ")
}

// judgedAgainst says whether a group is judged against a NIC, and how
// that NIC was told: a process of the group judged against it (its
// sockets, through its network namespace when it has its own, else
// --nic), or, for a group none of whose processes says, the NICs --nic
// names. "" when it is not.
func (a *auditor) judgedAgainst(m proc.Match, nic string) string {
	told := false
	for i, p := range a.procs {
		pn := a.pns[i]
		if !slices.Contains(m.PIDs, p.PID) || (!pn.Known() && pn.JudgedBy == "") {
			continue
		}
		told = true // its sockets name NICs, audited or not, or --nic does
		if slices.Contains(pn.Judged, nic) {
			if pn.JudgedBy == "sockets" {
				return fmt.Sprintf("%s uses it (from its sockets: %s)", procSubject(p), first(pn.How))
			}
			return fmt.Sprintf("%s's NIC is unknown and --nic names it", procSubject(p))
		}
	}
	if !told && slices.Contains(a.opts.NICs, nic) {
		return "--nic names it"
	}
	return ""
}

// nodesWord is "node 1" or "nodes 0-1".
func nodesWord(nodes cpuset.Set) string {
	return units.Choose(nodes.Len(), "node ", "nodes ") + nodes.List()
}
