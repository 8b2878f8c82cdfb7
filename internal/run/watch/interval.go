package watch

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Thresholds of the verdicts, in percent of one CPU.
const (
	// BusyPercent makes a CPU worth showing even when no NIC IRQ or
	// watched thread is on it.
	BusyPercent = 50
	// SaturatedPercent is the busy share (user, system, irq and softirq
	// time) at which a CPU has no headroom left.
	SaturatedPercent = 90
)

// userHZ is the unit of the threads' utime and stime: USER_HZ, which is
// 100 on every architecture Linux runs irqnuma on (x86, arm64, ...).
const userHZ = 100

// Interval is what happened between two samples: the JSON line of
// `irqnuma watch -o json`. Fields are added, never renamed. Unknown
// values are null, with their reason beside them (package unknown).
type Interval struct {
	Seq     int           `json:"seq"` // 1 for the first interval
	Start   time.Time     `json:"start"`
	End     time.Time     `json:"end"`
	Seconds float64       `json:"seconds"`
	NICs    []NICStats    `json:"nics"`
	CPUs    []CPUStats    `json:"cpus"` // the CPUs that matter, by id
	Threads []ThreadStats `json:"threads"`
	Notes   []string      `json:"notes"`
	// Processes says which NICs each watched process running at the end
	// of the interval uses, and how that was found (package nicuse), by
	// PID. A NIC's verdict names the threads of the processes that use
	// it, and of those whose NIC is unknown.
	Processes []nicuse.Use `json:"processes"`
}

// NICStats is one NIC's interrupts in the interval and its verdict.
type NICStats struct {
	Name     string                                 `json:"name"`
	Node     unknown.Value[int]                     `json:"node"`     // the NIC's local node
	Locality unknown.Value[topology.LocalitySource] `json:"locality"` // how Node is known (topology.Locality)
	// QueueIRQsPerSec sums the queue IRQs whose rate is known.
	QueueIRQsPerSec float64    `json:"queue_irqs_per_sec"`
	IRQs            []IRQStats `json:"irqs"` // every IRQ of the NIC, by number
	Verdict         Verdict    `json:"verdict"`
}

// MarshalJSON writes the unknown values' reasons beside them.
func (n NICStats) MarshalJSON() ([]byte, error) {
	type plain NICStats
	return unknown.MarshalObject(plain(n))
}

// UnmarshalJSON restores the unknown values' reasons.
func (n *NICStats) UnmarshalJSON(b []byte) error {
	type plain NICStats
	return unknown.UnmarshalObject(b, (*plain)(n))
}

// IRQStats is one IRQ's rate and the CPUs that took it.
type IRQStats struct {
	IRQ    int                    `json:"irq"`
	Name   string                 `json:"name"`
	Queue  unknown.Value[int]     `json:"queue"` // not applicable for a non-queue vector
	Dir    interrupts.Dir         `json:"dir,omitempty"`
	Kind   irq.Kind               `json:"kind"`    // "queue" or "other"
	PerSec unknown.Value[float64] `json:"per_sec"` // unknown this interval: new, or its count went backwards
	CPUs   []CPURate              `json:"cpus"`    // CPUs that took it, by id
}

// MarshalJSON writes the unknown values' reasons beside them.
func (s IRQStats) MarshalJSON() ([]byte, error) {
	type plain IRQStats
	return unknown.MarshalObject(plain(s))
}

// UnmarshalJSON restores the unknown values' reasons.
func (s *IRQStats) UnmarshalJSON(b []byte) error {
	type plain IRQStats
	return unknown.UnmarshalObject(b, (*plain)(s))
}

// CPURate is interrupts per second on one CPU.
type CPURate struct {
	CPU    int     `json:"cpu"`
	PerSec float64 `json:"per_sec"`
}

