package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// SteerDoc is what `topology` and `irq list` documents carry of the
// NICs' steering (steer.Read): where it was read from, the kernel-wide
// knobs, and per NIC the whole reading with each rx queue's IRQ, NAPI,
// share of the RSS table and flow rules. Fields are added, never renamed.
type SteerDoc struct {
	Source  steer.Source     `json:"source"`
	Sysctls map[string]int64 `json:"sysctls"`
	NICs    []NICSteerJSON   `json:"nics"`
}

// NICSteerJSON is one NIC's steering: the reading whole, and per rx queue
// what serves it and how much of the RSS table names it.
type NICSteerJSON struct {
	NIC     string     `json:"nic"`
	Reading *steer.NIC `json:"reading"`
	// Queues are its rx queues; unknown when nothing is known per queue,
	// said once for the NIC, not per queue.
	Queues unknown.Value[[]QueueSteerJSON] `json:"queues"`
}

// MarshalJSON writes each unknown field's reason beside it.
func (j NICSteerJSON) MarshalJSON() ([]byte, error) {
	type plain NICSteerJSON
	return unknown.MarshalObject(plain(j))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (j *NICSteerJSON) UnmarshalJSON(b []byte) error {
	type plain NICSteerJSON
	return unknown.UnmarshalObject(b, (*plain)(j))
}

// QueueSteerJSON is one rx queue. Unknown values are null with their
// reason: napi_id when netdev netlink did not say, table_entries when
// the table is unknown, kthread_pid when NAPI is not threaded (or the
// pid is unknown).
type QueueSteerJSON struct {
	Queue uint32 `json:"queue"`
	// IRQs serve the queue: its NAPI instance's, else the queue vectors
	// named for it.
	IRQs         []int                 `json:"irqs"`
	NAPI         unknown.Value[uint32] `json:"napi_id"`
	KthreadPID   unknown.Value[int]    `json:"kthread_pid"`
	KthreadCPUs  unknown.Value[string] `json:"kthread_cpus"` // the kthread's Cpus_allowed_list
	KthreadLast  unknown.Value[int]    `json:"kthread_last_cpu"`
	TableEntries unknown.Value[int]    `json:"table_entries"`
	TableSize    int                   `json:"table_size"`
	// Rules are the locations of the ntuple rules delivering to it.
	Rules []uint32 `json:"rules"`
	// Exists is false for a queue the RSS table names but the NIC does
	// not have (more entries than rings).
	Exists bool `json:"exists"`
}

// MarshalJSON writes each unknown field's reason beside it.
func (qj QueueSteerJSON) MarshalJSON() ([]byte, error) {
	type plain QueueSteerJSON
	return unknown.MarshalObject(plain(qj))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (qj *QueueSteerJSON) UnmarshalJSON(b []byte) error {
	type plain QueueSteerJSON
	return unknown.UnmarshalObject(b, (*plain)(qj))
}

// Steering builds the steering document of the NICs sh read, with t's
// IRQs and the napi kthreads read from /proc (audit.ReadSteer); nil when
// sh is nil (not read).
func Steering(t *irq.Table, sh *steer.Host, threads map[int]*proc.Process) *SteerDoc {
	if sh == nil {
		return nil
	}
	doc := &SteerDoc{Source: sh.Source, Sysctls: sh.Sysctls, NICs: []NICSteerJSON{}}
	if doc.Sysctls == nil {
		doc.Sysctls = map[string]int64{}
	}
	for _, n := range sh.NICs {
		doc.NICs = append(doc.NICs, nicSteer(t, n, threads))
	}
	return doc
}

// nicSteer is one NIC's entry.
func nicSteer(t *irq.Table, n *steer.NIC, threads map[int]*proc.Process) NICSteerJSON {
	j := NICSteerJSON{NIC: n.Name, Reading: n}
	var irqs []*irq.IRQ
	if t != nil {
		irqs = t.ForNIC(n.Name)
	}
	if nothingKnown(n) {
		j.Queues = unknown.NotAs[[]QueueSteerJSON](partsKind(n, steer.PartChannels, steer.PartRSS, steer.PartQueues), unknownWords(n))
		return j
	}
	queues := []QueueSteerJSON{}
	tableWhy := unknown.Because(partsKind(n, steer.PartRSSTable, steer.PartRSS), "the RSS table is unknown")
	share := map[uint32]int{}
	size := 0
	if n.RSS != nil && len(n.RSS.Table) > 0 {
		share, size = n.RSS.Share(), len(n.RSS.Table)
	}
	rules := map[uint32][]uint32{}
	if n.Rules != nil {
		for _, r := range n.Rules.Rules {
			if r.Action == steer.RuleActionQueue && r.VF == 0 && r.Context == nil && r.Queue <= 1<<31 {
				rules[uint32(r.Queue)] = append(rules[uint32(r.Queue)], r.Location)
			}
		}
	}
	rings := rxRings(n)
	for _, q := range rxQueues(n, irqs, share, rules, rings) {
		qj := QueueSteerJSON{Queue: q, IRQs: []int{}, TableSize: size, Rules: rules[q], Exists: rings == 0 || q < rings}
		if qj.Rules == nil {
			qj.Rules = []uint32{}
		}
		qj.TableEntries = unknown.Not[int](tableWhy)
		if size > 0 {
			qj.TableEntries = unknown.Of(share[q])
		}
		napi := queueNAPI(n, q)
		if napi != nil {
			qj.setNAPI(napi, threads)
		} else {
			why := unknown.Because(partsKind(n, steer.PartQueues, steer.PartNAPI), fmt.Sprintf("netdev names no NAPI instance for rx queue %d", q))
			qj.NAPI, qj.KthreadPID = unknown.Not[uint32](why), unknown.Not[int](why)
			qj.KthreadCPUs, qj.KthreadLast = unknown.Not[string](why), unknown.Not[int](why)
		}
		qj.IRQs = queueIRQNumbers(irqs, q, napi)
		queues = append(queues, qj)
	}
	j.Queues = unknown.Of(queues)
	return j
}

// partsKind is the kind of the first of parts n says is unknown; not
// reported when none says.
func partsKind(n *steer.NIC, parts ...steer.Part) unknown.Kind {
	for _, p := range parts {
		if r, ok := n.Why(p); ok {
			return r.Kind
		}
	}
	return unknown.KindNotReported
}

// setNAPI fills in the queue's NAPI instance and its kthread, as /proc
// read it.
func (qj *QueueSteerJSON) setNAPI(napi *steer.NAPI, threads map[int]*proc.Process) {
	qj.NAPI = unknown.Of(napi.ID)
	if napi.PID <= 0 {
		na := unknown.Because(unknown.KindNotApplicable, "NAPI is not threaded")
		qj.KthreadPID, qj.KthreadCPUs, qj.KthreadLast = unknown.Not[int](na), unknown.Not[string](na), unknown.Not[int](na)
		return
	}
	qj.KthreadPID = unknown.Of(napi.PID)
	p := threads[napi.PID]
	if p == nil {
		unread := unknown.Because(unknown.KindNotCaptured, fmt.Sprintf("/proc/%d is not read", napi.PID))
		qj.KthreadCPUs, qj.KthreadLast = unknown.Not[string](unread), unknown.Not[int](unread)
		return
	}
	qj.KthreadCPUs = unknown.Of(p.Allowed.List())
	qj.KthreadLast = unknown.NotAs[int](unknown.KindNotReported, fmt.Sprintf("no last CPU in /proc/%d/stat", napi.PID))
	if len(p.Threads) > 0 {
		qj.KthreadLast = p.Threads[0].LastCPU
	}
}

// rxRings is how many rx rings the NIC has: the RSS reading's ring
// count, else the channels' rx queues; 0 when unknown.
func rxRings(n *steer.NIC) uint32 {
	if n.RSS != nil && n.RSS.Rings > 0 {
		return n.RSS.Rings
	}
	if n.Channels != nil {
		return n.Channels.RXQueues()
	}
	return 0
}

// rxQueues lists every rx queue anything names: the rings, netdev's
// queues, the table and the rules, and the queue IRQs when the ring
// count is unknown.
func rxQueues(n *steer.NIC, irqs []*irq.IRQ, share map[uint32]int, rules map[uint32][]uint32, rings uint32) []uint32 {
	seen := map[uint32]bool{}
	for q := range rings {
		seen[q] = true
	}
	for _, nq := range n.Queues {
		if nq.Type == steer.QueueTypeRX {
			seen[nq.ID] = true
		}
	}
	for _, x := range irqs {
		if rings > 0 {
			break // the rings say which queues exist; a vector past them serves none
		}
		if x.Owner == nil {
			continue
		}
		if q, ok := x.Owner.Queue.Get(); ok && x.Owner.Kind == irq.KindQueue && x.Owner.Dir != interrupts.DirTX {
			seen[uint32(q)] = true
		}
	}
	for q := range share {
		seen[q] = true
	}
	for q := range rules {
		seen[q] = true
	}
	out := make([]uint32, 0, len(seen))
	for q := range seen {
		out = append(out, q)
	}
	slices.Sort(out)
	return out
}

// queueNAPI is the NAPI instance serving rx queue q, or nil.
func queueNAPI(n *steer.NIC, q uint32) *steer.NAPI {
	for _, nq := range n.Queues {
		if nq.Type != steer.QueueTypeRX || nq.ID != q || nq.NAPI == 0 {
			continue
		}
		for i := range n.NAPIs {
			if n.NAPIs[i].ID == nq.NAPI {
				return &n.NAPIs[i]
			}
		}
	}
	return nil
}

// queueIRQNumbers are the IRQs serving rx queue q: its NAPI's, else the
// queue vectors named for it.
func queueIRQNumbers(irqs []*irq.IRQ, q uint32, napi *steer.NAPI) []int {
	if napi != nil {
		if n, ok := napi.IRQ.Get(); ok {
			return []int{n}
		}
	}
	out := []int{}
	for _, x := range irqs {
		if x.Owner != nil && x.Owner.Kind == irq.KindQueue && unknown.Is(x.Owner.Queue, int(q)) && x.Owner.Dir != interrupts.DirTX {
			out = append(out, x.IRQ)
		}
	}
	return out
}

// nothingKnown reports whether no part that says anything per queue is
// known: no channels, table, rules or netdev queues.
func nothingKnown(n *steer.NIC) bool {
	return n.Channels == nil && (n.RSS == nil || len(n.RSS.Table) == 0) && n.Rules == nil && len(n.Queues) == 0
}

// unknownWords says why a NIC's steering is unknown, by reason: "rss,
// ntuple: not supported by the driver (EOPNOTSUPP); queues, napi: not
// supported by this kernel".
func unknownWords(n *steer.NIC) string {
	if w := audit.WhyParts(n, n.UnknownParts()); w != "" {
		return w
	}
	return "the reading says nothing per queue"
}

// writeSteering writes, per NIC, a line saying what its steering is and a
// table of its rx queues; a NIC with nothing known gets one line saying
// why.
func writeSteering(w io.Writer, doc *SteerDoc) error {
	if doc == nil || len(doc.NICs) == 0 {
		return nil
	}
	if doc.Source == steer.SourceNone {
		// Said once: no NIC of the root has any of it.
		fmt.Fprintln(w)
		_, err := fmt.Fprint(w, wrapLine("steering unknown: the root holds no ethtool or netdev netlink capture (a snapshot taken with this version records it)", steerWidth))
		return err
	}
	for _, n := range doc.NICs {
		fmt.Fprintln(w)
		queues, known := n.Queues.Get()
		if !known {
			if _, err := fmt.Fprint(w, wrapLine(fmt.Sprintf("%s steering unknown: %s", n.NIC, n.Queues.Why().Detail), steerWidth)); err != nil {
				return err
			}
			continue
		}
		if _, err := fmt.Fprint(w, wrapLine(fmt.Sprintf("%s steering (%s): %s", n.NIC, doc.Source, steerSummary(n.Reading)), steerWidth)); err != nil {
			return err
		}
		if len(queues) == 0 {
			continue
		}
		if err := writeTable(w, []string{"RXQ", "IRQ", "NAPI", "KTHREAD", "ON", "RSS", "RULES"}, queueRows(queues)); err != nil {
			return err
		}
	}
	return nil
}

// steerWidth is the width the NIC lines wrap at: the queue tables fit
// in 80 columns, and so do they.
const steerWidth = 80

// queueRows is a row per rx queue.
func queueRows(queues []QueueSteerJSON) [][]string {
	rows := make([][]string, 0, len(queues))
	for _, q := range queues {
		napi, pid, on := "-", "-", "-"
		if id, ok := q.NAPI.Get(); ok {
			napi = strconv.FormatUint(uint64(id), 10)
		}
		if p, ok := q.KthreadPID.Get(); ok {
			pid = strconv.Itoa(p)
			on = "unread"
			if cpus, ok := q.KthreadCPUs.Get(); ok {
				on = units.OrDash(cpus)
				if last, ok := q.KthreadLast.Get(); ok {
					on += fmt.Sprintf(" (last %d)", last)
				}
			}
		}
		rss := "unknown"
		if e, ok := q.TableEntries.Get(); ok {
			rss = fmt.Sprintf("%d/%d", e, q.TableSize)
			switch {
			case !q.Exists:
				rss += " no such queue"
			case e == 0:
				rss += " no traffic"
			}
		}
		rules := "-"
		if len(q.Rules) > 0 {
			ls := make([]string, len(q.Rules))
			for i, l := range q.Rules {
				ls[i] = strconv.FormatUint(uint64(l), 10)
			}
			rules = strings.Join(ls, ",")
		}
		irqs := "-"
		if len(q.IRQs) > 0 {
			irqs = units.List(q.IRQs) // NAPI's IRQ is any u32 a reply names
		}
		rows = append(rows, []string{strconv.FormatUint(uint64(q.Queue), 10), irqs, napi, pid, on, rss, rules})
	}
	return rows
}

// steerSummary is the NIC's line: "16 combined channels (max 63); RSS
// table of 128 entries over 16 rings, toeplitz; 2 ntuple rules; NAPI
// threaded".
func steerSummary(n *steer.NIC) string {
	var parts []string
	if c := n.Channels; c != nil {
		switch {
		case c.Combined > 0:
			parts = append(parts, fmt.Sprintf("%d combined channels (max %d)", c.Combined, c.MaxCombined))
		case c.RX > 0:
			parts = append(parts, fmt.Sprintf("%d rx channels (max %d)", c.RX, c.MaxRX))
		}
	} else {
		parts = append(parts, "channels "+whyOr(n, steer.PartChannels))
	}
	if r := n.RSS; r != nil && len(r.Table) > 0 {
		s := fmt.Sprintf("RSS table of %d entries", len(r.Table))
		if r.Rings > 0 {
			s += fmt.Sprintf(" over %d rings", r.Rings)
		}
		if r.HashFunc != "" {
			s += ", " + r.HashFunc
		}
		parts = append(parts, s)
	} else if _, ok := n.Why(steer.PartRSS); ok || r == nil {
		parts = append(parts, "RSS table "+whyOr(n, steer.PartRSS))
	} else {
		// RSS answered (a hash function) but without a table.
		parts = append(parts, "RSS table "+whyOr(n, steer.PartRSSTable))
	}
	if n.Rules != nil {
		parts = append(parts, units.Plural(len(n.Rules.Rules), "ntuple rule", "ntuple rules"))
	} else {
		parts = append(parts, "ntuple rules "+whyOr(n, steer.PartRules))
	}
	switch t := n.Sysfs.Threaded; {
	case t == nil:
	case *t > 0:
		parts = append(parts, "NAPI threaded")
	default:
		parts = append(parts, "NAPI not threaded")
	}
	if len(n.Queues) == 0 {
		parts = append(parts, "NAPI ids "+whyOr(n, steer.PartQueues))
	}
	return strings.Join(parts, "; ")
}

// whyOr is "unknown: why" for an unknown part.
func whyOr(n *steer.NIC, p steer.Part) string {
	if r, ok := n.Why(p); ok {
		return "unknown: " + string(r.Kind)
	}
	return "unknown"
}
