package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/judge/flow"
)

// WriteFlow writes where one flow's packets land, a line per step, from
// the flow to the node, each step with where its answer came from.
func WriteFlow(w io.Writer, p *flow.Path) error {
	var lines [][2]string
	add := func(k, v string) { lines = append(lines, [2]string{k, v}) }
	add("flow", fmt.Sprintf("%s (%s; SRC is the peer, DST this host)", p.Flow, p.FlowType))
	if p.NIC != "" {
		add("nic", fmt.Sprintf("%s (%s)", p.NIC, p.NICBy))
	} else {
		add("nic", "none: "+p.NICBy)
	}
	flowRSSLines(p, add)
	if p.Rule != nil {
		add("ntuple", ruleText(p))
	}
	if q, ok := p.Queue.Get(); ok {
		add("queue", fmt.Sprintf("%d (%s)", q, p.QueueBy))
	} else {
		add("queue", p.Queue.Why().Detail)
	}
	if p.ARFS != "" {
		add("arfs", p.ARFS)
	}
	if p.Queue.Known() && p.NIC != "" {
		flowPlaceLines(p, add)
	}
	for _, n := range p.Notes {
		add("note", n)
	}
	if p.Observed != nil {
		flowObservedLines(p.Observed, add)
	}
	for _, l := range lines {
		if err := linef(w, "%-11s %s", l[0], l[1]); err != nil {
			return err
		}
	}
	return nil
}

// flowRSSLines says the RSS inputs and results.
func flowRSSLines(p *flow.Path, add func(k, v string)) {
	r := p.RSS
	if fields, ok := r.Fields.Get(); ok {
		f := string(fields)
		letters := f
		if f == "" {
			letters = "none"
		}
		add("hash on", fmt.Sprintf("%s (%s, from %s)", letters, fieldWords(f), r.FieldsFrom))
	}
	if r.Func != "" {
		add("function", fmt.Sprintf("%s (from %s)", r.Func, r.FuncFrom))
	}
	if len(r.Key) > 0 {
		add("key", fmt.Sprintf("%s (%d bytes, from %s)", r.Key, len(r.Key), r.KeyFrom))
	}
	if r.TableSize > 0 {
		add("table", fmt.Sprintf("%d entries (from %s)", r.TableSize, r.TableFrom))
	}
	if h, ok := r.Hash.Get(); ok {
		add("hash", fmt.Sprintf("0x%08x", h))
	}
	if i, ok := r.Index.Get(); ok {
		add("index", fmt.Sprintf("%d (%s)", i, r.IndexRule))
	}
	rq, known := r.Queue.Get()
	switch {
	case known && p.Rule != nil:
		add("rss queue", fmt.Sprintf("%d, overridden by ntuple rule %d", rq, p.Rule.Location))
	case !known && p.Queue.Known() && r.Queue.Why().Detail != "":
		add("rss", r.Queue.Why().Detail)
	}
}

