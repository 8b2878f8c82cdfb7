package report

import (
	"bufio"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/safetext"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// IRQDoc is the JSON document of `irqnuma irq list`.
type IRQDoc struct {
	IRQs  []IRQJSON `json:"irqs"`
	Notes []string  `json:"notes"`
	// Steer is the listed NICs' steering, read only with --steer; absent
	// without it.
	Steer *SteerDoc `json:"steer,omitempty"`
}

// IRQJSON is one IRQ. Unknown values are null with their reason beside
// them (package unknown): affinity and effective when the tree lacks the
// file, local when the device's locality is unknown.
type IRQJSON struct {
	IRQ   int                     `json:"irq"`
	Name  string                  `json:"name"`
	NIC   string                  `json:"nic"`
	Queue unknown.Value[int]      `json:"queue"` // not applicable for a non-queue vector or no NIC
	Kind  unknown.Value[irq.Kind] `json:"kind"`  // "queue", "other"; not applicable when no NIC
	Dir   interrupts.Dir          `json:"dir,omitempty"`
	Chip  string                  `json:"chip"`
	// Affinity and Effective are kernel CPU lists.
	Affinity       unknown.Value[string] `json:"affinity"`
	Effective      unknown.Value[string] `json:"effective"`
	Node           unknown.Value[int]    `json:"node"` // /proc/irq/N/node
	AffinityNodes  []int                 `json:"affinity_nodes"`
	EffectiveNodes []int                 `json:"effective_nodes"`
	Local          unknown.Value[bool]   `json:"local"`
	Managed        unknown.Value[bool]   `json:"managed"` // unknown where a kernel before 6.12 does not mark managed IRQs
	// Total and PerCPU are unknown, not zero, when the tree has no
	// /proc/interrupts. (An IRQ the file has no row for is counted: the
	// kernel leaves out only IRQs without a handler that never fired.)
	Total  unknown.Value[uint64] `json:"total"`
	PerCPU unknown.Value[PerCPU] `json:"per_cpu"`
}

// MarshalJSON writes the unknown values' reasons beside them.
func (q IRQJSON) MarshalJSON() ([]byte, error) {
	type plain IRQJSON
	return unknown.MarshalObject(plain(q))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (q *IRQJSON) UnmarshalJSON(b []byte) error {
	type plain IRQJSON
	return unknown.UnmarshalObject(b, (*plain)(q))
}

// PerCPU is an IRQ's non-zero counts by CPU. It is a JSON object keyed by
// CPU id, keys in the order encoding/json gives a map's (sorted as
// strings: "0", "1", "10", "11", "2", ...), written straight from the
// IRQ's count columns: no map per IRQ.
type PerCPU struct {
	cols   *perCPUCols
	counts []uint64 // by column
}

// perCPUCols is what every IRQ of a table shares: the CPU id of each
// count column and the columns in key order.
type perCPUCols struct {
	cpus  []int
	order []int
}

func newPerCPUCols(cpus []int) *perCPUCols {
	c := &perCPUCols{cpus: cpus, order: make([]int, len(cpus))}
	for i := range c.order {
		c.order[i] = i
	}
	keys := make([]string, len(cpus))
	for i, cpu := range cpus {
		keys[i] = strconv.Itoa(cpu)
	}
	slices.SortStableFunc(c.order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	return c
}

// Each calls fn for each CPU with a non-zero count, in key order; counts
// of a CPU listed in two columns add up.
func (p PerCPU) Each(fn func(cpu int, count uint64)) {
	if p.cols == nil {
		return
	}
	order := p.cols.order
	for k := 0; k < len(order); k++ {
		i := order[k]
		if i >= len(p.counts) {
			continue
		}
		cpu, n := p.cols.cpus[i], p.counts[i]
		for k+1 < len(order) && p.cols.cpus[order[k+1]] == cpu {
			k++
			if j := order[k]; j < len(p.counts) {
				n += p.counts[j]
			}
		}
		if n != 0 {
			fn(cpu, n)
		}
	}
}

// MarshalJSON writes the object.
func (p PerCPU) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(p.counts)*8)
	b = append(b, '{')
	first := true
	p.Each(func(cpu int, n uint64) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(cpu), 10)
		b = append(b, `":`...)
		b = strconv.AppendUint(b, n, 10)
	})
	return append(b, '}'), nil
}

