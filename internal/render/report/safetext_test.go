package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/run/watch"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// hostile is a name a terminal would act on: a title, a bell, a colour,
// a line break forging a line, a C1 CSI, a bidi override and an isolate.
const hostile = "n\x1b]0;pw\a\x1b[31m\nfake\u009b2J\u202eZ\u2066"

// rawRune returns the first rune of s a terminal would act on (a newline
// only when it is not one ending a line the renderer wrote), or "".
func rawRune(s string) string {
	for i, r := range s {
		if r == '\n' {
			continue
		}
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x200e || r == 0x200f || r == 0x061c ||
			r == 0x2028 || r == 0x2029 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			return "U+" + strconv.FormatInt(int64(r), 16) + " in " + strconv.Quote(s[max(0, i-30):min(len(s), i+30)])
		}
	}
	return ""
}

// TestHostileNamesRendered renders every text form that shows a name
// from the host with hostile names and checks none reaches the output
// raw, nor starts a line of its own.
func TestHostileNamesRendered(t *testing.T) {
	check := func(what, out string) {
		t.Helper()
		if bad := rawRune(out); bad != "" {
			t.Errorf("%s: raw %s", what, bad)
		}
		for line := range strings.SplitSeq(out, "\n") {
			if strings.HasPrefix(line, "fake") {
				t.Errorf("%s: the name's line break starts a line: %q", what, line)
			}
		}
		if !strings.Contains(out, safeCell(hostile)) {
			t.Errorf("%s: the escaped name %q is not shown:\n%s", what, safeCell(hostile), out)
		}
	}

	var b bytes.Buffer
	doc := AuditDoc{
		Checked: []string{hostile},
		Headers: map[string]string{hostile: hostile + " 0000:98:00.0, local node 1"},
		Findings: []audit.Finding{{NIC: hostile, Severity: audit.SeverityWarning, Check: audit.Check("irq-remote"),
			Subject: hostile, Message: "of " + hostile, Fix: "irqnuma irq pin " + hostile}},
		Processes: []audit.ProcessNIC{},
	}
	if err := WriteAudit(&b, doc, audit.SeverityWarning, 0); err != nil {
		t.Fatal(err)
	}
	check("WriteAudit", b.String())

	b.Reset()
	pin := &tune.PinResult{Strategy: tune.Strategy("spread"),
		Targets: []tune.Target{{NIC: hostile, CPUs: cpuset.New(1, 2), Source: "node 1, from numa_node", Left: []string{hostile}}},
		Notes:   []string{hostile},
		Failed:  []string{hostile},
		Rows:    []tune.Row{{IRQ: unknown.Of(5), NIC: hostile, Action: tune.ActionSkipManaged, Error: hostile}},
		Changes: 1,
	}
	WritePinPlanned(&b, pin)
	WriteManagedSkips(&b, pin)
	WriteNotes(&b, pin.Notes)
	WritePinFailures(&b, pin)
	check("pin lines", b.String())

	b.Reset()
	iv := &watch.Interval{Seq: 1, Seconds: 1,
		NICs:      []watch.NICStats{{Name: hostile, Node: unknown.Of(1), Verdict: watch.Verdict{Text: hostile + ": RX softirq on CPU 3"}, IRQs: []watch.IRQStats{{IRQ: 5, Name: hostile}}}},
		Processes: []nicuse.Use{{PID: 42, Comm: hostile, Attribution: unknown.NotAs[nicuse.Attribution](unknown.KindNotReported, "its sockets say nothing of a NIC"), How: []string{hostile}}},
		Notes:     []string{hostile},
	}
	for _, width := range []int{0, 80} {
		b.Reset()
		if err := WriteWatch(&b, iv, width); err != nil {
			t.Fatal(err)
		}
		if bad := rawRune(b.String()); bad != "" {
			t.Errorf("WriteWatch width %d: raw %s", width, bad)
		}
		if width == 0 {
			check("WriteWatch", b.String())
		}
	}

	res := storyBench(t)
	res.Plan.NIC, res.Plan.Driver = hostile, hostile
	res.Cells[0].Runs[0].Error = hostile
	res.Stopped = hostile
	b.Reset()
	if err := WriteBench(&b, NewBenchDoc(res)); err != nil {
		t.Fatal(err)
	}
	check("WriteBench", b.String())
	b.Reset()
	p := &BenchProgress{W: &b}
	p.Planned(res)
	p.Running(&res.Cells[0].PlannedCell, 1)
	p.Ran(&res.Cells[0].PlannedCell, &res.Cells[0].Runs[0])
	check("BenchProgress", b.String())
}
