package flow

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// The sources of per-queue rx counters, best first.
const (
	// CountersQStats is netdev qstats-get's rx packets per queue.
	CountersQStats = "netdev qstats rx packets"
	// CountersEthtool is the driver's per-rx-queue packet counters among
	// its ethtool statistics (ethtool -S: rx_queue_N_packets, rxN_packets,
	// rx-N.packets, ..., as steer.RXQueuePackets names them per driver).
	CountersEthtool = "ethtool -S per-queue rx packets"
	// CountersIRQ is the sum over CPUs of each rx queue IRQ's count in
	// /proc/interrupts: interrupts, not packets (NAPI takes many packets
	// per interrupt).
	CountersIRQ = "queue IRQ count (/proc/interrupts)"
)

// Counters is one sample of a NIC's per-queue rx counters.
type Counters struct {
	NIC    string
	Source string // CountersQStats, CountersEthtool or CountersIRQ
	// NotQStats says why qstats were not used ("" when they were);
	// NotEthtool why the ethtool statistics were not ("" when they were,
	// or when qstats were).
	NotQStats  string
	NotEthtool string
	// Queues holds each rx queue's counter; IRQs the IRQs summed for it
	// (IRQ counts only); Stats the ethtool statistics summed for it
	// (ethtool only); Mixed the queues whose IRQ also serves tx.
	Queues map[uint32]uint64
	IRQs   map[uint32][]int
	Stats  map[uint32][]string
	Mixed  map[uint32]bool
}

// ReadCounters samples nic's per-queue rx counters on fsys once: netdev
// qstats where the driver has them, else its per-rx-queue ethtool
// statistics, else its rx queue IRQs' counts.
func ReadCounters(fsys kfile.FS, nic string) (*Counters, error) {
	s := newSampler(fsys, nic)
	defer s.Close()
	return s.Sample()
}

// Sampler samples one NIC's per-queue rx counters repeatedly from the
// source its first sample found best, so that every sample compares:
// the ethtool statistics' names are read once, and each later sample is
// one ioctl.
type Sampler struct {
	fsys   kfile.FS
	nic    string
	source string
	// notQStats and notEthtool say, from the first sample, why the
	// better sources were not used.
	notQStats, notEthtool string
	stats                 *steer.Stats
	statIdx               map[uint32][]int
}

// newSampler returns a sampler of nic's rx counters on fsys.
func newSampler(fsys kfile.FS, nic string) *Sampler { return &Sampler{fsys: fsys, nic: nic} }

// Close releases what the sampler holds (the ethtool ioctl socket).
func (s *Sampler) Close() error {
	if s.stats != nil {
		return s.stats.Close()
	}
	return nil
}

// Sample reads the counters once.
func (s *Sampler) Sample() (*Counters, error) {
	c := &Counters{NIC: s.nic, Queues: map[uint32]uint64{}}
	var err error
	switch s.source {
	case "":
		err = s.first(c)
	case CountersQStats:
		err = s.qstats(c)
	case CountersEthtool:
		err = s.ethtool(c)
	default:
		err = s.irqs(c)
	}
	if err != nil {
		return nil, err
	}
	c.Source, c.NotQStats, c.NotEthtool = s.source, s.notQStats, s.notEthtool
	return c, nil
}

// first tries the sources in order and keeps the first that counts.
func (s *Sampler) first(c *Counters) error {
	if err := s.qstats(c); err != nil {
		return err
	}
	if len(c.Queues) > 0 {
		s.source = CountersQStats
		return nil
	}
	if err := s.openEthtool(); err != nil {
		return err
	}
	if s.stats != nil {
		s.source = CountersEthtool
		return s.ethtool(c)
	}
	s.source = CountersIRQ
	if err := s.irqs(c); err != nil {
		return err
	}
	if len(c.Queues) == 0 {
		return fmt.Errorf("no per-queue rx counter of %s: %s; %s; and /proc/interrupts names no rx queue IRQ of it", s.nic, s.notQStats, s.notEthtool)
	}
	return nil
}

// qstats reads netdev qstats' rx packets; none is not an error (the
// first sample then says why in notQStats).
func (s *Sampler) qstats(c *Counters) error {
	st, err := steer.Read(s.fsys, []string{s.nic})
	if err != nil {
		return err
	}
	n := st.NIC(s.nic)
	if n != nil {
		for _, q := range n.QStats {
			if q.Type == steer.QueueTypeRX && q.Packets != nil {
				c.Queues[q.Queue] = *q.Packets
			}
		}
	}
	if len(c.Queues) == 0 && s.source == "" {
		s.notQStats = "no rx qstats (" + reasonOf(n, steer.PartQStats) + ")"
	}
	return nil
}

// openEthtool opens the NIC's ethtool statistics and finds its rx
// queues' counters; when it cannot, notEthtool says why and s.stats
// stays nil.
func (s *Sampler) openEthtool() error {
	st, err := steer.OpenStats(s.fsys, s.nic)
	var un *steer.StatsUnavailableError
	switch {
	case errors.As(err, &un):
		s.notEthtool = "no ethtool statistics (" + un.Reason.String() + ")"
		return nil
	case err != nil:
		return err
	}
	idx, err := steer.RXQueuePackets(st.Driver, st.Names)
	if err != nil {
		st.Close()
		s.notEthtool = "no per-queue ethtool statistics (" + err.Error() + ")"
		return nil
	}
	s.stats, s.statIdx = st, idx
	return nil
}