// IRQs builds the irq list document.
func IRQs(h *topology.Host, t *irq.Table) IRQDoc {
	doc := IRQDoc{IRQs: make([]IRQJSON, 0, len(t.IRQs)), Notes: irqNotes(h, t)}
	cols := newPerCPUCols(t.CPUs)
	for i := range t.IRQs {
		doc.IRQs = append(doc.IRQs, irqJSON(h, cols, &t.IRQs[i]))
	}
	return doc
}

func irqNotes(h *topology.Host, t *irq.Table) []string {
	return append(append([]string{}, h.Notes...), t.Notes...)
}

// WriteIRQsJSON writes the irq list document exactly as jsondoc.Write
// writes IRQs(h, t) indented, but one
// IRQ at a time and straight from the table: the document of a host with
// thousands of IRQs and CPUs is never held whole, and no map or
// reflection is involved but for the steering (sd, nil when not read),
// which is small. Each piece holding a string goes through
// safetext.JSON.
func WriteIRQsJSON(w io.Writer, h *topology.Host, t *irq.Table, sd *SteerDoc) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	cols := newPerCPUCols(t.CPUs)
	bw.WriteString("{\n  \"schema\": \"" + string(jsondoc.SchemaIRQList) + "\",\n  \"version\": " +
		strconv.Itoa(jsondoc.Version) + ",\n  \"irqs\": [")
	var b []byte
	for i := range t.IRQs {
		if i > 0 {
			bw.WriteByte(',')
		}
		b = appendIRQJSON(b[:0], irqJSON(h, cols, &t.IRQs[i]))
		if _, err := bw.Write(safetext.JSON(b)); err != nil {
			return err
		}
	}
	if len(t.IRQs) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("],\n  \"notes\": ")
	notes := irqNotes(h, t)
	if len(notes) == 0 {
		bw.WriteString("[]")
	} else {
		b = append(b[:0], '[')
		for i, n := range notes {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n    "...)
			b = appendJSONString(b, n)
		}
		b = append(b, "\n  ]"...)
		bw.Write(safetext.JSON(b))
	}
	if sd != nil {
		sb, err := json.MarshalIndent(sd, "  ", "  ")
		if err != nil {
			return err
		}
		bw.WriteString(",\n  \"steer\": ")
		bw.Write(safetext.JSON(sb))
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}

// appendIRQJSON appends one element of the irqs array, at the indent
// encoding/json gives it there.
func appendIRQJSON(b []byte, j IRQJSON) []byte {
	const in = "\n      " // a field's indent
	b = append(b, "\n    {"...)
	b = append(b, in+`"irq": `...)
	b = strconv.AppendInt(b, int64(j.IRQ), 10)
	b = append(b, ","+in+`"name": `...)
	b = appendJSONString(b, j.Name)
	b = append(b, ","+in+`"nic": `...)
	b = appendJSONString(b, j.NIC)
	b = append(b, ","+in+`"queue": `...)
	b = appendJSONValue(b, j.Queue, func(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) })
	b = append(b, ","+in+`"kind": `...)
	b = appendJSONValue(b, j.Kind, func(b []byte, v irq.Kind) []byte { return appendJSONString(b, string(v)) })
	if j.Dir != "" {
		b = append(b, ","+in+`"dir": `...)
		b = appendJSONString(b, string(j.Dir))
	}
	b = append(b, ","+in+`"chip": `...)
	b = appendJSONString(b, j.Chip)
	b = append(b, ","+in+`"affinity": `...)
	b = appendJSONValue(b, j.Affinity, appendJSONString)
	b = append(b, ","+in+`"effective": `...)
	b = appendJSONValue(b, j.Effective, appendJSONString)
	b = append(b, ","+in+`"node": `...)
	b = appendJSONValue(b, j.Node, func(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) })
	b = append(b, ","+in+`"affinity_nodes": `...)
	b = appendJSONInts(b, j.AffinityNodes)
	b = append(b, ","+in+`"effective_nodes": `...)
	b = appendJSONInts(b, j.EffectiveNodes)
	b = append(b, ","+in+`"local": `...)
	b = appendJSONValue(b, j.Local, strconv.AppendBool)
	b = append(b, ","+in+`"managed": `...)
	b = appendJSONValue(b, j.Managed, strconv.AppendBool)
	b = append(b, ","+in+`"total": `...)
	b = appendJSONValue(b, j.Total, func(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) })
	b = append(b, ","+in+`"per_cpu": `...)
	b = appendJSONValue(b, j.PerCPU, func(b []byte, p PerCPU) []byte {
		b = append(b, '{')
		first := true
		p.Each(func(cpu int, n uint64) {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, in+`  "`...)
			b = strconv.AppendInt(b, int64(cpu), 10)
			b = append(b, `": `...)
			b = strconv.AppendUint(b, n, 10)
		})
		if !first {
			b = append(b, in...)
		}
		return append(b, '}')
	})
	// The reasons of the unknown values, after every field, in the
	// fields' order, as unknown.MarshalObject writes them.
	for _, u := range []struct {
		name string
		why  unknownReason
	}{
		{"queue", j.Queue}, {"kind", j.Kind}, {"affinity", j.Affinity}, {"effective", j.Effective},
		{"node", j.Node}, {"local", j.Local}, {"managed", j.Managed}, {"total", j.Total}, {"per_cpu", j.PerCPU},
	} {
		if u.why.Known() {
			continue
		}
		b = append(b, ","+in+`"`...)
		b = append(b, u.name...)
		b = append(b, unknown.Suffix+`": {`...)
		r := u.why.Why()
		b = append(b, in+`  "reason": `...)
		b = appendJSONString(b, string(r.Kind))
		if r.Detail != "" {
			b = append(b, ","+in+`  "detail": `...)
			b = appendJSONString(b, r.Detail)
		}
		b = append(b, in+"}"...)
	}
	return append(b, "\n    }"...)
}