// flowObservedLines says what each queue's counter did and the verdict.
func flowObservedLines(o *flow.Observation, add func(k, v string)) {
	src := o.Source
	for _, why := range []string{o.NotQStats, o.NotEthtool} {
		if why != "" {
			src += "; " + why
		}
	}
	add("observed", fmt.Sprintf("%.1fs on %s, counters: %s", o.Seconds, o.NIC, src))
	for _, d := range o.Queues {
		v := fmt.Sprintf("queue %d: +%d", d.Queue, d.Delta)
		if d.Reset {
			v = fmt.Sprintf("queue %d: unknown (counter reset)", d.Queue)
		}
		if len(d.IRQs) > 0 {
			v += " (irq " + joinInts(d.IRQs) + ")"
		}
		if len(d.Stats) > 0 {
			v += " (" + strings.Join(d.Stats, " + ") + ")"
		}
		add("rose", v)
	}
	add("verdict", o.Verdict)
	for _, n := range o.Notes {
		add("note", n)
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// fieldWords spells out ethtool's letters.
func fieldWords(f string) string {
	words := map[rune]string{'m': "L2 destination", 'v': "VLAN", 't': "L3 protocol", 's': "source address",
		'd': "destination address", 'f': "source port", 'n': "destination port", 'r': "discard"}
	var out []string
	for _, c := range f {
		out = append(out, words[c])
	}
	if len(out) == 0 {
		return "nothing hashed"
	}
	return strings.Join(out, ", ")
}

// ruleText says which ntuple rule matched and what it matches on.
func ruleText(p *flow.Path) string {
	r := p.Rule
	var m []string
	if r.SrcIP != "" && !zeroMask(r.SrcMask) {
		m = append(m, "src "+r.SrcIP+" mask "+r.SrcMask)
	}
	if r.DstIP != "" && !zeroMask(r.DstMask) {
		m = append(m, "dst "+r.DstIP+" mask "+r.DstMask)
	}
	if r.SrcPort != nil && r.SrcPortMask != 0 {
		m = append(m, fmt.Sprintf("src port %d/0x%04x", *r.SrcPort, r.SrcPortMask))
	}
	if r.DstPort != nil && r.DstPortMask != 0 {
		m = append(m, fmt.Sprintf("dst port %d/0x%04x", *r.DstPort, r.DstPortMask))
	}
	on := "any packet of the type"
	if len(m) > 0 {
		on = strings.Join(m, ", ")
	}
	return fmt.Sprintf("rule %d (%s: %s; a set mask bit must match) overrides RSS", r.Location, r.FlowType, on)
}

// zeroMask reports whether an address mask matches nothing (0.0.0.0, ::).
func zeroMask(m string) bool { return m == "0.0.0.0" || m == "::" }

// flowPlaceLines says where the queue's work runs.
func flowPlaceLines(p *flow.Path, add func(k, v string)) {
	if q, ok := p.IRQ.Get(); ok {
		eff := "effective unknown"
		if e, ok := q.Effective.Get(); ok {
			eff = "effective " + orNoneText(e)
		}
		add("irq", fmt.Sprintf("%d %s: requested %s, %s (matched by %s)", q.IRQ, q.Name, orNoneText(q.Requested), eff, q.By))
	} else {
		add("irq", fmt.Sprintf("unknown: no IRQ of %s is matched to queue %d", p.NIC, p.Queue.Or(0)))
	}
	if n, ok := p.NAPI.Get(); ok {
		add("napi", napiText(n))
	}
	pr, _ := p.Processing.Get()
	switch pr {
	case flow.ProcessingNAPIThread:
		add("processing", "in the NAPI kernel thread, wherever the scheduler runs it within its allowed CPUs")
	case flow.ProcessingIRQ:
		add("processing", "NET_RX softirq on the CPU the IRQ lands on")
	default:
		add("processing", "unknown: neither the queue's IRQ nor its NAPI thread is known")
	}
	rps, known := p.RPS.Get()
	switch {
	case !known:
		add("rps", "unknown: no rps_cpus for the queue")
	case rps == "":
		add("rps", "off (rps_cpus is empty)")
	default:
		add("rps", "on: the queue's packets are handed to CPUs "+rps+" after the softirq")
	}
	add("node", nodeText(p))
}

func napiText(n flow.QueueNAPI) string {
	var s string
	if n.ID != 0 {
		s = "id " + strconv.FormatUint(uint64(n.ID), 10) + ", "
	}
	if !n.Threaded {
		return s + "not threaded"
	}
	pid, okPID := n.PID.Get()
	allowed, okAllowed := n.Allowed.Get()
	if !okPID || !okAllowed || allowed == "" {
		why := n.PID.Why()
		if okPID {
			why = n.Allowed.Why()
		}
		return s + "threaded; thread unknown: " + why.Detail
	}
	return fmt.Sprintf("%sthreaded: %s pid %d, allowed CPUs %s, last ran on %s", s, n.Comm, pid, allowed, n.LastCPU)
}

func nodeText(p *flow.Path) string {
	nic := "NIC's node unknown"
	node, known := p.Node.Get()
	if known {
		nic = "NIC on node " + strconv.Itoa(node)
	}
	switch {
	case p.CPUNodes == "":
		return nic + "; the processing CPUs' node unknown"
	case known && p.CPUNodes == strconv.Itoa(node):
		return nic + "; processing on node " + p.CPUNodes + " (local)"
	case known:
		return nic + "; processing on node " + p.CPUNodes + " (remote)"
	}
	return nic + "; processing on node " + p.CPUNodes
}

func orNoneText(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// writeThreads says where each of a flow's threads last ran relative to
// the CPU processing it.
func writeThreads(w io.Writer, ts []flow.ThreadPlace) error {
	for _, t := range ts {
		rel := "unknown (the processing CPU or the thread's last CPU is not known)"
		if r, ok := t.Relation.Get(); ok {
			rel = r.String()
		}
		if err := linef(w, "%-11s %d %s last ran on CPU %d: %s", "thread", t.TID, t.Comm, t.LastCPU.Or(-1), rel); err != nil {
			return err
		}
	}
	return nil
}

// FlowProcessesDoc is the JSON document of flow --pid/--comm.
type FlowProcessesDoc struct {
	Processes []flow.Process `json:"processes"`
}

// WriteFlowProcesses writes each process's flows as WriteFlow does, with
// where its threads last ran relative to each flow's processing CPU.
func WriteFlowProcesses(w io.Writer, ps []flow.Process) error {
	for i, p := range ps {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		flows, known := p.Flows.Get()
		head := fmt.Sprintf("process %d %s: %d connected sockets", p.PID, p.Comm, len(flows))
		if p.Skipped > 0 {
			head += fmt.Sprintf(" (%d listening or unconnected left out)", p.Skipped)
		}
		if !known {
			head = fmt.Sprintf("process %d %s: %s", p.PID, p.Comm, p.Flows.Why().Detail)
		}
		if err := linef(w, "%s", head); err != nil {
			return err
		}
		for _, f := range flows {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
			if err := WriteFlow(w, f); err != nil {
				return err
			}
			if err := writeThreads(w, f.Threads); err != nil {
				return err
			}
		}
	}
	return nil
}