// ethtool reads the statistics and sums each queue's counters.
func (s *Sampler) ethtool(c *Counters) error {
	v, err := s.stats.Read()
	if err != nil {
		return err
	}
	c.Stats = map[uint32][]string{}
	for q, idx := range s.statIdx {
		var sum uint64
		for _, i := range idx {
			sum += v[i]
			c.Stats[q] = append(c.Stats[q], s.stats.Names[i])
		}
		c.Queues[q] = sum
	}
	return nil
}

// irqs sums each rx queue IRQ's count.
func (s *Sampler) irqs(c *Counters) error {
	_, t, err := irq.Read(s.fsys, irq.Options{NICs: []string{s.nic}})
	if err != nil {
		return err
	}
	c.IRQs, c.Mixed = map[uint32][]int{}, map[uint32]bool{}
	for i := range t.IRQs {
		x := &t.IRQs[i]
		o := x.Owner
		if o == nil || o.NIC != s.nic || o.Kind != irq.KindQueue || o.Dir == interrupts.DirTX || !o.Queue.Known() || x.Counts == nil {
			continue
		}
		q := uint32(o.Queue.Or(0))
		c.Queues[q] += x.Total()
		c.IRQs[q] = append(c.IRQs[q], x.IRQ)
		if o.Dir != "rx" {
			c.Mixed[q] = true
		}
	}
	return nil
}

// QueueDelta is how much one rx queue's counter rose.
type QueueDelta struct {
	Queue uint32 `json:"queue"`
	Delta uint64 `json:"delta"`
	// IRQs are the IRQs counted for the queue (IRQ counters only);
	// Stats the ethtool statistics summed for it (ethtool only).
	IRQs  []int    `json:"irqs,omitempty"`
	Stats []string `json:"ethtool_stats,omitempty"`
	// Reset: the counter went back (the queue was recreated), so its
	// delta is unknown and Delta 0.
	Reset bool `json:"reset,omitempty"`
}

// Observation is what the per-queue counters did over an interval, and
// whether the flow landed where it was predicted.
type Observation struct {
	NIC       string `json:"nic"`
	Source    string `json:"counter_source"`
	NotQStats string `json:"qstats_unused_why,omitempty"`
	// NotEthtool says why the ethtool statistics were not used, when
	// the IRQ counts were.
	NotEthtool string       `json:"ethtool_stats_unused_why,omitempty"`
	Seconds    float64      `json:"seconds"`
	Queues     []QueueDelta `json:"queues"`
	// Busiest is the queue whose counter rose most; not applicable when
	// none rose or several rose equally most (Tied names them).
	Busiest      unknown.Value[uint32] `json:"busiest_queue"`
	BusiestDelta uint64                `json:"busiest_delta"`
	Tied         []uint32              `json:"tied_queues,omitempty"`
	// Predicted is the queue the flow was predicted on, unknown with the
	// prediction's reason.
	Predicted unknown.Value[uint32] `json:"predicted_queue"`
	// Landed is whether Busiest is Predicted; unknown when that cannot
	// be said (no prediction, nothing rose, a tie), with the reason.
	Landed  unknown.Value[bool] `json:"landed"`
	Verdict string              `json:"verdict"`
	Notes   []string            `json:"notes,omitempty"`
}