// unknownReason is what appendIRQJSON reads of a Value of any type.
type unknownReason interface {
	Known() bool
	Why() unknown.Reason
}

// appendJSONValue appends v as encoding/json writes a Value: null when
// unknown, else the value as put appends it.
func appendJSONValue[T any](b []byte, v unknown.Value[T], put func([]byte, T) []byte) []byte {
	x, ok := v.Get()
	if !ok {
		return append(b, "null"...)
	}
	return put(b, x)
}

// appendJSONInts appends a list of ints at a field's indent.
func appendJSONInts(b []byte, v []int) []byte {
	if len(v) == 0 {
		return append(b, "[]"...)
	}
	b = append(b, '[')
	for i, n := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n        "...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, "\n      ]"...)
}

// appendJSONString appends s as encoding/json writes a string: quotes,
// backslash and control characters escaped, <, > and & as \u003c, \u003e
// and \u0026 (HTML-safe, its default), U+2028 and U+2029 escaped, and
// invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// irqJSON is the document's entry for q.
func irqJSON(h *topology.Host, cols *perCPUCols, q *irq.IRQ) IRQJSON {
	j := IRQJSON{IRQ: q.IRQ, Name: q.Name, Chip: q.Chip, Node: q.Node, Managed: q.Managed,
		Queue: notNIC[int](), Kind: notNIC[irq.Kind](),
		Total:         unknown.Of(q.Total()),
		PerCPU:        unknown.Of(PerCPU{cols: cols, counts: q.Counts}),
		AffinityNodes: []int{}, EffectiveNodes: []int{}}
	if cols.cpus == nil {
		j.Total = unknown.NotAs[uint64](unknown.KindNotCaptured, "no /proc/interrupts")
		j.PerCPU = unknown.NotAs[PerCPU](unknown.KindNotCaptured, "no /proc/interrupts")
	}
	if o := q.Owner; o != nil {
		j.NIC, j.Queue, j.Kind, j.Dir = o.NIC, o.Queue, unknown.Of(o.Kind), o.Dir
	}
	j.Affinity, j.AffinityNodes = cpuList(h, q.Affinity)
	j.Effective, j.EffectiveNodes = cpuList(h, q.Effective)
	j.Local = irqLocal(h, q)
	return j
}

// notNIC is the value of a NIC field of an IRQ no NIC owns.
func notNIC[T any]() unknown.Value[T] {
	return unknown.NotAs[T](unknown.KindNotApplicable, "not a NIC's IRQ")
}