// CPUStats is one CPU that matters: it took NIC IRQs, ran a watched
// thread, or was more than BusyPercent busy. Percentages are of the CPU's
// own ticks in the interval.
type CPUStats struct {
	CPU  int                    `json:"cpu"`
	Node unknown.Value[int]     `json:"node"`
	Why  []string               `json:"why"` // "irq", "thread", "busy"; "asked" (Diff's include)
	Usr  unknown.Value[float64] `json:"usr"` // user + nice (guest time included)
	Sys  unknown.Value[float64] `json:"sys"`
	IRQ  unknown.Value[float64] `json:"irq"`
	Soft unknown.Value[float64] `json:"soft"`
	Busy unknown.Value[float64] `json:"busy"` // usr + sys + irq + soft
	// NetRX and NetTX are NET_RX and NET_TX softirqs per second.
	NetRX unknown.Value[float64] `json:"net_rx_per_sec"`
	NetTX unknown.Value[float64] `json:"net_tx_per_sec"`
	// Drops and Squeezes are softnet_stat's dropped and time_squeeze per
	// second.
	Drops    unknown.Value[float64] `json:"drops_per_sec"`
	Squeezes unknown.Value[float64] `json:"time_squeeze_per_sec"`
	// NICIRQs is the NIC IRQs per second it took (every NIC watched).
	NICIRQs float64 `json:"nic_irqs_per_sec"`
	Threads []int   `json:"threads"` // TIDs of watched threads last on it
}

// MarshalJSON writes the unknown values' reasons beside them.
func (c CPUStats) MarshalJSON() ([]byte, error) {
	type plain CPUStats
	return unknown.MarshalObject(plain(c))
}

// UnmarshalJSON restores the unknown values' reasons.
func (c *CPUStats) UnmarshalJSON(b []byte) error {
	type plain CPUStats
	return unknown.UnmarshalObject(b, (*plain)(c))
}

// ThreadStats is one thread of a watched process.
type ThreadStats struct {
	PID  int                `json:"pid"`
	TID  int                `json:"tid"`
	Comm string             `json:"comm"`
	CPU  unknown.Value[int] `json:"cpu"`  // the CPU it last ran on
	Node unknown.Value[int] `json:"node"` // that CPU's node
	// CPUPercent is its user+system time over the interval, in percent of
	// one CPU; unknown for a thread new in this interval.
	CPUPercent unknown.Value[float64] `json:"cpu_percent"`
}

// MarshalJSON writes the unknown values' reasons beside them.
func (t ThreadStats) MarshalJSON() ([]byte, error) {
	type plain ThreadStats
	return unknown.MarshalObject(plain(t))
}

// UnmarshalJSON restores the unknown values' reasons.
func (t *ThreadStats) UnmarshalJSON(b []byte) error {
	type plain ThreadStats
	return unknown.UnmarshalObject(b, (*plain)(t))
}

// diffSamples computes the interval from prev to cur on host h. nics are the
// NICs to give a verdict for (Sampler.NICs). It fails only when the clock
// did not move forward.
func diffSamples(h *topology.Host, nics []*topology.NIC, prev, cur *Sample) (*Interval, error) {
	return diffIncluding(h, nics, prev, cur, cpuset.Set{})
}

// Diff is the interval from prev to cur, two samples s took, as Run sends
// it; the CPUs in include are listed whatever they did, with the reason
// "asked" (a caller that placed work there wants their load even when
// idle). It fails only when cur is not after prev.
func (s *Sampler) Diff(prev, cur *Sample, include cpuset.Set) (*Interval, error) {
	return diffIncluding(s.h, s.nics, prev, cur, include)
}

// diffIncluding is diffSamples that also lists the CPUs in include.
func diffIncluding(h *topology.Host, nics []*topology.NIC, prev, cur *Sample, include cpuset.Set) (*Interval, error) {
	secs := cur.Time.Sub(prev.Time).Seconds()
	if secs <= 0 {
		return nil, fmt.Errorf("watch: sample at %s is not after the one at %s", cur.Time.Format(time.RFC3339Nano), prev.Time.Format(time.RFC3339Nano))
	}
	d := &differ{h: h, secs: secs, uses: cur.uses, include: include, iv: &Interval{Start: prev.Time, End: cur.Time, Seconds: secs,
		NICs: []NICStats{}, CPUs: []CPUStats{}, Threads: []ThreadStats{}, Notes: []string{}, Processes: []nicuse.Use{}}}
	for _, u := range cur.uses {
		d.iv.Processes = append(d.iv.Processes, u)
	}
	slices.SortFunc(d.iv.Processes, func(a, b nicuse.Use) int { return a.PID - b.PID })
	d.onlineChanges(prev.Online, cur.Online)
	d.cpuTimes(prev.stat, cur.stat)
	d.softirqs(prev, cur)
	d.softnet(prev, cur)
	d.irqs(prev, cur)
	d.threads(prev.procs, cur.procs)
	d.iv.Notes = append(d.iv.Notes, cur.notes...)
	d.cpus()
	for _, nic := range nics {
		d.iv.NICs = append(d.iv.NICs, d.nic(nic))
	}
	return d.iv, nil
}

