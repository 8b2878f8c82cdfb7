package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/units"
)

// TuneDoc is the JSON document of `irqnuma tune`.
type TuneDoc struct {
	DryRun bool           `json:"dry_run"`
	FailOn audit.Severity `json:"fail_on"`
	// AppCPUs are the CPUs kept for the application ("" for none), and
	// what chose them.
	AppCPUs   string `json:"app_cpus"`
	AppSource string `json:"app_source"`
	// Before is the audit the plan answers; After the audit once the
	// transaction is made, absent in a dry run or when nothing changed.
	Before TuneVerdict  `json:"before"`
	After  *TuneVerdict `json:"after,omitempty"`
	// Fixes are the findings the plan answers and how; Cannot those it
	// leaves, with why and the change a person must make.
	Fixes  []tune.TuneFix    `json:"fixes"`
	Cannot []tune.TuneCannot `json:"cannot"`
	// Changes are the transaction's steps: IRQs, NAPI threads, steering
	// and settings, and the state file restore takes.
	Changes PinDoc   `json:"changes"`
	Exec    string   `json:"exec"`
	Mask    string   `json:"mask"`
	Notes   []string `json:"notes"`
}

// TuneVerdict is one audit's answer: ready or not at FailOn, the
// counts, and the findings.
type TuneVerdict struct {
	Ready    bool            `json:"ready"`
	Summary  audit.Summary   `json:"summary"`
	Findings []audit.Finding `json:"findings"`
}

func tuneVerdict(fs []audit.Finding, failOn audit.Severity) TuneVerdict {
	if fs == nil {
		fs = []audit.Finding{}
	}
	return TuneVerdict{Ready: len(audit.AtOrAbove(fs, failOn)) == 0, Summary: audit.Summarize(fs), Findings: fs}
}

// NewTuneDoc is the document of a tune's result.
func NewTuneDoc(res *tune.TuneResult, failOn audit.Severity, dryRun bool) TuneDoc {
	doc := TuneDoc{DryRun: dryRun, FailOn: failOn, AppCPUs: res.AppCPUs.String(), AppSource: res.AppSource,
		Before: tuneVerdict(res.Before, failOn), Fixes: res.Fixes, Cannot: res.Cannot,
		Exec: res.Exec, Mask: res.Mask, Notes: append([]string{}, res.Notes...)}
	if res.AppCPUs.IsEmpty() {
		doc.AppCPUs = ""
	}
	if doc.Fixes == nil {
		doc.Fixes = []tune.TuneFix{}
	}
	if doc.Cannot == nil {
		doc.Cannot = []tune.TuneCannot{}
	}
	if res.Pin != nil {
		doc.Changes = NewPinDoc(res.Pin, dryRun)
		doc.Changes.Plan = changedRows(res.Pin.Rows)
	}
	if doc.Changes.Plan == nil {
		doc.Changes = PinDoc{Plan: []tune.Row{}, Threads: []tune.ThreadRow{}, Targets: []PinTarget{}, Notes: []string{}, DryRun: dryRun}
	}
	if res.After != nil {
		v := tuneVerdict(res.After, failOn)
		doc.After = &v
	}
	return doc
}

// changedRows are the pin's rows that change something: a tune shows
// what it changes, not every IRQ it left where it was.
func changedRows(rows []tune.Row) []tune.Row {
	out := []tune.Row{}
	for _, r := range rows {
		if r.Action == tune.ActionChange {
			out = append(out, r)
		}
	}
	return out
}

// WriteTunePlanned says, before a tune writes, what it answers: the
// audit's verdict, the CPUs kept for the application and where each
// NIC's work goes. The changes themselves are one table, with their
// results, once they are made (WriteTune).
func WriteTunePlanned(w io.Writer, res *tune.TuneResult, failOn audit.Severity) error {
	linef(w, "before: %s", verdict(res.Before, failOn))
	if !res.AppCPUs.IsEmpty() {
		linef(w, "kept for the application: %s (%s)", cpusWord(res.AppCPUs), res.AppSource)
	}
	if res.Pin != nil {
		writePinTargets(w, res.Pin)
	}
	return nil
}

