package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/safetext"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// WritePin writes the steps of an irq pin or restore as a table: with
// results, what became of each and where the IRQ is now; withAction, what
// each step was to do.
func WritePin(w io.Writer, rows []tune.Row, results, withAction bool) error {
	header := []string{"IRQ", "NIC", "QUEUE", "FROM", "TO"}
	if withAction {
		header = append(header, "ACTION")
	}
	if results {
		header = append(header, "RESULT", "AFFINITY", "EFFECTIVE")
	}
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		irqCol, queue := strconv.Itoa(r.IRQ.Or(-1)), "other"
		switch {
		case r.Kind == tune.KindXPS:
			irqCol, queue = "xps", "tx-"+strconv.Itoa(r.Queue.Or(-1))
		case !r.IRQ.Known():
			irqCol = "-"
		}
		if r.Kind == irq.KindQueue {
			queue = queueName(r.Queue.Or(-1), string(r.Dir))
		}
		if r.NIC == "" {
			queue = "-"
		}
		row := []string{irqCol, units.OrDash(r.NIC), queue, units.OrDash(r.From), units.OrDash(r.To)}
		if withAction {
			row = append(row, string(r.Action))
		}
		if results {
			row = append(row, string(r.Result), setOrUnknown(r.Affinity), setOrUnknown(r.Effective))
		}
		out = append(out, row)
	}
	if len(out) == 0 {
		_, err := io.WriteString(w, "nothing to do\n")
		return err
	}
	return writeTable(w, header, out)
}

func setOrUnknown(v unknown.Value[string]) string {
	s, ok := v.Get()
	if !ok {
		return "unknown"
	}
	return units.OrDash(s)
}

// PinDoc is the JSON document of `irq pin` and `irq restore`.
type PinDoc struct {
	Plan []tune.Row `json:"plan"`
	// Threads are the NAPI kernel threads moved with their IRQs, or left
	// alone with why; empty when NAPI is not threaded.
	Threads   []tune.ThreadRow `json:"threads"`
	StateFile string           `json:"state_file"`
	DryRun    bool             `json:"dry_run"`
	Strategy  string           `json:"strategy,omitempty"`
	Targets   []PinTarget      `json:"targets"`
	Notes     []string         `json:"notes"`
	// Steer is the NIC steering a transaction changed (zc prepare) or a
	// restore put back; absent when none.
	Steer []tune.SteerRow `json:"steer,omitempty"`
	// Settings are the sysfs settings a tune changed or a restore put
	// back; absent when none.
	Settings []tune.SettingRow `json:"settings,omitempty"`
	// Irqbalance is the irqbalance ban a tune or pin made, or a restore
	// took out; absent when none.
	Irqbalance *tune.IrqbalanceRow `json:"irqbalance,omitempty"`
}

// PinTarget is where a pin places one NIC's IRQs, and why there.
type PinTarget struct {
	NIC    string   `json:"nic"`
	CPUs   string   `json:"cpus"`
	Source string   `json:"source"`
	Left   []string `json:"left_out"`
}

// NewPinDoc is the document of a pin's result.
func NewPinDoc(res *tune.PinResult, dryRun bool) PinDoc {
	doc := PinDoc{Plan: res.Rows, Threads: orEmpty(res.Threads), StateFile: res.StateFile, DryRun: dryRun, Strategy: string(res.Strategy), Notes: res.Notes, Steer: res.Steer, Settings: res.Settings, Irqbalance: res.IrqbalanceBan}
	for _, tg := range res.Targets {
		doc.Targets = append(doc.Targets, PinTarget{NIC: tg.NIC, CPUs: tg.CPUs.String(), Source: tg.Source, Left: append([]string{}, tg.Left...)})
	}
	return doc
}

// NewRestoreDoc is the document of a restore's result.
func NewRestoreDoc(res *tune.RestoreResult) PinDoc {
	return PinDoc{Plan: res.Rows, Threads: orEmpty(res.Threads), StateFile: res.StateFile, Targets: []PinTarget{}, Notes: res.Notes, Steer: res.Steer, Settings: res.Settings, Irqbalance: res.IrqbalanceBan}
}