// differ holds the per-CPU results while an interval is computed.
type differ struct {
	h        *topology.Host
	uses     map[int]nicuse.Use // which NICs each process uses, by PID
	secs     float64
	iv       *Interval
	cpu      map[int]*cpuAcc
	irqStats []IRQStats
	own      []irq.Owner // owner of each irqs entry
	include  cpuset.Set  // CPUs listed whatever they did
}

// cpuAcc gathers what is known of one CPU in the interval.
type cpuAcc struct {
	pct             unknown.Value[[5]float64] // usr, sys, irq, soft, busy
	netRX, netTX    unknown.Value[float64]
	drops, squeezes unknown.Value[float64]
	nicIRQs         float64
	tookIRQ, thread bool
	threads         []int
}

// notInBoth is why a CPU's rate is unknown when a sample lacks its count.
var notInBoth = unknown.Because(unknown.KindNotCaptured, "not counted in both samples")

// wentBack is why a rate is unknown when its counter went backwards.
var wentBack = unknown.Because(unknown.KindFailed, "the counter went backwards")

func (d *differ) acc(id int) *cpuAcc {
	if d.cpu == nil {
		d.cpu = map[int]*cpuAcc{}
	}
	a, ok := d.cpu[id]
	if !ok {
		a = &cpuAcc{pct: unknown.Not[[5]float64](notInBoth),
			netRX: unknown.Not[float64](notInBoth), netTX: unknown.Not[float64](notInBoth),
			drops: unknown.Not[float64](notInBoth), squeezes: unknown.Not[float64](notInBoth)}
		d.cpu[id] = a
	}
	return a
}

func (d *differ) note(format string, args ...any) {
	d.iv.Notes = append(d.iv.Notes, fmt.Sprintf(format, args...))
}

func (d *differ) rate(delta uint64) unknown.Value[float64] {
	return unknown.Of(float64(delta) / d.secs)
}

func (d *differ) onlineChanges(prev, cur cpuset.Set) {
	if gone := prev.Difference(cur); !gone.IsEmpty() {
		d.note("CPU %s went offline: no rates for it this interval", gone)
	}
	if came := cur.Difference(prev); !came.IsEmpty() {
		d.note("CPU %s came online: its rates start next interval", came)
	}
}

// each walks two id-sorted lists and calls both for every id in both.
func each[T any](prev, cur []T, id func(T) int, both func(p, c T)) {
	i := 0
	for _, c := range cur {
		for i < len(prev) && id(prev[i]) < id(c) {
			i++
		}
		if i < len(prev) && id(prev[i]) == id(c) {
			both(prev[i], c)
		}
	}
}

func (d *differ) cpuTimes(prev, cur []statCPU) {
	var back []int
	each(prev, cur, func(s statCPU) int { return s.id }, func(p, c statCPU) {
		a, b := p.t, c.t
		if b.user < a.user || b.nice < a.nice || b.system < a.system || b.idle < a.idle ||
			b.iowait < a.iowait || b.irq < a.irq || b.softirq < a.softirq || b.steal < a.steal {
			back = append(back, c.id)
			d.acc(c.id).pct = unknown.Not[[5]float64](wentBack)
			return
		}
		total := b.total() - a.total()
		if total == 0 {
			// no tick accounted: percentages unknown
			d.acc(c.id).pct = unknown.NotAs[[5]float64](unknown.KindNotReported, "no tick accounted in the interval")
			return
		}
		pct := func(x uint64) float64 { return 100 * float64(x) / float64(total) }
		usr := pct(b.user + b.nice - a.user - a.nice)
		sys := pct(b.system - a.system)
		irqp := pct(b.irq - a.irq)
		soft := pct(b.softirq - a.softirq)
		d.acc(c.id).pct = unknown.Of([5]float64{usr, sys, irqp, soft, usr + sys + irqp + soft})
	})
	if len(back) > 0 {
		d.note("/proc/stat times of CPU %s went backwards: their percentages are unknown this interval", cpuset.New(back...))
	}
}

