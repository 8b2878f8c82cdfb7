package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/run/bench"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// BenchDoc is the JSON document of `irqnuma bench`: the plan, every
// cell with its runs and summary, how the bench ended, and the audit of
// the host at the start. Fields are added, never renamed.
type BenchDoc struct {
	*bench.Result
	Audit AuditDoc `json:"audit"`
}

// NewBenchDoc is the document of a bench's result.
func NewBenchDoc(res *bench.Result) BenchDoc {
	fs := res.Findings
	if fs == nil {
		fs = []audit.Finding{}
	}
	return BenchDoc{Result: res, Audit: AuditDoc{Findings: fs, Summary: audit.Summarize(fs)}}
}

// WriteBench writes a bench as a table like the published ones: a
// header saying what ran where, the audit at the start, one row per
// placement (result, CPU load of the median run, NIC rates, whether the
// softirq was the bottleneck), the placements the host does not allow
// with why, and what the columns mean.
func WriteBench(w io.Writer, doc BenchDoc) error {
	var b bytes.Buffer
	writeBenchHeader(&b, doc)
	if doc.DryRun {
		return writeBenchMatrix(w, &b, doc)
	}
	scale := benchScale(doc)
	header := []string{"PLACEMENT", "IRQ CPUS", "APP CPUS", "RUNS", scale.name, "MIN", "MAX", "RETR",
		"APP CPU", "%USR", "%SYS", "%SOFT", "SOFTIRQ CPU", "%SOFT", "IRQS/S", "NET_RX/S", "BOUND"}
	var rows [][]string
	var na []string
	for _, c := range doc.Cells {
		if !c.Applicable {
			rows = append(rows, append([]string{c.Name, "-", "-", "-", "n/a"}, dashes(len(header)-5)...))
			na = append(na, fmt.Sprintf("%s: not applicable: %s", c.Name, c.Reason))
			continue
		}
		rows = append(rows, benchRow(c, scale))
	}
	b.WriteByte('\n')
	if err := writeTable(&b, header, rows); err != nil {
		return err
	}
	for _, s := range na {
		linef(&b, "%s", s)
	}
	writeBenchLegend(&b, doc, scale)
	if doc.Stopped != "" {
		linef(&b, "stopped early: %s", doc.Stopped)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeBenchMatrix ends a dry run's output: each placement, where it
// puts what, and what it shows.
func writeBenchMatrix(w io.Writer, b *bytes.Buffer, doc BenchDoc) error {
	var rows [][]string
	for _, c := range doc.Cells {
		if !c.Applicable {
			rows = append(rows, []string{c.Name, "-", "-", "-", "not applicable: " + c.Reason})
			continue
		}
		rows = append(rows, []string{c.Name, nodeCPUs(c.IRQCPUs, c.IRQNode), nodeCPUs(c.AppCPUs, c.AppNode), memWord(c), c.Doc})
	}
	b.WriteByte('\n')
	if err := writeTable(b, []string{"PLACEMENT", "IRQ CPUS", "APP CPUS", "MEM", "WHAT"}, rows); err != nil {
		return err
	}
	b.WriteString("dry run: nothing was changed or run\n")
	_, err := w.Write(b.Bytes())
	return err
}

func memWord(c bench.CellResult) string {
	if c.MemNodes.IsEmpty() {
		return "-"
	}
	return "bind " + c.MemNodes.List()
}

func writeBenchHeader(b *bytes.Buffer, doc BenchDoc) {
	p := doc.Plan
	linef(b, "irqnuma bench: %s (%s), node %d (%s), queue IRQs %s", p.NIC,
		strings.TrimSpace(p.Driver+" "+p.Device), p.NICNode, p.Locality, irqRange(p.QueueIRQs))
	remote := "none: " + p.RemoteNode.Why().Detail
	if n, ok := p.RemoteNode.Get(); ok {
		remote = fmt.Sprintf("node %d (%s)", n, p.RemoteBy)
	}
	linef(b, "remote node: %s", remote)
	for _, s := range p.Nodes {
		if s.Unusable != "" {
			linef(b, "node %d: %s", s.Node, s.Unusable)
			continue
		}
		fmt.Fprintf(b, "node %d: IRQs on %s, the command on %s\n", s.Node, cpusWord(s.IRQCPUs), orNone(s.AppCPUs))
	}
	if p.Flow != nil {
		writeBenchFlow(b, p)
	}
	linef(b, "command: %s", shellJoin(p.Command))
	linef(b, "result: %s; %s per placement", p.Parser, units.Plural(p.Repeat, "run", "runs"))
	fmt.Fprintf(b, "audit at the start: %s\n", strings.TrimPrefix(verdict(doc.Audit.Findings, audit.SeverityWarning), "verdict: "))
	for _, f := range doc.Audit.Findings {
		linef(b, "  %s %s: %s", f.Severity, f.Check, f.Message)
	}
}

// writeBenchFlow says where the flow of the flow placements lands and
// which CPUs those placements use.
func writeBenchFlow(b *bytes.Buffer, p *bench.Plan) {
	f := p.Flow
	name := f.Flow
	if name == "" {
		name = "of the command (--observe)"
	}
	q, ok := f.Queue.Get()
	if !ok {
		linef(b, "flow %s: %s", name, f.Queue.Why().Detail)
		return
	}
	irq, irqKnown := f.IRQ.Get()
	irqWord := "IRQ unknown"
	if irqKnown {
		irqWord = fmt.Sprintf("IRQ %d", irq)
	}
	pid, pidKnown := f.NAPIPID.Get()
	if pidKnown && pid > 0 {
		irqWord += fmt.Sprintf(", NAPI thread %d", pid)
	}
	linef(b, "flow %s: queue %d (%s), %s", name, q, f.QueueBy, irqWord)
	core, ok := f.Core.Get()
	if !ok {
		return
	}
	cpu := func(c unknown.Value[int]) string {
		if id, ok := c.Get(); ok {
			return strconv.Itoa(id)
		}
		return "none (" + c.Why().Detail + ")"
	}
	moved := fmt.Sprintf("IRQ %d", f.IRQ.Or(-1))
	if pidKnown && pid > 0 {
		moved += fmt.Sprintf(" and NAPI thread %d", pid)
	}
	linef(b, "flow placements: %s on CPU %d, %s's other IRQs left where they are; SMT sibling %s; other core %s",
		moved, core, p.NIC, cpu(f.Sibling), cpu(f.Other))
}

// benchRow is an applicable cell's row: its summary and its median
// run's figures.
func benchRow(c bench.CellResult, scale benchUnit) []string {
	row := []string{c.Name, nodeCPUs(c.IRQCPUs, c.IRQNode), nodeCPUs(c.AppCPUs, c.AppNode), runsWord(c)}
	s := c.Summary
	if s == nil {
		word := "-" // not run: the bench stopped first
		if len(c.Runs) > 0 {
			word = "failed"
		}
		return append(append(row, word), dashes(12)...)
	}
	retr := "-"
	if s.Retransmits != nil {
		retr = strconv.FormatFloat(*s.Retransmits, 'f', 0, 64)
	}
	row = append(row, scale.format(s.Median), scale.format(s.Min), scale.format(s.Max), retr)
	r := c.Runs[s.MedianRun]
	row = append(row, loadCells(r.App, false)...)
	row = append(row, loadCells(r.Softirq, true)...)
	bound := "-"
	if r.Softirq != nil {
		bound = map[bool]string{true: "yes", false: "no"}[r.SoftirqBound]
	}
	return append(row, rate(r.NICIRQsPerSec), rateValue(r.NetRXPerSec), bound)
}

// loadCells is a CPU and its percentages: %usr %sys %soft for the
// command's CPU, %soft for the softirq CPU.
func loadCells(l *bench.CPULoad, softirq bool) []string {
	switch {
	case l == nil && softirq:
		return dashes(2)
	case l == nil:
		return dashes(4)
	case softirq:
		return []string{strconv.Itoa(l.CPU), pctValue(l.Soft)}
	}
	return []string{strconv.Itoa(l.CPU), pctValue(l.Usr), pctValue(l.Sys), pctValue(l.Soft)}
}

func runsWord(c bench.CellResult) string {
	ok := 0
	for _, r := range c.Runs {
		if r.Error == "" {
			ok++
		}
	}
	if ok == len(c.Runs) {
		return strconv.Itoa(ok)
	}
	return fmt.Sprintf("%d/%d", ok, len(c.Runs))
}

func nodeCPUs(s cpuset.Set, node unknown.Value[int]) string {
	return fmt.Sprintf("%s (n%d)", s, node.Or(-1))
}

func dashes(n int) []string {
	d := make([]string, n)
	for i := range d {
		d[i] = "-"
	}
	return d
}

func orNone(s cpuset.Set) string {
	if s.IsEmpty() {
		return "no other core"
	}
	return cpusWord(s)
}

// shellJoin writes a command line as a shell would take it back.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]{}#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// benchUnit is the unit the result columns are shown in.
type benchUnit struct {
	name  string  // column header: "GBIT/S", "RESULT", the --unit
	label string  // after a number: "Gbit/s", the --unit, ""
	div   float64 // shown = value / div
}

// benchScale picks the result columns' unit: for bits/s the largest
// of Gbit/s, Mbit/s and kbit/s every median reaches; otherwise the
// parser's unit, or the one the results name.
func benchScale(doc BenchDoc) benchUnit {
	unit := doc.Plan.Parser.Unit
	for _, c := range doc.Cells {
		if c.Summary != nil && unit == "" {
			unit = c.Summary.Unit // a regexp's group named unit
		}
	}
	if unit != "bit/s" {
		if unit == "" {
			return benchUnit{"RESULT", "", 1}
		}
		return benchUnit{strings.ToUpper(unit), unit, 1}
	}
	low := math.Inf(1)
	for _, c := range doc.Cells {
		if c.Summary != nil && c.Summary.Median > 0 {
			low = math.Min(low, c.Summary.Median)
		}
	}
	for _, u := range []benchUnit{{"GBIT/S", "Gbit/s", 1e9}, {"MBIT/S", "Mbit/s", 1e6}, {"KBIT/S", "kbit/s", 1e3}} {
		if low >= u.div && !math.IsInf(low, 1) {
			return u
		}
	}
	return benchUnit{"BIT/S", "bit/s", 1}
}

// format prints a value in the unit with three or four significant
// digits, never an exponent.
func (u benchUnit) format(v float64) string {
	v /= u.div
	switch a := math.Abs(v); {
	case a >= 1000 || a == 0:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func writeBenchLegend(b *bytes.Buffer, doc BenchDoc, scale benchUnit) {
	p := doc.Plan
	fmt.Fprintf(b, "\n%s: the median of each placement's runs (MIN, MAX: the lowest and highest)", scale.name)
	if p.Parser.Kind == bench.ParseIperf3 {
		b.WriteString(", of the bits/s iperf3 received; RETR: TCP retransmits, median")
	}
	b.WriteString(".\n")
	fmt.Fprintf(b, "Of the median run: APP CPU is the busiest of the command's CPUs; SOFTIRQ CPU the one that ran most\n"+
		"of %s's softirq (- when no CPU took its queue IRQs); IRQS/S its queue interrupts; NET_RX/S the NET_RX\n"+
		"softirqs on the IRQ and command CPUs; BOUND: the softirq CPU was saturated, mostly by softirq.\n", safeCell(p.NIC))
}

// WriteBenchAs writes a bench's document as JSON (indented, as every
// command's) or as WriteBench's table.
func WriteBenchAs(w io.Writer, doc BenchDoc, asJSON bool) error {
	if !asJSON {
		return WriteBench(w, doc)
	}
	return jsondoc.Write(w, jsondoc.SchemaBench, doc, true)
}

// BenchProgress says each step of a bench as it happens, on stderr:
// every change before it is made.
type BenchProgress struct {
	W     io.Writer
	total int
	n     int
	unit  string
}

// Planned implements bench.Observer.
func (p *BenchProgress) Planned(res *bench.Result) {
	runs := 0
	for _, c := range res.Cells {
		if c.Applicable {
			runs += res.Plan.Repeat
		}
	}
	p.total, p.unit = runs, res.Plan.Parser.Unit
	if !res.DryRun {
		linef(p.W, "bench: %d runs of %s on %s", runs, shellJoin(res.Plan.Command), res.Plan.NIC)
	}
}

// Pinning implements bench.Observer: where the IRQs go, before the
// first write.
func (p *BenchProgress) Pinning(pin *tune.PinResult) {
	WritePinPlanned(p.W, pin)
	if pin.Changes > 0 {
		WritePin(p.W, pin.Rows, false, true)
	}
}

// Pinned implements bench.Observer.
func (p *BenchProgress) Pinned(pin *tune.PinResult) {
	if pin.Err() != nil {
		WritePinFailures(p.W, pin)
		return
	}
	if pin.StateFile == "" {
		fmt.Fprintln(p.W, "nothing to change: the IRQs are already there")
		return
	}
	WriteManagedSkips(p.W, pin)
	WriteNotes(p.W, pin.Notes)
	linef(p.W, "changed %d of %d; old values saved in %s (if this bench is killed: irqnuma irq restore %s)",
		pin.Changed, pin.Changes, pin.StateFile, pin.StateFile)
}

// Running implements bench.Observer.
func (p *BenchProgress) Running(c *bench.PlannedCell, repeat int) {
	p.n++
	mem := "memory not bound"
	if !c.MemNodes.IsEmpty() {
		mem = "memory bound to node " + c.MemNodes.List()
	}
	linef(p.W, "run %d/%d: %s #%d: the command on %s (node %d), %s; IRQs on %s (node %d)",
		p.n, p.total, c.Name, repeat, cpusWord(c.AppCPUs), c.AppNode.Or(-1), mem, cpusWord(c.IRQCPUs), c.IRQNode.Or(-1))
}

// Ran implements bench.Observer.
func (p *BenchProgress) Ran(c *bench.PlannedCell, r *bench.RunResult) {
	if r.Error != "" {
		linef(p.W, "  failed: %s", r.Error)
		return
	}
	v := strconv.FormatFloat(r.Result.Value, 'g', 6, 64)
	if r.Result.Unit == "bit/s" {
		v = strconv.FormatFloat(r.Result.Value/1e9, 'f', 3, 64) + " Gbit/s"
	} else if r.Result.Unit != "" {
		v += " " + r.Result.Unit
	}
	linef(p.W, "  %s in %.1fs", v, r.Seconds)
}

// Observing implements bench.FlowObserver: --observe's first run.
func (p *BenchProgress) Observing(nic string) {
	linef(p.W, "bench: a first run of the command, unpinned, to find the flow's queue by %s's rx queue counters (--observe)", nic)
}

// ObservedFlow implements bench.FlowObserver.
func (p *BenchProgress) ObservedFlow(fp *bench.FlowPlan) {
	q, ok := fp.Queue.Get()
	if !ok {
		linef(p.W, "  %s", fp.Queue.Why().Detail)
		return
	}
	linef(p.W, "  the flow's queue is %d (%s)", q, fp.QueueBy)
}

// Restoring implements bench.Observer.
func (p *BenchProgress) Restoring(stateFile string) {
	linef(p.W, "restoring the values saved in %s (FROM above)", stateFile)
}

// Restored implements bench.Observer.
func (p *BenchProgress) Restored(res *tune.RestoreResult) {
	if err := res.Err(); err != nil {
		WriteRestoreFailures(p.W, res)
		return
	}
	WriteRestored(p.W, res)
}