// orEmpty makes a nil list an empty one, so JSON says [].
func orEmpty(rows []tune.ThreadRow) []tune.ThreadRow {
	if rows == nil {
		return []tune.ThreadRow{}
	}
	return rows
}

// WritePinThreads writes a line per NAPI thread of a pin or restore:
// "napi/eth0-8193 (pid 812, queue rx-3, IRQ 41): 0-7 -> 4", then what
// became of it (with results) and why it was left alone.
func WritePinThreads(w io.Writer, rows []tune.ThreadRow, results bool) error {
	for _, r := range rows {
		where := []string{"pid " + strconv.Itoa(r.PID)}
		if q, ok := r.Queue.Get(); ok {
			where = append(where, "queue "+queueName(q, string(r.Dir)))
		}
		if n, ok := r.IRQ.Get(); ok {
			where = append(where, "IRQ "+strconv.Itoa(n))
		}
		var move string
		if r.To != "" {
			move = fmt.Sprintf("%s -> %s", units.OrDash(r.From), r.To)
			if r.Note != "" {
				// A thread whose queue is unknown goes with all of its
				// NIC's queue IRQs.
				move = fmt.Sprintf("%s: %s (the CPUs of %s's queue IRQs)", r.Note, move, r.NIC)
			}
		} else if r.From != "" {
			move = "on " + r.From
		}
		if (results && r.Result != tune.ResultSkipped) || r.Action == tune.ActionKeep {
			move = strings.TrimSpace(move + " " + threadOutcome(r, results))
		}
		var parts []string
		for _, p := range []string{move, r.Error} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		line := fmt.Sprintf("%s (%s): %s", r.Comm, strings.Join(where, ", "), strings.Join(parts, "; "))
		if err := linef(w, "%s", line); err != nil {
			return err
		}
	}
	return nil
}

// threadOutcome says what became of a thread's step.
func threadOutcome(r tune.ThreadRow, results bool) string {
	out := "(" + string(r.Result)
	if r.Action == tune.ActionKeep {
		out = "(already there"
	}
	if a, ok := r.Affinity.Get(); ok && results {
		out += ", now " + a
	}
	return out + ")"
}

// writePinTargets says, a line per NIC, where a pin places its IRQs.
func writePinTargets(w io.Writer, res *tune.PinResult) {
	for _, tg := range res.Targets {
		left := ""
		if len(tg.Left) > 0 {
			left = "; without " + strings.Join(tg.Left, ", ")
		}
		linef(w, "%s: %s on %s (%s%s)", tg.NIC, res.Strategy, cpusWord(tg.CPUs), tg.Source, left)
	}
}

// WritePinPlanned says, before a pin writes, where each NIC's IRQs go
// and whether irqbalance will move them back: irq pin's and bench's
// PinRequest.Planned.
func WritePinPlanned(w io.Writer, res *tune.PinResult) error {
	writePinTargets(w, res)
	writeIrqbalanceWarning(w, res.Irqbalance)
	return nil
}

// WriteManagedSkips names the IRQs a pin skipped because the kernel
// manages them, with the kernel's answer.
func WriteManagedSkips(w io.Writer, res *tune.PinResult) {
	for _, r := range res.Rows {
		if r.Action == tune.ActionSkipManaged && r.Error != "" {
			linef(w, "IRQ %d: skipped as managed: %s", r.IRQ.Or(-1), r.Error)
		}
	}
}

// WriteRestored says a restore put every value back, and what became of
// its state file.
func WriteRestored(w io.Writer, res *tune.RestoreResult) {
	fmt.Fprintf(w, "restored %d values from %s\n", res.Total, res.StateFile)
	writeRetired(w, res.StateFile, res.Retired, res.RetireErr)
}

