package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/run/watch"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// WriteWatch writes one interval of `irqnuma watch` as a block: a title,
// one verdict per NIC, the NIC IRQs that fired, the CPUs that matter and
// the notes. width > 0 fits the block to a window that many columns wide:
// verdicts and notes wrap at words, tables drop their least telling
// columns until they fit, and a line that still does not fit is cut.
func WriteWatch(w io.Writer, iv *watch.Interval, width int) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "irqnuma watch  #%d  %s  interval %.2fs\n", iv.Seq, iv.End.Format("15:04:05"), iv.Seconds)
	for _, n := range iv.NICs {
		writeWrapped(&b, safeCell(n.Verdict.Text), width)
	}
	for _, u := range iv.Processes {
		writeWrapped(&b, safeCell(processLine(u)), width)
	}

	var rows [][]string
	for _, n := range iv.NICs {
		for _, q := range n.IRQs {
			if unknown.Is(q.PerSec, 0) {
				continue
			}
			queue := "other"
			if n, ok := q.Queue.Get(); ok && q.Kind == irq.KindQueue {
				queue = queueName(n, string(q.Dir))
			}
			cpus := make([]int, len(q.CPUs))
			for i, c := range q.CPUs {
				cpus[i] = c.CPU
			}
			rows = append(rows, []string{n.Name, strconv.Itoa(q.IRQ), queue, rateValue(q.PerSec), units.OrDash(cpuset.New(cpus...).List()), q.Name})
		}
	}
	b.WriteByte('\n')
	if len(rows) == 0 {
		b.WriteString("no NIC interrupts this interval\n")
	} else if err := fitTable(&b, []string{"NIC", "IRQ", "QUEUE", "IRQS/S", "CPUS", "NAME"}, rows, width, []int{5, 2}); err != nil {
		return err
	}

	rows = rows[:0]
	for _, c := range iv.CPUs {
		threads := make([]string, len(c.Threads))
		for i, t := range c.Threads {
			threads[i] = strconv.Itoa(t)
		}
		rows = append(rows, []string{strconv.Itoa(c.CPU), nodeOrDash(c.Node), strings.Join(c.Why, ","),
			pctValue(c.Usr), pctValue(c.Sys), pctValue(c.IRQ), pctValue(c.Soft), pctValue(c.Busy), rate(c.NICIRQs),
			rateValue(c.NetRX), rateValue(c.NetTX), rateValue(c.Drops), rateValue(c.Squeezes), units.OrDash(strings.Join(threads, ","))})
	}
	b.WriteByte('\n')
	if len(rows) == 0 {
		b.WriteString("no CPU took NIC interrupts, ran a watched thread or was over 50% busy\n")
	} else if err := fitTable(&b, []string{"CPU", "NODE", "WHY", "%USR", "%SYS", "%IRQ", "%SOFT", "%BUSY", "IRQS/S",
		"NET_RX/S", "NET_TX/S", "DROPS/S", "SQUEEZE/S", "THREADS"}, rows, width, []int{2, 12, 11, 5, 4, 3, 10, 13}); err != nil {
		return err
	}

	if len(iv.Notes) > 0 {
		b.WriteByte('\n')
		for _, n := range iv.Notes {
			writeWrapped(&b, safeCell("note: "+n), width)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// processLine says which NIC a watched process uses and how that was
// found: "iperf3 (PID 4242) uses eth0: tcp ...: routed through eth0
// (...)"; its first reason only (-o json has them all).
func processLine(u nicuse.Use) string {
	s := fmt.Sprintf("%s (PID %d) uses %s", u.Comm, u.PID, u.Summary())
	switch a, known := u.Attribution.Get(); {
	case !known:
		s = fmt.Sprintf("%s (PID %d): NIC unknown", u.Comm, u.PID)
	case a == nicuse.AttributionLoopback:
		s = fmt.Sprintf("%s (PID %d) uses no NIC (loopback)", u.Comm, u.PID)
	}
	if len(u.How) > 0 {
		s += ": " + u.How[0]
		if len(u.How) > 1 {
			s += fmt.Sprintf(" (+%d more)", len(u.How)-1)
		}
	}
	return s
}

// fitTable writes a table through WriteTable; when width > 0 and a line is
// wider, it drops columns in the order given (indexes into header) until
// the table fits, then cuts what still does not.
func fitTable(b *bytes.Buffer, header []string, rows [][]string, width int, drop []int) error {
	keep := make([]bool, len(header))
	for i := range keep {
		keep[i] = true
	}
	for k := 0; ; k++ {
		var t bytes.Buffer
		if err := writeTable(&t, pick(header, keep), pickRows(rows, keep)); err != nil {
			return err
		}
		if width <= 0 || maxWidth(t.Bytes()) <= width || k == len(drop) {
			for line := range strings.SplitSeq(strings.TrimSuffix(t.String(), "\n"), "\n") {
				b.WriteString(cut(line, width))
				b.WriteByte('\n')
			}
			return nil
		}
		keep[drop[k]] = false
	}
}

func pick(s []string, keep []bool) []string {
	out := make([]string, 0, len(s))
	for i, v := range s {
		if keep[i] {
			out = append(out, v)
		}
	}
	return out
}

func pickRows(rows [][]string, keep []bool) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = pick(r, keep)
	}
	return out
}

func maxWidth(b []byte) int {
	m := 0
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		m = max(m, utf8.RuneCount(line))
	}
	return m
}

// cut shortens a line to width columns (runes), marking the cut with "~".
func cut(s string, width int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:width-1]), " ") + "~"
}

// writeWrapped writes text on lines of at most width columns, breaking at
// spaces and indenting continuation lines by two; width <= 0 writes it
// whole.
func writeWrapped(b *bytes.Buffer, text string, width int) {
	if width <= 0 || utf8.RuneCountInString(text) <= width {
		b.WriteString(text + "\n")
		return
	}
	line, indent := "", ""
	for word := range strings.FieldsSeq(text) {
		switch {
		case line == "":
			line = indent + word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			b.WriteString(cut(line, width) + "\n")
			indent = "  "
			line = indent + word
		}
	}
	if line != "" {
		b.WriteString(cut(line, width) + "\n")
	}
}

// rate prints a per-second rate compactly: "0", "0.5", "950", "12.3k",
// "1.00M". The unit is chosen after rounding, so 999,950/s is "1.00M",
// never "1000.0k".
func rate(r float64) string {
	switch {
	case r == 0:
		return "0"
	case math.Round(r*10)/10 < 10:
		return strconv.FormatFloat(math.Round(r*10)/10, 'f', 1, 64)
	case math.Round(r) < 10_000:
		return strconv.FormatFloat(math.Round(r), 'f', 0, 64)
	case math.Round(r/100)/10 < 1000:
		return strconv.FormatFloat(math.Round(r/100)/10, 'f', 1, 64) + "k"
	default:
		return strconv.FormatFloat(r/1e6, 'f', 2, 64) + "M"
	}
}

// rateValue is rate with "?" for unknown.
func rateValue(r unknown.Value[float64]) string {
	v, ok := r.Get()
	if !ok {
		return "?"
	}
	return rate(v)
}

// pctValue prints a percentage with no decimals, "?" for unknown.
func pctValue(p unknown.Value[float64]) string {
	v, ok := p.Get()
	if !ok {
		return "?"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func nodeOrDash(node unknown.Value[int]) string {
	n, ok := node.Get()
	if !ok {
		return "-"
	}
	return strconv.Itoa(n)
}