func (d *differ) softirqs(prev, cur *Sample) {
	if !prev.hasSoft || !cur.hasSoft {
		if !cur.hasSoft {
			d.note("no /proc/softirqs: NET_RX and NET_TX rates unknown")
		}
		return
	}
	pcol := columns(prev.soft.cpus)
	var back []int
	for i, id := range cur.soft.cpus {
		j, ok := pcol[id]
		if !ok || !prev.Online.Contains(id) || !cur.Online.Contains(id) {
			continue
		}
		rx0, rx1 := prev.soft.netRX[j], cur.soft.netRX[i]
		tx0, tx1 := prev.soft.netTX[j], cur.soft.netTX[i]
		if rx1 < rx0 || tx1 < tx0 {
			back = append(back, id)
			a := d.acc(id)
			a.netRX, a.netTX = unknown.Not[float64](wentBack), unknown.Not[float64](wentBack)
			continue
		}
		a := d.acc(id)
		a.netRX, a.netTX = d.rate(rx1-rx0), d.rate(tx1-tx0)
	}
	if len(back) > 0 {
		d.note("/proc/softirqs NET_RX/NET_TX of CPU %s went backwards (reset or 32-bit wrap): unknown this interval", cpuset.New(back...))
	}
}

func (d *differ) softnet(prev, cur *Sample) {
	if !prev.hasNet || !cur.hasNet {
		if !cur.hasNet {
			d.note("no /proc/net/softnet_stat: drops and time_squeeze unknown")
		}
		return
	}
	var back []int
	each(prev.softnet, cur.softnet, func(s softnetCPU) int { return s.id }, func(p, c softnetCPU) {
		if c.dropped < p.dropped || c.squeeze < p.squeeze {
			back = append(back, c.id)
			a := d.acc(c.id)
			a.drops, a.squeezes = unknown.Not[float64](wentBack), unknown.Not[float64](wentBack)
			return
		}
		a := d.acc(c.id)
		a.drops, a.squeezes = d.rate(c.dropped-p.dropped), d.rate(c.squeeze-p.squeeze)
	})
	if len(back) > 0 {
		d.note("softnet_stat counters of CPU %s went backwards (32-bit wrap): unknown this interval", cpuset.New(back...))
	}
}

// columns maps CPU ids to their column.
func columns(ids []int) map[int]int {
	m := make(map[int]int, len(ids))
	for i, id := range ids {
		m[id] = i
	}
	return m
}

func (d *differ) irqs(prev, cur *Sample) {
	pcol := columns(prev.irqCols)
	// for each current column, the previous column of the same CPU or -1
	from := make([]int, len(cur.irqCols))
	for i, id := range cur.irqCols {
		from[i] = -1
		if j, ok := pcol[id]; ok {
			from[i] = j
		}
	}
	j := 0
	for _, c := range cur.irqs {
		for j < len(prev.irqs) && prev.irqs[j].n < c.n {
			d.note("IRQ %d (%s) is gone", prev.irqs[j].n, vector(prev.irqs[j].owner))
			j++
		}
		st := IRQStats{IRQ: c.n, Name: c.name, Queue: c.owner.Queue, Dir: c.owner.Dir, Kind: c.owner.Kind, CPUs: []CPURate{},
			PerSec: unknown.NotAs[float64](unknown.KindNotCaptured, "new this interval")}
		switch {
		case j >= len(prev.irqs) || prev.irqs[j].n != c.n:
			d.note("IRQ %d (%s) is new: its rate starts next interval", c.n, vector(c.owner))
		case prev.irqs[j].name != c.name:
			d.note("IRQ %d was re-registered (%q, was %q): its rate starts next interval", c.n, c.name, prev.irqs[j].name)
			st.PerSec = unknown.NotAs[float64](unknown.KindNotCaptured, "re-registered this interval")
			j++
		default:
			p := prev.irqs[j]
			j++
			var sum uint64
			var back []int
			for i, v := range c.counts {
				if i >= len(from) || from[i] < 0 || from[i] >= len(p.counts) {
					continue // the CPU was not online at the previous sample
				}
				old := p.counts[from[i]]
				if v < old {
					back = append(back, cur.irqCols[i])
					continue
				}
				if v > old {
					sum += v - old
					id := cur.irqCols[i]
					st.CPUs = append(st.CPUs, CPURate{CPU: id, PerSec: float64(v-old) / d.secs})
				}
			}
			if len(back) > 0 {
				d.note("IRQ %d (%s) count went backwards on CPU %s (re-registered, or a 32-bit wrap): its rate is unknown this interval",
					c.n, vector(c.owner), cpuset.New(back...))
				st.CPUs = st.CPUs[:0]
				st.PerSec = unknown.Not[float64](wentBack)
				break
			}
			st.PerSec = d.rate(sum)
			for _, r := range st.CPUs {
				a := d.acc(r.CPU)
				a.nicIRQs += r.PerSec
				a.tookIRQ = true
			}
		}
		d.irqStats = append(d.irqStats, st)
		d.own = append(d.own, c.owner)
	}
	for ; j < len(prev.irqs); j++ {
		d.note("IRQ %d (%s) is gone", prev.irqs[j].n, vector(prev.irqs[j].owner))
	}
}