// writeIrqbalanceWarning warns when a running irqbalance does not ban
// the IRQs a pin places, so it will move them back, and prints the ban
// configuration that would stop that; irqnuma leaves irqbalance alone.
func writeIrqbalanceWarning(w io.Writer, iw tune.IrqbalanceWarning) {
	if iw.Err != nil {
		linef(w, "warning: cannot tell whether irqbalance will undo this: %v", iw.Err)
		return
	}
	if len(iw.Loose) == 0 {
		return
	}
	ids := make([]string, len(iw.Loose))
	for i, n := range iw.Loose {
		ids[i] = strconv.Itoa(n)
	}
	them := units.Choose(len(ids), "it", "them")
	fmt.Fprintf(w, "warning: irqbalance is running (PID %d) and does not ban %s %s: it will move %s back.\n",
		iw.PID, units.Choose(len(ids), "IRQ", "IRQs"), strings.Join(ids, ","), them)
	fmt.Fprintf(w, "irqnuma does not touch irqbalance; this configuration would make it leave %s alone:\n", units.Choose(len(ids), "that IRQ", "them"))
	for _, l := range iw.BanConfig {
		linef(w, "    %s", l)
	}
}

// WriteNotes writes each note on a line of its own.
func WriteNotes(w io.Writer, notes []string) {
	for _, n := range notes {
		linef(w, "note: %s", n)
	}
}

// writeRetired says what became of the state file after the writes.
func writeRetired(w io.Writer, stateFile, retired string, err error) {
	if retired != "" {
		fmt.Fprintf(w, "state file %s renamed to %s\n", stateFile, retired)
	} else if err != nil {
		linef(w, "irqnuma: %v", err)
	}
}

// WritePinFailures lists the writes and rollbacks of a pin that failed.
func WritePinFailures(w io.Writer, res *tune.PinResult) {
	for _, s := range res.Failed {
		linef(w, "failed: %s", s)
	}
	writeRetired(w, res.StateFile, res.Retired, res.RetireErr)
	for _, s := range res.RollbackFailed {
		linef(w, "rollback failed: %s", s)
	}
}

// WriteRestoreFailures lists the values a restore could not write and
// those whose IRQ or queue is gone.
func WriteRestoreFailures(w io.Writer, res *tune.RestoreResult) {
	for _, s := range res.Failed {
		linef(w, "failed: %s", s)
	}
	for _, s := range res.Gone {
		linef(w, "gone: %s (its driver was reloaded or its device removed: nothing to restore)", s)
	}
}

// WriteSteerRows writes a line per NIC steering step of a transaction
// or a restore: its result, what it set, and why it failed.
func WriteSteerRows(w io.Writer, rows []tune.SteerRow) error {
	for _, r := range rows {
		line := fmt.Sprintf("%-11s %s", r.Result, safetext.Escape(r.Step))
		if r.To != "" && !strings.HasSuffix(r.Step, r.To) {
			line += ": " + safetext.Escape(r.To)
		}
		if r.Error != "" {
			line += ": " + safetext.Escape(r.Error)
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// WriteSettingRows writes a line per sysfs setting of a tune or a
// restore: its result, the file and its values, and why it failed.
func WriteSettingRows(w io.Writer, rows []tune.SettingRow) error {
	for _, r := range rows {
		line := fmt.Sprintf("%-11s %s: %s -> %s", r.Result, safetext.Escape(r.Name()), safetext.Escape(units.OrDash(r.From)), safetext.Escape(r.To))
		if r.Error != "" {
			line += ": " + safetext.Escape(r.Error)
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// WriteIrqbalanceRow writes the line of an irqbalance ban of a tune,
// pin or restore: its result, where it was made, the IRQs, and why it
// failed.
func WriteIrqbalanceRow(w io.Writer, r *tune.IrqbalanceRow) error {
	if r == nil {
		return nil
	}
	irqs := "none"
	if len(r.IRQs) > 0 {
		irqs = joinInts(r.IRQs)
	}
	line := fmt.Sprintf("%-11s %s: IRQs %s", r.Result, safetext.Escape(r.Name()), irqs)
	if r.Error != "" {
		line += ": " + safetext.Escape(r.Error)
	}
	_, err := fmt.Fprintln(w, line)
	return err
}