// WriteTune writes a tune's outcome: each change and what became of it,
// what it cannot fix, the verdict after, and how to run the
// application.
func WriteTune(w io.Writer, res *tune.TuneResult, failOn audit.Severity, dryRun bool) error {
	if dryRun {
		if err := WriteTunePlanned(w, res, failOn); err != nil {
			return err
		}
	}
	if err := writeTuneChanges(w, res, !dryRun); err != nil {
		return err
	}
	writeCannot(w, res.Cannot)
	WriteNotes(w, res.Notes)
	if res.After != nil {
		linef(w, "after: %s", verdict(res.After, failOn))
	}
	if res.Exec != "" {
		linef(w, "run the application with: %s", res.Exec)
		linef(w, "or take its CPUs with:    %s", res.Mask)
	}
	if dryRun {
		linef(w, "dry run: nothing was changed")
	}
	return nil
}

// writeTuneChanges writes the table of a tune's changes: CHANGE, BEFORE,
// AFTER, FOR and, with results, RESULT.
func writeTuneChanges(w io.Writer, res *tune.TuneResult, results bool) error {
	header := []string{"CHANGE", "BEFORE", "AFTER", "FOR"}
	if results {
		header = append(header, "RESULT")
	}
	rows := tuneRows(res, results)
	if len(rows) == 0 {
		_, err := io.WriteString(w, "nothing to change\n")
		return err
	}
	return writeTable(w, header, rows)
}

// tuneRows are the rows of every change of the transaction.
func tuneRows(res *tune.TuneResult, results bool) [][]string {
	if res.Pin == nil {
		return nil
	}
	forNIC := map[string][]string{}
	for _, f := range res.Fixes {
		if strings.HasPrefix(f.By, "irq pin ") && !slices.Contains(forNIC[f.NIC], string(f.Check)) {
			forNIC[f.NIC] = append(forNIC[f.NIC], string(f.Check))
		}
	}
	var out [][]string
	add := func(change, before, after string, forChecks []string, result tune.Result) {
		row := []string{change, units.OrDash(before), units.OrDash(after), units.OrDash(strings.Join(forChecks, ","))}
		if results {
			row = append(row, string(result))
		}
		out = append(out, row)
	}
	for _, s := range res.Pin.Steer {
		add(s.Step, "", s.To, []string{}, s.Result)
	}
	for _, s := range res.Pin.Settings {
		add(s.Name(), s.From, s.To, s.For, s.Result)
	}
	if b := res.Pin.IrqbalanceBan; b != nil {
		add(b.Name(), b.From, b.To, []string{string(audit.CheckIrqbalance)}, b.Result)
	}
	for _, r := range changedRows(res.Pin.Rows) {
		add(rowChange(r), r.From, r.To, forNIC[r.NIC], r.Result)
	}
	for _, t := range res.Pin.Threads {
		if t.Action == tune.ActionChange {
			add(t.Comm+" (pid "+strconv.Itoa(t.PID)+")", t.From, t.To, forNIC[t.NIC], t.Result)
		}
	}
	return out
}

// rowChange names an IRQ or xps row as the tune table shows it: "IRQ 37
// (eth0 rx-0)", "eth0 tx-1 xps_cpus".
func rowChange(r tune.Row) string {
	if r.Kind == tune.KindXPS {
		return fmt.Sprintf("%s tx-%d xps_cpus", r.NIC, r.Queue.Or(-1))
	}
	where := r.NIC
	if q, ok := r.Queue.Get(); ok && r.Dir == "" {
		where += " queue " + strconv.Itoa(q)
	} else if ok {
		where += " " + queueName(q, string(r.Dir))
	}
	return fmt.Sprintf("IRQ %d (%s)", r.IRQ.Or(-1), where)
}

// writeCannot lists the findings a tune leaves, each with why and the
// change a person must make.
func writeCannot(w io.Writer, cs []tune.TuneCannot) {
	if len(cs) == 0 {
		return
	}
	linef(w, "not fixed by tune (%d):", len(cs))
	for _, c := range cs {
		on := c.NIC
		if on == "" {
			on = "host"
		}
		linef(w, "  %s %s on %s, %s: %s", c.Severity, c.Check, on, c.Subject, c.NoFix)
		if c.Change != "" {
			linef(w, "    change: %s", c.Change)
		}
	}
}