// vector names what an IRQ serves: "eth0 queue 3", "eth0 rx queue 0",
// "eth0 other".
func vector(o irq.Owner) string {
	if o.Kind != irq.KindQueue {
		return o.NIC + " other"
	}
	if o.Dir != "" {
		return fmt.Sprintf("%s %s queue %s", o.NIC, o.Dir, o.Queue)
	}
	return fmt.Sprintf("%s queue %s", o.NIC, o.Queue)
}

func (d *differ) threads(prev, cur []procSample) {
	before := map[int]*procSample{}
	for i := range prev {
		before[prev[i].pid] = &prev[i]
	}
	for _, c := range cur {
		p := before[c.pid]
		if c.gone {
			if p != nil && !p.gone {
				d.note("process %d (%s) exited", c.pid, c.comm)
			}
			continue
		}
		var old []int
		if p != nil {
			for _, t := range p.threads {
				old = append(old, t.TID)
			}
		}
		for _, t := range c.threads {
			ts := ThreadStats{PID: c.pid, TID: t.TID, Comm: t.Comm, CPU: t.LastCPU, Node: unknown.Not[int](t.LastCPU.Why()),
				CPUPercent: unknown.NotAs[float64](unknown.KindNotCaptured, "new this interval")}
			cpu, onCPU := t.LastCPU.Get()
			if onCPU {
				ts.Node = d.h.NodeOf(cpu)
			}
			if k, ok := slices.BinarySearch(old, t.TID); ok {
				o := p.threads[k]
				if now, was := t.UTime+t.STime, o.UTime+o.STime; now >= was {
					ts.CPUPercent = unknown.Of(100 * float64(now-was) / userHZ / d.secs)
				} else {
					ts.CPUPercent = unknown.Not[float64](wentBack)
				}
			}
			d.iv.Threads = append(d.iv.Threads, ts)
			if onCPU && ran(ts, t.State) {
				a := d.acc(cpu)
				a.thread = true
				a.threads = append(a.threads, t.TID)
			}
		}
	}
}

// ran reports whether a thread ran in the interval (it used CPU time or
// is running now).
func ran(t ThreadStats, state string) bool {
	pct, ok := t.CPUPercent.Get()
	return state == "R" || (ok && pct > 0)
}

// cpus builds the CPU table: the CPUs that took NIC IRQs, ran a watched
// thread, were more than BusyPercent busy, or were asked for.
func (d *differ) cpus() {
	ids := make([]int, 0, len(d.cpu))
	for id := range d.cpu {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		a := d.cpu[id]
		var why []string
		if a.tookIRQ {
			why = append(why, "irq")
		}
		if a.thread {
			why = append(why, "thread")
		}
		if p, ok := a.pct.Get(); ok && p[4] > BusyPercent {
			why = append(why, "busy")
		}
		if d.include.Contains(id) {
			why = append(why, "asked")
		}
		if len(why) == 0 {
			continue
		}
		c := CPUStats{CPU: id, Node: d.h.NodeOf(id), Why: why, NetRX: a.netRX, NetTX: a.netTX,
			Drops: a.drops, Squeezes: a.squeezes, NICIRQs: a.nicIRQs, Threads: a.threads}
		if c.Threads == nil {
			c.Threads = []int{}
		}
		if p, ok := a.pct.Get(); ok {
			c.Usr, c.Sys, c.IRQ, c.Soft, c.Busy = unknown.Of(p[0]), unknown.Of(p[1]), unknown.Of(p[2]), unknown.Of(p[3]), unknown.Of(p[4])
		} else {
			r := a.pct.Why()
			c.Usr, c.Sys, c.IRQ, c.Soft, c.Busy = unknown.Not[float64](r), unknown.Not[float64](r), unknown.Not[float64](r), unknown.Not[float64](r), unknown.Not[float64](r)
		}
		d.iv.CPUs = append(d.iv.CPUs, c)
	}
}

// cpuStats returns the row of a CPU that matters.
func (iv *Interval) cpuStats(id int) (*CPUStats, bool) {
	i, ok := slices.BinarySearchFunc(iv.CPUs, id, func(c CPUStats, id int) int { return c.CPU - id })
	if !ok {
		return nil, false
	}
	return &iv.CPUs[i], true
}
