package watch

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Verdict says in words, and in fields, whether a NIC's softirq CPU is the
// bottleneck in an interval.
type Verdict struct {
	Text string `json:"text"` // "eth0: RX softirq on CPU 27 (node 1, local) at 99% soft — saturated; ..."
	// CPU is the NIC's busiest softirq CPU: of the CPUs that took its queue
	// IRQs and ran a real share of the network softirqs (netSoftirqCPUs),
	// the one with the most softirq time; not applicable when none did.
	CPU       unknown.Value[int]     `json:"cpu"`
	Node      unknown.Value[int]     `json:"node"`  // CPU's node
	Local     unknown.Value[bool]    `json:"local"` // CPU is local to the NIC
	Soft      unknown.Value[float64] `json:"soft"`  // CPU's softirq percent
	Busy      unknown.Value[float64] `json:"busy"`
	Saturated bool                   `json:"saturated"` // CPU was at least SaturatedPercent busy
	// SoftirqBound: CPU was saturated, at least half of it by interrupt
	// and softirq time: the NIC's receive processing is the bottleneck.
	SoftirqBound bool `json:"softirq_bound"`
	// IRQCPUs are every CPU that took the NIC's queue IRQs; RemoteCPUs
	// those of them outside the NIC's local CPUs.
	IRQCPUs    cpuset.Set      `json:"irq_cpus"`
	RemoteCPUs cpuset.Set      `json:"remote_cpus"`
	Threads    []ThreadVerdict `json:"threads"` // watched threads that ran, busiest first
}

// MarshalJSON writes the unknown values' reasons beside them.
func (v Verdict) MarshalJSON() ([]byte, error) {
	type plain Verdict
	return unknown.MarshalObject(plain(v))
}

// UnmarshalJSON restores the unknown values' reasons.
func (v *Verdict) UnmarshalJSON(b []byte) error {
	type plain Verdict
	return unknown.UnmarshalObject(b, (*plain)(v))
}

// ThreadVerdict places one watched thread relative to a NIC's softirq.
type ThreadVerdict struct {
	PID  int                `json:"pid"`
	TID  int                `json:"tid"`
	CPU  int                `json:"cpu"`
	Node unknown.Value[int] `json:"node"`
	// Relation is where it ran relative to the NIC's softirq CPUs;
	// unknown when the CPU's core is unknown.
	Relation   unknown.Value[Relation] `json:"relation"`
	Local      unknown.Value[bool]     `json:"local"`
	CPUPercent float64                 `json:"cpu_percent"`
	Saturated  bool                    `json:"saturated"`
}

// MarshalJSON writes the unknown values' reasons beside them.
func (t ThreadVerdict) MarshalJSON() ([]byte, error) {
	type plain ThreadVerdict
	return unknown.MarshalObject(plain(t))
}

// UnmarshalJSON restores the unknown values' reasons.
func (t *ThreadVerdict) UnmarshalJSON(b []byte) error {
	type plain ThreadVerdict
	return unknown.UnmarshalObject(b, (*plain)(t))
}

// Relation is where a watched thread ran relative to a NIC's softirq
// CPUs.
type Relation string

// Relations of a thread to a NIC's softirq CPUs.
const (
	RelationSameCPU    Relation = "same-cpu"    // it ran on a CPU that took the NIC's IRQs
	RelationSMTSibling Relation = "smt-sibling" // on a thread sibling of one
	RelationOwnCore    Relation = "own-core"    // on a core of its own
)

// maxThreadsInText bounds the threads a verdict line names.
const maxThreadsInText = 3