// cpuList is a CPU set as a kernel list, and its nodes.
func cpuList(h *topology.Host, set unknown.Value[cpuset.Set]) (unknown.Value[string], []int) {
	s, ok := set.Get()
	if !ok {
		return unknown.Not[string](set.Why()), []int{}
	}
	nodes, _ := h.NodesOf(s)
	return unknown.Of(s.List()), nodes.IDs()
}

// irqLocal is whether q lands on CPUs local to its device (audit.Place),
// or why that is unknown.
func irqLocal(h *topology.Host, q *irq.IRQ) unknown.Value[bool] {
	p := audit.Place(h, q)
	switch {
	case p.Local.Known():
		return p.Local
	case !p.Where.Known(): // no affinity file: nowhere known
		return unknown.Not[bool](q.Affinity.Why())
	case q.Owner != nil:
		return unknown.NotAs[bool](unknown.KindNotReported, "the NUMA locality of "+q.Owner.NIC+" is unknown")
	case !q.Node.Known():
		return unknown.Not[bool](q.Node.Why())
	case !q.Managed.Known():
		return unknown.Not[bool](q.Managed.Why())
	case unknown.Is(q.Managed, true):
		return unknown.NotAs[bool](unknown.KindNotApplicable, "a managed IRQ's node is that of the CPUs it serves, not its device's")
	}
	return unknown.NotAs[bool](unknown.KindNotReported, "node "+q.Node.String()+" is not one of the host's nodes")
}

// WriteIRQs writes the human form of the irq list.
func WriteIRQs(w io.Writer, doc IRQDoc) error {
	rows := make([][]string, 0, len(doc.IRQs))
	for _, q := range doc.IRQs {
		queue := "-"
		if n, ok := q.Queue.Get(); ok {
			queue = strconv.Itoa(n)
			if q.Dir != "" {
				queue = string(q.Dir) + "-" + queue
			}
		} else if q.NIC != "" {
			queue = "other"
		}
		local := yesNo(q.Local)
		node := "-"
		if n, ok := q.Node.Get(); ok {
			node = strconv.Itoa(n)
		}
		managed := yesNo(q.Managed)
		rows = append(rows, []string{strconv.Itoa(q.IRQ), units.OrDash(q.Name), units.OrDash(q.NIC), queue,
			strOrUnknown(q.Affinity), strOrUnknown(q.Effective), node, units.OrDash(units.Ints(q.EffectiveOrAffinityNodes(), ",")),
			local, managed, total(q)})
	}
	if len(rows) == 0 {
		if _, err := io.WriteString(w, "no IRQs\n"); err != nil {
			return err
		}
		return writeNotes(w, doc.Notes)
	}
	header := []string{"IRQ", "NAME", "NIC", "QUEUE", "AFFINITY", "EFFECTIVE", "DEV-NODE", "CPU-NODES", "LOCAL", "MANAGED", "TOTAL"}
	if err := writeTable(w, header, rows); err != nil {
		return err
	}
	if err := writeSteering(w, doc.Steer); err != nil {
		return err
	}
	return writeNotes(w, doc.Notes)
}

// total is the TOTAL cell: the count, or "unknown" without a
// /proc/interrupts (never a 0 nothing said).
func total(q IRQJSON) string {
	n, ok := q.Total.Get()
	if !ok {
		return "unknown"
	}
	return strconv.FormatUint(n, 10)
}

// yesNo is "yes" or "no", or "unknown".
func yesNo(v unknown.Value[bool]) string {
	b, ok := v.Get()
	switch {
	case !ok:
		return "unknown"
	case b:
		return "yes"
	}
	return "no"
}

// EffectiveOrAffinityNodes returns the nodes of the effective CPUs when
// known, else those of the requested ones.
func (q IRQJSON) EffectiveOrAffinityNodes() []int {
	if s, ok := q.Effective.Get(); ok && s != "" {
		return q.EffectiveNodes
	}
	return q.AffinityNodes
}

func strOrUnknown(v unknown.Value[string]) string {
	s, ok := v.Get()
	if !ok {
		return "unknown"
	}
	if s == "" {
		return "none"
	}
	return strings.TrimSpace(s)
}
