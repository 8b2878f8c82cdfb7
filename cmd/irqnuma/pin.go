package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/affinity"
	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/irq"
	"github.com/irqnuma/irqnuma/irqbalance"
	"github.com/irqnuma/irqnuma/report"
	"github.com/irqnuma/irqnuma/topology"
)

func init() {
	registerIRQ(newIRQPinCmd)
	registerIRQ(newIRQRestoreCmd)
}

// pinDoc is the JSON document of `irq pin` and `irq restore`.
type pinDoc struct {
	Plan      []pinRow    `json:"plan"`
	StateFile string      `json:"state_file"`
	DryRun    bool        `json:"dry_run"`
	Strategy  string      `json:"strategy,omitempty"`
	Targets   []pinTarget `json:"targets"`
	Notes     []string    `json:"notes"`
}

type pinTarget struct {
	NIC    string   `json:"nic"`
	CPUs   string   `json:"cpus"`
	Source string   `json:"source"`
	Left   []string `json:"left_out"`
}

// pinRow is one step. irq is -1 for a tx queue's xps_cpus (kind "xps").
// affinity and effective are read back after the run (null in a dry run
// or when the file is absent).
type pinRow struct {
	IRQ       int     `json:"irq"`
	NIC       string  `json:"nic"`
	Queue     int     `json:"queue"`
	Kind      string  `json:"kind"`
	Dir       string  `json:"dir,omitempty"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	Action    string  `json:"action"`
	Result    string  `json:"result"`
	Error     string  `json:"error"`
	File      string  `json:"file,omitempty"`
	Affinity  *string `json:"affinity"`
	Effective *string `json:"effective"`
}

type pinFlags struct {
	node      int
	cpus      string
	exclude   string
	strategy  string
	dryRun    bool
	keepGoing bool
	state     string
	xps       bool
	config    string              // --config: the options per NIC from a file
	pinConfig *affinity.PinConfig // read from config
}

func newIRQPinCmd(a *app) *cobra.Command {
	var f pinFlags
	c := &cobra.Command{
		Use:   "pin NIC...",
		Short: "Move a NIC's IRQs to its own node's CPUs, saving the old affinity for restore",
		Long: `pin places each queue IRQ of the NICs on the NIC's local node: spread (the
default) gives each queue one CPU, one thread per physical core first; node
gives every queue the whole node. Non-queue vectors get the whole target set.
Managed IRQs are skipped. Before the first write the current values are saved
to a state file; any failed write rolls everything back (unless --keep-going).
irqnuma irq restore puts the saved values back.`,
		Args: pinArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.config != "" {
				return runPinConfig(a, cmd, f)
			}
			f.node = -1
			if cmd.Flags().Changed("node") {
				v, _ := cmd.Flags().GetInt("node")
				if v < 0 {
					return usagef("--node %d: want a node id", v)
				}
				f.node = v
			}
			if f.node >= 0 && cmd.Flags().Changed("cpus") {
				return usagef("--node and --cpus are exclusive")
			}
			return runPin(a, args, f, cmd.Flags().Changed("cpus"))
		},
	}
	c.Flags().Int("node", -1, "target this node's online CPUs instead of the NIC's own node")
	c.Flags().StringVar(&f.cpus, "cpus", "", "target exactly these CPUs (list form, e.g. 16-23); isolated CPUs named here are used")
	c.Flags().StringVar(&f.exclude, "exclude", "", "leave these CPUs out (list form), e.g. the benchmark's")
	c.Flags().StringVar(&f.strategy, "strategy", "spread", "spread (one CPU per queue) or node (the whole set per queue)")
	c.Flags().BoolVar(&f.dryRun, "dry-run", false, "print the plan and change nothing")
	c.Flags().BoolVar(&f.keepGoing, "keep-going", false, "carry on past a failed write instead of rolling back")
	c.Flags().StringVar(&f.state, "state", "", "state file to save the old values to (default <root>/var/lib/irqnuma/state-<UTC time>.json)")
	c.Flags().BoolVar(&f.xps, "xps", false, "also set each tx queue's xps_cpus to its queue IRQ's CPUs")
	c.Flags().StringVar(&f.config, "config", "", "read the NICs and their --node/--cpus/--exclude/--strategy/--xps from this YAML file (one entry per NIC)")
	return c
}

// isLiveRoot reports whether root is the running host's /.
func isLiveRoot(root string) bool {
	abs, err := filepath.Abs(root)
	if err != nil {
		return false
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs == "/"
}

// needRoot refuses a change to the live host without root.
func needRoot(a *app, what string) error {
	if isLiveRoot(a.root) && a.geteuid() != 0 {
		return fmt.Errorf("%s changes the live host's IRQ affinity and needs root (run it with sudo; --dry-run shows the plan without root)", what)
	}
	return nil
}

func runPin(a *app, nics []string, f pinFlags, hasCPUs bool) error {
	opt := affinity.PlanOptions{Node: f.node, XPS: f.xps, HasCPUs: hasCPUs}
	var err error
	if opt.Strategy, err = affinity.ParseStrategy(f.strategy); err != nil {
		return usagef("--strategy: %v", err)
	}
	if hasCPUs {
		if opt.CPUs, err = cpuset.ParseList(f.cpus); err != nil {
			return usagef("--cpus: %v", err)
		}
		if opt.CPUs.IsEmpty() {
			return usagef("--cpus: empty list")
		}
	}
	if opt.Exclude, err = cpuset.ParseList(f.exclude); err != nil {
		return usagef("--exclude: %v", err)
	}
	if !f.dryRun {
		if err := needRoot(a, "irq pin"); err != nil {
			return err
		}
	}

	h, err := topology.Read(a.root)
	if err != nil {
		return err
	}
	t, err := irq.Load(h, irq.Options{NICs: nics})
	if err != nil {
		if errors.Is(err, irq.ErrUnknownNIC) {
			return usageError{err}
		}
		return err
	}
	plan, err := planPin(h, t, nics, opt, f.pinConfig)
	if err != nil {
		if errors.Is(err, affinity.ErrLocalityUnknown) {
			return usageError{err}
		}
		return err
	}

	doc := pinDoc{Plan: []pinRow{}, DryRun: f.dryRun, Strategy: string(plan.Strategy), Notes: append([]string{}, plan.Notes...)}
	for _, tg := range plan.Targets {
		doc.Targets = append(doc.Targets, pinTarget{NIC: tg.NIC, CPUs: tg.CPUs.String(), Source: tg.Source, Left: append([]string{}, tg.Left...)})
		left := ""
		if len(tg.Left) > 0 {
			left = "; without " + strings.Join(tg.Left, ", ")
		}
		fmt.Fprintf(a.stderr, "%s: %s on CPUs %s (%s%s)\n", tg.NIC, plan.Strategy, tg.CPUs, tg.Source, left)
	}
	warnIrqbalance(a, h, t, plan)

	// The change steps, each with the file it writes and the value.
	changes := make([]irq.Change, 0, len(plan.Steps))
	stepOf := make([]int, 0, len(plan.Steps)) // change index -> step index
	files := make([]string, len(plan.Steps))
	for i, s := range plan.Steps {
		if s.Action != affinity.ActionChange {
			continue
		}
		var p string
		if s.Kind == affinity.KindXPS {
			p = irq.XPSPath(s.NIC, s.Queue)
		} else if p, err = irq.AffinityFile(a.root, s.IRQ); err != nil {
			return err
		}
		tgt, err := irq.ParseTarget(p)
		if err != nil {
			return err
		}
		files[i] = p
		changes = append(changes, irq.Change{Path: p, To: irq.FormatFor(tgt, s.To, h.MaxCPUs())})
		stepOf = append(stepOf, i)
	}
	for i, s := range plan.Steps {
		doc.Plan = append(doc.Plan, planRow(s, files[i]))
	}
	if f.dryRun || len(changes) == 0 {
		if len(changes) == 0 && !f.dryRun {
			fmt.Fprintln(a.stderr, "nothing to change: every IRQ is already where the plan puts it")
		}
		return writePin(a, doc, false)
	}

	lock, err := irq.AcquireLock(a.root)
	if err != nil {
		return err
	}
	defer lock.Release()
	// Save the values the writes replace, read now under the lock.
	state, err := irq.NewState(a.root, a.now())
	if err != nil {
		return err
	}
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	if err := state.Snapshot(paths); err != nil {
		return err
	}
	for i := range changes {
		changes[i].From = state.Entries[i].Value
	}
	statePath := f.state
	if statePath == "" {
		statePath = irq.DefaultStatePath(a.root, state.Created)
	}
	// From the state file on, a stop signal must let the writes finish or
	// roll back: Apply stops at the signal and undoes what it wrote.
	defer critical()()
	if err := state.Save(statePath); err != nil {
		return err
	}
	doc.StateFile = statePath

	res, stop := irq.Apply(a.ctx, a.writer, a.root, changes, irq.ApplyOptions{KeepGoing: f.keepGoing})
	var failed, rollbackFailed []string
	changed := 0
	for ci, r := range res {
		row := &doc.Plan[stepOf[ci]]
		fillResult(row, r)
		if r.Managed {
			row.Action = affinity.ActionSkipManaged
			fmt.Fprintf(a.stderr, "IRQ %d: skipped as managed: %v\n", row.IRQ, r.Err)
		} else if r.Err != nil {
			failed = append(failed, rowName(*row)+": "+r.Err.Error())
		}
		if r.RollbackErr != nil {
			rollbackFailed = append(rollbackFailed, rowName(*row)+": "+r.RollbackErr.Error())
		}
		if r.Result == irq.ResultChanged {
			changed++
		}
	}
	// Steps not written still report where their IRQ (or queue) is now.
	for i := range doc.Plan {
		row := &doc.Plan[i]
		if row.File != "" && plan.Steps[i].Action == affinity.ActionChange {
			continue
		}
		p := irq.XPSPath(row.NIC, row.Queue)
		if row.Kind != affinity.KindXPS {
			p = irq.AffinityPath(row.IRQ, irq.FileAffinityList)
		}
		rb := irq.ReadBackOf(a.root, p)
		rb.ReadErr = nil // an IRQ without files was reported as skip-unknown
		fillResult(row, irq.ChangeResult{Result: row.Result, ReadBack: rb})
	}
	if isLiveRoot(a.root) {
		doc.Notes = append(doc.Notes, pendingMoves(doc.Plan)...)
	} else {
		doc.Notes = append(doc.Notes, "this root is a host tree, not the running kernel: nothing re-targets the IRQs, so effective affinity is what the tree's file says and a write does not change it")
	}
	if err := writePin(a, doc, true); err != nil {
		return err
	}
	for _, s := range failed {
		fmt.Fprintln(a.stderr, "failed:", s)
	}

	switch {
	case len(rollbackFailed) > 0:
		for _, s := range rollbackFailed {
			fmt.Fprintln(a.stderr, "rollback failed:", s)
		}
		return exitCodeError{code: pinExitCode(a.ctx, stop), err: fmt.Errorf("rollback incomplete; the old values are in %s: run irqnuma irq restore %s", statePath, statePath)}
	case stop == irq.Interrupted:
		retire(a, statePath, ".rolled-back")
		return exitCodeError{code: pinExitCode(a.ctx, stop), err: fmt.Errorf("interrupted (%v): every change was rolled back", context.Cause(a.ctx))}
	case stop == irq.Failed:
		retire(a, statePath, ".rolled-back")
		return exitCodeError{code: exitError, err: errors.New("a write failed: every change was rolled back")}
	case len(failed) > 0:
		return exitCodeError{code: exitError, err: fmt.Errorf("%d of %d writes failed (--keep-going); undo the rest with: irqnuma irq restore %s", len(failed), len(changes), statePath)}
	}
	fmt.Fprintf(a.stderr, "changed %d of %d; old values saved in %s; undo with: irqnuma irq restore %s\n", changed, len(changes), statePath, statePath)
	return nil
}

// pendingMoves notes the changed IRQs the kernel still delivers outside
// their new affinity: on x86 without interrupt remapping an MSI moves at
// its next interrupt, so effective_affinity_list changes only then.
func pendingMoves(plan []pinRow) []string {
	var notes []string
	for _, r := range plan {
		if r.Result != irq.ResultChanged || r.IRQ < 0 || r.Affinity == nil || r.Effective == nil || *r.Effective == "" {
			continue
		}
		aff, err1 := cpuset.ParseList(*r.Affinity)
		eff, err2 := cpuset.ParseList(*r.Effective)
		if err1 == nil && err2 == nil && !eff.IsSubsetOf(aff) {
			notes = append(notes, fmt.Sprintf("IRQ %d: the kernel still delivers it to CPU %s; it moves at its next interrupt (x86 moves an MSI then, without interrupt remapping)", r.IRQ, eff))
		}
	}
	return notes
}

// pinExitCode is 128+signo when a signal stopped the run, else 1.
func pinExitCode(ctx context.Context, stop irq.Stop) int {
	if stop == irq.Interrupted {
		if code, ok := signalExitCode(ctx); ok {
			return code
		}
	}
	return exitError
}

// retire renames a state file whose changes were all undone, so that
// `irq restore` without a file finds the one before it.
func retire(a *app, path, suffix string) {
	to, err := irq.Retire(path, suffix)
	if err != nil {
		fmt.Fprintf(a.stderr, "irqnuma: %v\n", err)
		return
	}
	fmt.Fprintf(a.stderr, "state file %s renamed to %s\n", path, to)
}

func planRow(s affinity.Step, file string) pinRow {
	r := pinRow{IRQ: s.IRQ, NIC: s.NIC, Queue: s.Queue, Kind: s.Kind, Dir: s.Dir, Action: s.Action, File: file}
	if s.HasFrom {
		r.From = s.From.String()
	}
	if s.Action == affinity.ActionChange || s.Action == affinity.ActionKeep {
		r.To = s.To.String()
	}
	r.Result = irq.ResultUnchanged
	if s.Action == affinity.ActionSkipManaged || s.Action == affinity.ActionSkipUnknown {
		r.Result = irq.ResultSkipped
	}
	return r
}

func fillResult(row *pinRow, r irq.ChangeResult) {
	row.Result = r.Result
	switch {
	case r.RollbackErr != nil:
		row.Error = "rollback: " + r.RollbackErr.Error()
	case r.Err != nil:
		row.Error = r.Err.Error()
	case r.ReadErr != nil:
		row.Error = "read back: " + r.ReadErr.Error()
	}
	if r.HasAffinity {
		s := r.Affinity.String()
		row.Affinity = &s
	}
	if r.HasEffective {
		s := r.Effective.String()
		row.Effective = &s
	}
}

// rowName names a row in messages: "IRQ 284" or "eth0 tx-3 xps_cpus".
func rowName(r pinRow) string {
	if r.Kind == affinity.KindXPS {
		return fmt.Sprintf("%s tx-%d xps_cpus", r.NIC, r.Queue)
	}
	return "IRQ " + strconv.Itoa(r.IRQ)
}

// writePin writes the plan (and with results, what became of each step).
func writePin(a *app, doc pinDoc, results bool) error {
	if a.json() {
		return a.writeJSON(doc)
	}
	if err := writePinTable(a.stdout, doc.Plan, results, true); err != nil {
		return err
	}
	for _, n := range doc.Notes {
		fmt.Fprintln(a.stderr, "note:", n)
	}
	return nil
}

func writePinTable(w io.Writer, plan []pinRow, results, withAction bool) error {
	header := []string{"IRQ", "NIC", "QUEUE", "FROM", "TO"}
	if withAction {
		header = append(header, "ACTION")
	}
	if results {
		header = append(header, "RESULT", "AFFINITY", "EFFECTIVE")
	}
	rows := make([][]string, 0, len(plan))
	for _, r := range plan {
		irqCol, queue := strconv.Itoa(r.IRQ), "other"
		switch {
		case r.Kind == affinity.KindXPS:
			irqCol, queue = "xps", "tx-"+strconv.Itoa(r.Queue)
		case r.IRQ < 0:
			irqCol = "-"
		}
		if r.Kind == irq.KindQueue {
			queue = strconv.Itoa(r.Queue) + r.Dir
		}
		if r.NIC == "" {
			queue = "-"
		}
		row := []string{irqCol, dash(r.NIC), queue, dash(r.From), dash(r.To)}
		if withAction {
			row = append(row, r.Action)
		}
		if results {
			row = append(row, r.Result, setOrUnknown(r.Affinity), setOrUnknown(r.Effective))
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		_, err := io.WriteString(w, "nothing to do\n")
		return err
	}
	return report.WriteTable(w, header, rows)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func setOrUnknown(s *string) string {
	if s == nil {
		return "unknown"
	}
	return dash(*s)
}

func newIRQRestoreCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "restore [FILE]",
		Short: "Put back the IRQ affinity (and xps_cpus) a pin saved",
		Long: `restore writes back every value saved in FILE (default: the newest state file
under <root>/var/lib/irqnuma), reports each, and exits 1 if any could not be
restored. The file is validated first: its IRQs must exist, its CPU lists
parse, and it may name nothing outside /proc/irq/<n>/ and
/sys/class/net/<nic>/queues/. A fully restored file is renamed to
FILE.restored, so the next restore finds the state saved before it.`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRestore(a, args)
		},
	}
}

func runRestore(a *app, args []string) error {
	if err := needRoot(a, "irq restore"); err != nil {
		return err
	}
	lock, err := irq.AcquireLock(a.root)
	if err != nil {
		return err
	}
	defer lock.Release()
	path := ""
	if len(args) == 1 {
		path = args[0]
	} else if path, err = irq.NewestState(a.root); err != nil {
		return err
	}
	state, err := irq.LoadState(a.root, path)
	if err != nil {
		return err
	}
	gone, err := state.Gone(a.root)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(gone) == len(state.Entries) {
		return fmt.Errorf("%s: nothing left to restore: every IRQ and queue it saved is gone (%v)", path, gone[0])
	}

	// Who owns each IRQ, for the report only: a tree without topology
	// still restores.
	owners := map[int]*irq.Owner{}
	if h, err := topology.Read(a.root); err == nil {
		if t, err := irq.Load(h, irq.Options{}); err == nil {
			for i := range t.IRQs {
				if o := t.IRQs[i].Owner; o != nil {
					owners[t.IRQs[i].IRQ] = o
				}
			}
		}
	}

	doc := pinDoc{Plan: []pinRow{}, StateFile: path, Targets: []pinTarget{}, Notes: []string{}}
	var changes []irq.Change
	var rowOf []int
	var goneRows []string
	for i, e := range state.Entries {
		tgt, _ := irq.ParseTarget(e.Path) // validated by LoadState
		row := pinRow{IRQ: tgt.IRQ, NIC: tgt.NIC, Queue: tgt.Queue, Kind: irq.KindOther, File: e.Path,
			Action: "restore", Result: irq.ResultUnchanged}
		if tgt.File == irq.FileXPS {
			row.Kind, row.Dir = affinity.KindXPS, "tx"
		} else if o := owners[tgt.IRQ]; o != nil {
			row.NIC, row.Queue, row.Kind, row.Dir = o.NIC, o.Queue, o.Kind, o.Dir
		}
		to, _ := irq.ParseValue(tgt, strings.TrimSpace(e.Value))
		row.To = to.String()
		if why, ok := gone[i]; ok {
			row.Result, row.Error = irq.ResultGone, why.Error()
			goneRows = append(goneRows, rowName(row))
			doc.Plan = append(doc.Plan, row)
			continue
		}
		cur, err := irq.ReadValue(a.root, e.Path)
		if err == nil {
			if set, perr := irq.ParseValue(tgt, strings.TrimSpace(cur)); perr == nil {
				row.From = set.String()
			}
		}
		if err == nil && cur == e.Value {
			row.Action = affinity.ActionKeep
		} else {
			changes = append(changes, irq.Change{Path: e.Path, From: cur, To: e.Value})
			rowOf = append(rowOf, len(doc.Plan))
		}
		doc.Plan = append(doc.Plan, row)
	}
	// Restore tries every value, whatever fails, and is not cut short by
	// a stop signal: nothing is rolled back.
	defer critical()()
	res, _ := irq.Apply(context.WithoutCancel(a.ctx), a.writer, a.root, changes, irq.ApplyOptions{KeepGoing: true})
	var failed []string
	for i, r := range res {
		row := &doc.Plan[rowOf[i]]
		fillResult(row, r)
		if r.Result != irq.ResultChanged {
			row.Result = irq.ResultFailed
			failed = append(failed, rowName(*row)+": "+row.Error)
		}
	}
	// Rows not written still report what the files say now.
	for i := range doc.Plan {
		if row := &doc.Plan[i]; row.Action == affinity.ActionKeep {
			fillResult(row, irq.ChangeResult{Result: irq.ResultUnchanged, ReadBack: irq.ReadBackOf(a.root, row.File)})
		}
	}
	if isLiveRoot(a.root) {
		doc.Notes = append(doc.Notes, pendingMoves(doc.Plan)...)
	} else {
		doc.Notes = append(doc.Notes, "this root is a host tree, not the running kernel: effective affinity is what the tree's file says and a write does not change it")
	}
	if a.json() {
		if err := a.writeJSON(doc); err != nil {
			return err
		}
	} else {
		if err := writePinTable(a.stdout, doc.Plan, true, false); err != nil {
			return err
		}
		for _, n := range doc.Notes {
			fmt.Fprintln(a.stderr, "note:", n)
		}
	}
	if len(failed) > 0 || len(goneRows) > 0 {
		for _, s := range failed {
			fmt.Fprintln(a.stderr, "failed:", s)
		}
		for _, s := range goneRows {
			fmt.Fprintln(a.stderr, "gone:", s, "(its driver was reloaded or its device removed: nothing to restore)")
		}
		restored := len(state.Entries) - len(failed) - len(goneRows)
		return exitCodeError{code: exitError, err: fmt.Errorf("restored %d of %d values; %d could not be written, %d are gone; %s is kept",
			restored, len(state.Entries), len(failed), len(goneRows), path)}
	}
	fmt.Fprintf(a.stderr, "restored %d values from %s\n", len(state.Entries), path)
	retire(a, path, ".restored")
	return nil
}

// warnIrqbalance warns, before anything is applied, when a running
// irqbalance does not ban the IRQs the plan places: it will move them
// back. It prints the ban configuration that would stop that; irqbalance
// itself is left alone.
func warnIrqbalance(a *app, h *topology.Host, t *irq.Table, plan *affinity.Plan) {
	b, err := irqbalance.Read(a.root)
	if err != nil {
		fmt.Fprintf(a.stderr, "warning: cannot tell whether irqbalance will undo this: %v\n", err)
		return
	}
	if !b.Running {
		return
	}
	var loose []int
	for _, s := range plan.Steps {
		if s.IRQ < 0 || (s.Action != affinity.ActionChange && s.Action != affinity.ActionKeep) {
			continue
		}
		name, driver := "", ""
		if q, ok := t.Get(s.IRQ); ok {
			name = q.Name
		}
		if nic, ok := h.NICByName(s.NIC); ok {
			// irqbalance matches --banmod against the PCI function's
			// driver ("virtio-pci"), not the netdev's ("virtio_net").
			driver = nic.Driver
			if d, err := h.PCIDriver(nic.PCI); err == nil && d != "" {
				driver = d
			}
		}
		if banned, _ := b.IRQBanned(s.IRQ, driver, name); !banned {
			loose = append(loose, s.IRQ)
		}
	}
	if len(loose) == 0 {
		return
	}
	ids := make([]string, len(loose))
	for i, n := range loose {
		ids[i] = strconv.Itoa(n)
	}
	fmt.Fprintf(a.stderr, "warning: irqbalance is running (PID %d) and does not ban IRQs %s: it will move them back.\n", b.PIDs[0], strings.Join(ids, ","))
	fmt.Fprintln(a.stderr, "irqnuma does not touch irqbalance; this configuration would make it leave them alone:")
	for _, l := range b.BanConfig(loose, cpuset.Set{}) {
		fmt.Fprintln(a.stderr, "    "+l)
	}
}