// nic builds a NIC's IRQ rows and verdict from the interval's IRQs.
func (d *differ) nic(n *topology.NIC) NICStats {
	loc := d.h.Locality(n)
	ns := NICStats{Name: n.Name, Node: loc.Node, Locality: loc.Source, IRQs: []IRQStats{}}
	hasQueue := false
	for i := range d.irqStats {
		if d.own[i].NIC == n.Name {
			ns.IRQs = append(ns.IRQs, d.irqStats[i])
			hasQueue = hasQueue || d.own[i].Kind == irq.KindQueue
		}
	}
	// The CPUs that took the NIC's queue IRQs, and the directions those
	// IRQs serve there. A NIC without queue vectors (one IRQ for
	// everything) counts all its IRQs.
	rates := map[int]float64{}
	dirs := map[int]*dirRates{}
	for _, q := range ns.IRQs {
		if hasQueue && q.Kind != irq.KindQueue {
			continue
		}
		if r, ok := q.PerSec.Get(); ok {
			ns.QueueIRQsPerSec += r
		}
		for _, r := range q.CPUs {
			rates[r.CPU] += r.PerSec
			dr := dirs[r.CPU]
			if dr == nil {
				dr = &dirRates{}
				dirs[r.CPU] = dr
			}
			switch q.Dir {
			case interrupts.DirRX:
				dr.rx += r.PerSec
			case interrupts.DirTX:
				dr.tx += r.PerSec
			default:
				dr.both += r.PerSec
			}
		}
	}
	ns.Verdict = d.verdict(n, loc, rates, dirs, len(ns.IRQs) > 0)
	return ns
}

// dirRates splits a CPU's NIC interrupts by the direction of the IRQs:
// rx-only vectors, tx-only vectors, and combined ones.
type dirRates struct{ rx, tx, both float64 }

func (d *differ) verdict(n *topology.NIC, loc topology.Locality, rates map[int]float64, dirs map[int]*dirRates, hasIRQs bool) Verdict {
	none := unknown.Because(unknown.KindNotApplicable, "no CPU took its queue IRQs")
	v := Verdict{CPU: unknown.Not[int](none), Node: unknown.Not[int](none), Local: unknown.Not[bool](none),
		Soft: unknown.Not[float64](none), Busy: unknown.Not[float64](none),
		Threads: []ThreadVerdict{}}
	irqCPUs := make([]int, 0, len(rates))
	for id := range rates {
		irqCPUs = append(irqCPUs, id)
	}
	slices.Sort(irqCPUs)
	v.IRQCPUs = cpuset.New(irqCPUs...)
	local := func(id int) unknown.Value[bool] {
		if !loc.Known() {
			return unknown.NotAs[bool](unknown.KindNotReported, "the NUMA locality of "+n.Name+" is unknown")
		}
		return unknown.Of(loc.CPUs.Contains(id))
	}
	var remote []int
	for _, id := range irqCPUs {
		if unknown.Is(local(id), false) {
			remote = append(remote, id)
		}
	}
	v.RemoteCPUs = cpuset.New(remote...)
	var b strings.Builder
	b.WriteString(n.Name + ": ")
	switch {
	case !hasIRQs:
		b.WriteString("no IRQs found for it")
	case len(irqCPUs) == 0:
		b.WriteString("no queue interrupts this interval")
	default:
		hot := d.hottest(irqCPUs, rates)
		c, ok := d.iv.cpuStats(hot)
		if !ok { // every CPU that took a NIC IRQ is listed; stay safe anyway
			r := unknown.Because(unknown.KindNotCaptured, "CPU not listed")
			c = &CPUStats{CPU: hot, Node: d.h.NodeOf(hot), Soft: unknown.Not[float64](r), Busy: unknown.Not[float64](r)}
		}
		v.CPU, v.Node, v.Local, v.Soft, v.Busy = unknown.Of(hot), d.h.NodeOf(hot), local(hot), c.Soft, c.Busy
		soft, softOK := c.Soft.Get()
		busy, busyOK := c.Busy.Get()
		v.Saturated = busyOK && busy >= SaturatedPercent
		fmt.Fprintf(&b, "%s on CPU %d (%s, %s)", cmp.Or(direction(dirs[hot], c), "softirq"), hot, nodeWord(d.h.NodeOf(hot)), localWord(v.Local))
		switch {
		case !softOK || !busyOK:
			b.WriteString(" — load unknown")
		case v.Saturated && soft+c.IRQ.Or(0) >= busy/2:
			v.SoftirqBound = true
			fmt.Fprintf(&b, " at %.0f%% soft — saturated", soft)
		case v.Saturated:
			fmt.Fprintf(&b, " at %.0f%% soft — CPU saturated by other work (%.0f%% busy: %.0f%% usr, %.0f%% sys)", soft, busy, c.Usr.Or(0), c.Sys.Or(0))
		default:
			fmt.Fprintf(&b, " at %.0f%% soft — not saturated (%.0f%% busy)", soft, busy)
		}
		if r, ok := c.Drops.Get(); ok && r > 0 {
			fmt.Fprintf(&b, ", %.0f drops/s", r)
		}
		if r, ok := c.Squeezes.Get(); ok && r > 0 {
			fmt.Fprintf(&b, ", %.0f time_squeeze/s", r)
		}
		d.otherCPUs(&b, irqCPUs, hot, local)
	}
	d.threadVerdicts(&b, n, &v, rates, local)
	v.Text = b.String()
	return v
}

