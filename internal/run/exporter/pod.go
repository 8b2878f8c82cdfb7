package exporter

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
)

// The per-group (pod, container, control group) metrics.
const (
	MetricPodCPUs         = "irqnuma_pod_cpus"
	MetricPodExclusive    = "irqnuma_pod_exclusive"
	MetricPodProcesses    = "irqnuma_pod_processes"
	MetricPodExclusiveIRQ = "irqnuma_pod_exclusive_cpu_irqs"
	MetricPodNICRemote    = "irqnuma_pod_nic_remote"
	MetricPodFinding      = "irqnuma_pod_finding"
)

// podLabels are the labels naming a selected group, in this order, on
// every per-group series.
var podLabels = []string{"cgroup", "namespace", "pod", "container"}

// podGroup is one selected group and the match that found it.
type podGroup struct {
	m      proc.Match
	g      *proc.Cgroup
	labels []string // cgroup, namespace, pod, container
}

// podGroups returns the groups of st's selection, each once by its
// labels (a group selected twice would send its series twice), in the
// selection's order.
func podGroups(st *audit.State) []podGroup {
	var out []podGroup
	seen := map[[4]string]bool{}
	for _, m := range st.Matches {
		g := m.Group
		if g == nil {
			continue
		}
		ls := []string{g.Path, "", "", ""}
		if p := g.Pod; p != nil {
			ls[1], ls[2], ls[3] = p.Namespace, p.Name, p.Container
		}
		k := [4]string(ls)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, podGroup{m: m, g: g, labels: ls})
	}
	return out
}

// podSeries returns the per-group families of one reading.
func podSeries(st *audit.State) []Family {
	cpus := family(MetricPodCPUs, podLabels...)
	excl := family(MetricPodExclusive, podLabels...)
	procs := family(MetricPodProcesses, podLabels...)
	irqs := family(MetricPodExclusiveIRQ, append(slices.Clone(podLabels), "nic")...)
	finding := family(MetricPodFinding, append([]string{"check", "severity", "nic"}, podLabels...)...)
	audited := auditedNICs(st)
	for _, pg := range podGroups(st) {
		g := pg.g
		procs.add(float64(len(pg.m.PIDs)), pg.labels...)
		if set, ok := g.CPUs.Get(); ok {
			cpus.add(float64(set.Len()), pg.labels...)
		}
		if g.CPUs.Known() && (g.Exclusive || g.KubeletCPUs().Known()) {
			excl.add(bool01(g.Exclusive), pg.labels...)
		}
		mine := groupFindings(st, pg)
		if g.CPUs.Known() && g.Exclusive {
			for _, nic := range audited {
				n := 0
				for _, f := range mine {
					if f.Check == audit.CheckCgroupIRQ && f.NIC == nic {
						n += len(f.IRQ)
					}
				}
				irqs.add(float64(n), append(slices.Clone(pg.labels), nic)...)
			}
		}
		type key struct{ check, sev, nic string }
		counts := map[key]float64{}
		var order []key
		for _, f := range mine {
			k := key{string(f.Check), string(f.Severity), f.NIC}
			if _, ok := counts[k]; !ok {
				order = append(order, k)
			}
			counts[k]++
		}
		for _, k := range order {
			finding.add(counts[k], append([]string{k.check, k.sev, k.nic}, pg.labels...)...)
		}
	}
	return []Family{cpus, excl, procs, irqs, podNICRemote(st), finding}
}

// podNotes say, for each selected group whose exclusive CPUs the
// kubelet's word leaves unknown (proc.Cgroup.KubeletCPUs), why its
// irqnuma_pod_exclusive is left out: the series cannot carry the why.
// Names from the node are quoted, so a note is one log line.
func podNotes(st *audit.State) []string {
	var out []string
	for _, pg := range podGroups(st) {
		g := pg.g
		kubelet := g.KubeletCPUs()
		if kubelet.Known() || g.Exclusive {
			continue
		}
		who := pg.m.Selector.String()
		if p := g.Pod; p != nil && p.Container != "" {
			who += " container " + strconv.Quote(p.Container)
		}
		out = append(out, fmt.Sprintf("%s (control group %s): %s left out, the kubelet's word on its CPUs not taken: %s",
			who, strconv.Quote(g.Path), MetricPodExclusive, strconv.Quote(kubelet.Why().Detail)))
	}
	return out
}

// logPodNotes logs each of st's pod notes the last scrape did not have;
// its caller holds e.mu.
func (e *Exporter) logPodNotes(st *audit.State) {
	noted := map[string]bool{}
	for _, n := range podNotes(st) {
		if !e.podNoted[n] {
			e.logf("%s", n)
		}
		noted[n] = true
	}
	e.podNoted = noted
}

// groupFindings are the findings about a selected group: those whose
// subject is its selector ("--cgroup /pod"), and, of those naming CPUs,
// only the ones within the group's (so two groups one selector found,
// the containers of a pod, each keep their own).
func groupFindings(st *audit.State, pg podGroup) []audit.Finding {
	var out []audit.Finding
	sel := pg.m.Selector.String()
	for _, f := range st.Findings {
		if f.Subject != sel {
			continue
		}
		if set, ok := pg.g.CPUs.Get(); ok && !f.CPUs.IsEmpty() && !f.CPUs.IsSubsetOf(set) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// podNICRemote is irqnuma_pod_nic_remote: per group with known CPUs, per
// NIC its running processes' sockets use (nicuse) whose local CPUs are
// known, whether none of the group's CPUs is local to it.
func podNICRemote(st *audit.State) Family {
	f := family(MetricPodNICRemote, append(slices.Clone(podLabels), "nic")...)
	for _, pg := range podGroups(st) {
		set, ok := pg.g.CPUs.Get()
		if !ok || set.IsEmpty() {
			continue
		}
		var nics []string
		for _, u := range st.Uses {
			if u.Known() && slices.Contains(pg.m.PIDs, u.PID) {
				nics = append(nics, u.NICs...)
			}
		}
		slices.Sort(nics)
		for _, name := range slices.Compact(nics) {
			n, ok := st.Host.NICByName(name)
			if !ok {
				continue
			}
			loc := st.Host.Locality(n)
			if !loc.Known() {
				continue
			}
			f.add(bool01(!set.Intersects(loc.CPUs)), append(slices.Clone(pg.labels), name)...)
		}
	}
	return f
}

// auditedNICs are the NICs whose IRQs the reading holds, sorted: those
// the audit's NIC checks ran on.
func auditedNICs(st *audit.State) []string {
	var out []string
	if st.IRQs == nil {
		return nil
	}
	for i := range st.IRQs.IRQs {
		if o := st.IRQs.IRQs[i].Owner; o != nil && o.NIC != "" {
			out = append(out, o.NIC)
		}
	}
	slices.SortFunc(out, cmp.Compare[string])
	return slices.Compact(out)
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