// MarshalJSON writes each unknown field's reason beside it.
func (o Observation) MarshalJSON() ([]byte, error) {
	type plain Observation
	return unknown.MarshalObject(plain(o))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (o *Observation) UnmarshalJSON(b []byte) error {
	type plain Observation
	return unknown.UnmarshalObject(b, (*plain)(o))
}

// Why an observation has no busiest queue.
var (
	whyNoneRose = unknown.Reason{Kind: unknown.KindNotApplicable, Detail: "no rx queue counter rose"}
	whyTied     = unknown.Reason{Kind: unknown.KindNotApplicable, Detail: "several queues rose equally most (tied_queues)"}
)

// Observe samples nic's per-queue rx counters, tells started of that
// first sample (traffic started after it is counted; nil: nothing is
// told), waits d while the user's traffic runs, samples them again and
// returns each queue's rise (Judge then says whether a flow landed on
// its predicted queue).
func Observe(fsys kfile.FS, nic string, d time.Duration, started func(first *Counters)) (*Observation, error) {
	s := newSampler(fsys, nic)
	defer s.Close()
	a, err := s.Sample()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if started != nil {
		started(a)
	}
	time.Sleep(d)
	b, err := s.Sample()
	if err != nil {
		return nil, err
	}
	return Diff(a, b, time.Since(t0))
}

// Diff returns each queue's rise from sample a to b, taken over took.
// Both samples must come from the same NIC and source.
func Diff(a, b *Counters, took time.Duration) (*Observation, error) {
	if a.NIC != b.NIC || a.Source != b.Source {
		return nil, fmt.Errorf("the samples differ: %s by %s, then %s by %s", a.NIC, a.Source, b.NIC, b.Source)
	}
	o := &Observation{NIC: a.NIC, Source: a.Source, NotQStats: a.NotQStats, NotEthtool: a.NotEthtool, Seconds: took.Seconds()}
	for q, after := range b.Queues {
		before, ok := a.Queues[q]
		d := QueueDelta{Queue: q, IRQs: b.IRQs[q], Stats: b.Stats[q]}
		switch {
		case !ok:
			o.Notes = append(o.Notes, fmt.Sprintf("queue %d appeared between the samples: its rise is unknown", q))
			d.Reset = true
		case after < before:
			o.Notes = append(o.Notes, fmt.Sprintf("queue %d's counter went back (%d to %d): its rise is unknown", q, before, after))
			d.Reset = true
		default:
			d.Delta = after - before
		}
		if b.Mixed[q] {
			o.Notes = append(o.Notes, fmt.Sprintf("queue %d's IRQ also serves tx: its count includes tx completions", q))
		}
		o.Queues = append(o.Queues, d)
	}
	for q := range a.Queues {
		if _, ok := b.Queues[q]; !ok {
			o.Notes = append(o.Notes, fmt.Sprintf("queue %d went away between the samples", q))
		}
	}
	sort.Slice(o.Queues, func(i, j int) bool { return o.Queues[i].Queue < o.Queues[j].Queue })
	sort.Strings(o.Notes)
	var top []uint32
	for _, d := range o.Queues {
		switch {
		case d.Delta > o.BusiestDelta:
			o.BusiestDelta, top = d.Delta, []uint32{d.Queue}
		case d.Delta == o.BusiestDelta && d.Delta > 0:
			top = append(top, d.Queue)
		}
	}
	switch len(top) {
	case 0:
		o.Busiest = unknown.Not[uint32](whyNoneRose)
	case 1:
		o.Busiest = unknown.Of(top[0])
	default:
		o.Busiest, o.Tied = unknown.Not[uint32](whyTied), top
	}
	return o, nil
}

// Judge says whether the flow predicted to land on queue predicted
// (unknown: not predicted, and its reason says why) landed there.
func (o *Observation) Judge(predicted unknown.Value[uint32]) {
	o.Predicted = predicted
	unit := "packets"
	if o.Source == CountersIRQ {
		unit = "interrupts"
	}
	secs := fmt.Sprintf("%.1fs", o.Seconds)
	busiest, rose := o.Busiest.Get()
	want, known := predicted.Get()
	switch {
	case o.BusiestDelta == 0:
		o.Landed = unknown.Not[bool](whyNoneRose)
		o.Verdict = fmt.Sprintf("no rx counter of %s rose in %s: no traffic arrived on it (is the flow running, and received by %s?)", o.NIC, secs, o.NIC)
	case !rose:
		o.Landed = unknown.Not[bool](o.Busiest.Why())
		o.Verdict = fmt.Sprintf("queues %s rose equally most (+%d %s each): which one the flow is on cannot be told", queueList(o.Tied), o.BusiestDelta, unit)
	case !known:
		o.Landed = unknown.Not[bool](predicted.Why())
		o.Verdict = fmt.Sprintf("queue %d rose most (+%d %s); the flow's queue was not predicted (%s)", busiest, o.BusiestDelta, unit, predicted.Why().Detail)
	case busiest == want:
		o.Landed = unknown.Of(true)
		o.Verdict = fmt.Sprintf("landed on the predicted queue %d: it rose most (+%d %s in %s)%s", want, o.BusiestDelta, unit, secs, o.others(want, unit))
	default:
		o.Landed = unknown.Of(false)
		o.Verdict = fmt.Sprintf("not on the predicted queue %d (+%d %s): queue %d rose most (+%d %s in %s)", want, o.delta(want), unit, busiest, o.BusiestDelta, unit, secs)
	}
	if known && !rose && o.BusiestDelta > 0 {
		for _, q := range o.Tied {
			if q == want {
				return
			}
		}
		o.Landed = unknown.Of(false)
		o.Verdict += fmt.Sprintf("; the predicted queue %d is not among them (+%d %s)", want, o.delta(want), unit)
	}
}

func (o *Observation) delta(q uint32) uint64 {
	for _, d := range o.Queues {
		if d.Queue == q {
			return d.Delta
		}
	}
	return 0
}

// others says what else rose, when something did.
func (o *Observation) others(q uint32, unit string) string {
	var rose []string
	for _, d := range o.Queues {
		if d.Queue != q && d.Delta > 0 {
			rose = append(rose, fmt.Sprintf("%d +%d", d.Queue, d.Delta))
		}
	}
	if len(rose) == 0 {
		return "; no other queue rose"
	}
	return "; other queues rose too (" + strings.Join(rose, ", ") + " " + unit + "): other traffic, or part of the flow elsewhere"
}

func queueList(qs []uint32) string {
	s := make([]string, len(qs))
	for i, q := range qs {
		s[i] = fmt.Sprint(q)
	}
	return strings.Join(s, ", ")
}