// hottest picks, of the CPUs netSoftirqCPUs keeps, the CPU with the
// most softirq time, then the most NIC interrupts, then the lowest id.
func (d *differ) hottest(ids []int, rates map[int]float64) int {
	ids = d.netSoftirqCPUs(ids)
	best := ids[0]
	soft := func(id int) float64 {
		if c, ok := d.iv.cpuStats(id); ok && c.Soft.Known() {
			return c.Soft.Or(0)
		}
		return -1
	}
	for _, id := range ids[1:] {
		if s, bs := soft(id), soft(best); s > bs || (s == bs && rates[id] > rates[best]) {
			best = id
		}
	}
	return best
}

// netSoftirqCPUs keeps, of the CPUs that took the NIC's queue IRQs,
// those that ran at least a tenth of the network softirqs (NET_RX and
// NET_TX per second) of the one that ran most, and those whose count
// is unknown. Softirq time is every softirq's: a CPU that took one of
// the NIC's interrupts and spent 1% on timers must not be named over
// the CPU that ran the NIC's receive work in time too short for the
// tick to see. Interrupt counts cannot decide it: a CPU saturated by
// NAPI polling takes few interrupts, but runs NET_RX over and over.
func (d *differ) netSoftirqCPUs(ids []int) []int {
	net := func(id int) (float64, bool) {
		c, ok := d.iv.cpuStats(id)
		rx, rxOK := c.NetRX.Get()
		tx, txOK := c.NetTX.Get()
		if !ok || !rxOK || !txOK {
			return 0, false
		}
		return rx + tx, true
	}
	most := 0.0
	for _, id := range ids {
		if v, ok := net(id); ok && v > most {
			most = v
		}
	}
	if most == 0 {
		return ids
	}
	out := make([]int, 0, len(ids))
	for _, id := range ids {
		if v, ok := net(id); !ok || v >= most/10 {
			out = append(out, id)
		}
	}
	return out
}

// direction names the softirq the CPU's numbers show: RX or TX by which
// of NET_RX and NET_TX ran more there. When the IRQs it took serve
// mostly (two thirds) the other direction, it says so: virtio and other
// drivers with tx vectors run tx completions in NET_RX, which is then
// "RX softirq (for tx queue IRQs)". With no softirq counted (or none
// known), the IRQs' direction is all there is to go by.
func direction(dr *dirRates, c *CPUStats) string {
	irqDir := ""
	if dr != nil {
		total := dr.rx + dr.tx + dr.both
		switch {
		case total > 0 && dr.rx >= total*2/3:
			irqDir = "RX"
		case total > 0 && dr.tx >= total*2/3:
			irqDir = "TX"
		}
	}
	soft := ""
	rx, rxOK := c.NetRX.Get()
	tx, txOK := c.NetTX.Get()
	switch {
	case rxOK && txOK && rx >= tx && rx > 0:
		soft = "RX"
	case rxOK && txOK && tx > rx:
		soft = "TX"
	}
	switch {
	case soft == "" && irqDir == "":
		return ""
	case soft == "":
		return irqDir + " softirq"
	case irqDir != "" && irqDir != soft:
		return soft + " softirq (for " + strings.ToLower(irqDir) + " queue IRQs)"
	}
	return soft + " softirq"
}

// otherCPUs names the NIC's other IRQ CPUs, local ones first, and any of
// them that is saturated too.
func (d *differ) otherCPUs(b *strings.Builder, ids []int, hot int, local func(int) unknown.Value[bool]) {
	var loc, rem, unk, sat []int
	for _, id := range ids {
		if id == hot {
			continue
		}
		switch l, known := local(id).Get(); {
		case !known:
			unk = append(unk, id)
		case l:
			loc = append(loc, id)
		default:
			rem = append(rem, id)
		}
		if c, ok := d.iv.cpuStats(id); ok && c.Busy.Or(0) >= SaturatedPercent {
			sat = append(sat, id)
		}
	}
	var parts []string
	for _, g := range []struct {
		ids  []int
		word string
	}{{loc, "local"}, {rem, "remote"}, {unk, "locality unknown"}} {
		if len(g.ids) > 0 {
			parts = append(parts, fmt.Sprintf("%s (%s)", cpuWord(g.ids), g.word))
		}
	}
	if len(parts) > 0 {
		b.WriteString("; also on " + strings.Join(parts, ", "))
	}
	if len(sat) > 0 {
		fmt.Fprintf(b, "; %s also saturated", cpuWord(sat))
	}
}

// threadVerdicts places the watched threads that ran relative to the
// NIC's softirq CPUs.
func (d *differ) threadVerdicts(b *strings.Builder, n *topology.NIC, v *Verdict, rates map[int]float64, local func(int) unknown.Value[bool]) {
	softCPUs := v.IRQCPUs
	var tv []ThreadVerdict
	var comm = map[int]string{}
	for _, t := range d.iv.Threads {
		id, onCPU := t.CPU.Get()
		pct, pctOK := t.CPUPercent.Get()
		if !onCPU || !pctOK || pct <= 0 {
			continue
		}
		if u, ok := d.uses[t.PID]; ok && !u.MayUse(n.Name) {
			continue // its process uses other NICs, or none
		}
		r := ThreadVerdict{PID: t.PID, TID: t.TID, CPU: id, Node: t.Node, Local: local(id),
			CPUPercent: pct, Saturated: pct >= SaturatedPercent}
		cpu, _ := d.h.CPU(id)
		switch {
		case softCPUs.Contains(id):
			r.Relation = unknown.Of(RelationSameCPU)
		case cpu.Siblings.Or(cpuset.Set{}).IsEmpty():
			r.Relation = unknown.NotAs[Relation](unknown.KindNotReported, fmt.Sprintf("the core siblings of CPU %d are unknown", id))
		case cpu.Siblings.Or(cpuset.Set{}).Intersects(softCPUs):
			r.Relation = unknown.Of(RelationSMTSibling)
		default:
			r.Relation = unknown.Of(RelationOwnCore)
		}
		tv = append(tv, r)
		comm[t.TID] = t.Comm
	}
	slices.SortStableFunc(tv, func(a, b ThreadVerdict) int {
		if a.CPUPercent != b.CPUPercent {
			if a.CPUPercent > b.CPUPercent {
				return -1
			}
			return 1
		}
		return a.TID - b.TID
	})
	if tv != nil {
		v.Threads = tv
	}
	for i, t := range tv {
		if i == maxThreadsInText {
			fmt.Fprintf(b, "; %d more watched threads", len(tv)-i)
			break
		}
		where := nodeWord(t.Node)
		if unknown.Is(t.Local, false) {
			where += ", remote"
		}
		switch rel, _ := t.Relation.Get(); rel {
		case RelationSameCPU:
			where += ", same CPU as the softirq"
		case RelationSMTSibling:
			cpu, _ := d.h.CPU(t.CPU)
			s, _ := cpu.Siblings.Or(cpuset.Set{}).Intersection(v.IRQCPUs).Min()
			where += fmt.Sprintf(", SMT sibling of softirq CPU %d", s)
		case RelationOwnCore:
			where += ", own core"
		}
		fmt.Fprintf(b, "; %s thread %d on CPU %d (%s) at %.0f%%", comm[t.TID], t.TID, t.CPU, where, t.CPUPercent)
		if t.Saturated {
			b.WriteString(" — saturated")
		}
	}
}

func nodeWord(node unknown.Value[int]) string {
	n, ok := node.Get()
	if !ok {
		return "node unknown"
	}
	return fmt.Sprintf("node %d", n)
}

func localWord(local unknown.Value[bool]) string {
	l, ok := local.Get()
	switch {
	case !ok:
		return "locality unknown"
	case l:
		return "local"
	}
	return "remote"
}

// cpuWord names a list of CPUs: "CPU 3" or "CPUs 17,50".
func cpuWord(ids []int) string {
	if len(ids) == 1 {
		return fmt.Sprintf("CPU %d", ids[0])
	}
	return "CPUs " + cpuset.New(ids...).List()
}
