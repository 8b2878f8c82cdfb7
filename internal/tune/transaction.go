package tune

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/irqbalance"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Row is one step of a pin or a restore as its JSON document and table
// show it. IRQ is not applicable to a tx queue's xps_cpus (kind "xps"),
// Queue to a vector that serves no queue. Affinity and Effective are
// read back after the run (unknown in a dry run, or when the file is
// absent, with the reason).
type Row struct {
	IRQ       unknown.Value[int]    `json:"irq"`
	NIC       string                `json:"nic"`
	Queue     unknown.Value[int]    `json:"queue"`
	Kind      irq.Kind              `json:"kind"`
	Dir       interrupts.Dir        `json:"dir,omitempty"`
	From      string                `json:"from"`
	To        string                `json:"to"`
	Action    Action                `json:"action"`
	Result    Result                `json:"result"`
	Error     string                `json:"error"`
	File      string                `json:"file,omitempty"`
	Affinity  unknown.Value[string] `json:"affinity"`
	Effective unknown.Value[string] `json:"effective"`
	// land is where the IRQ lands, as the read-back values say.
	land irq.Land
	// err is the error Error says when the step failed or its rollback
	// did (a *RollbackError); nil when Error is a note.
	err error
}

// MarshalJSON writes each unknown field's reason beside it.
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row
	return unknown.MarshalObject(plain(r))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Row) UnmarshalJSON(b []byte) error {
	type plain Row
	return unknown.UnmarshalObject(b, (*plain)(r))
}

// Why a step's IRQ, queue or read-back is not there.
var (
	whyXPSNoIRQ   = unknown.Reason{Kind: unknown.KindNotApplicable, Detail: "an xps step sets a tx queue's CPUs, not an IRQ's"}
	whyNoQueue    = unknown.Reason{Kind: unknown.KindNotApplicable, Detail: "the vector serves no queue"}
	whyQueueIndex = unknown.Reason{Kind: unknown.KindDriver, Detail: "the IRQ's name gives no queue index"}
	whyNotWritten = unknown.Reason{Kind: unknown.KindNotApplicable, Detail: "not read back: the step wrote nothing (a dry run, or a step skipped or unchanged)"}
)

// stepIRQ is a plan step's IRQ as its row says it.
func stepIRQ(s planStep) unknown.Value[int] {
	if s.Kind == KindXPS || s.IRQ < 0 {
		return unknown.Not[int](whyXPSNoIRQ)
	}
	return unknown.Of(s.IRQ)
}

// stepQueue is a plan step's queue as its row says it.
func stepQueue(s planStep) unknown.Value[int] {
	switch {
	case s.Queue >= 0:
		return unknown.Of(s.Queue)
	case s.Kind == irq.KindQueue:
		return unknown.Not[int](whyQueueIndex)
	}
	return unknown.Not[int](whyNoQueue)
}

// RollbackError is a step's rollback that failed: the write putting
// back the value the transaction replaced did not take, so the change
// stays and the state file is the way back. Its text is what the step's
// row says, "rollback: " and the write's error; Step names the step, as
// PinResult.RollbackFailed lists it.
type RollbackError struct {
	Step string // "IRQ 284", "napi/eth0-8193 (pid 812)", "eth0 channels combined 4"
	Err  error
}

func (e *RollbackError) Error() string { return "rollback: " + e.Err.Error() }

func (e *RollbackError) Unwrap() error { return e.Err }

// listed is the rollback as PinResult.RollbackFailed lists it.
func (e *RollbackError) listed() string { return e.Step + ": " + e.Err.Error() }

// Name names a row in messages: "IRQ 284" or "eth0 tx-3 xps_cpus".
func (r Row) Name() string {
	if r.Kind == KindXPS {
		return fmt.Sprintf("%s tx-%d xps_cpus", r.NIC, r.Queue.Or(-1))
	}
	return "IRQ " + strconv.Itoa(r.IRQ.Or(-1))
}

// Err returns the error the row's Error says when its step failed or its
// rollback did (a *RollbackError), nil when it did neither.
func (r Row) Err() error { return r.err }

// fail records err as the row's error.
func (r *Row) fail(err error) { r.err, r.Error = err, err.Error() }

// fill records what became of a row's change.
func (r *Row) fill(c ChangeResult) {
	r.Result = c.Result
	switch {
	case c.RollbackErr != nil:
		r.fail(&RollbackError{Step: r.Name(), Err: c.RollbackErr})
	case c.Err != nil:
		r.fail(c.Err)
	case c.ReadErr != nil:
		r.fail(fmt.Errorf("read back: %w", c.ReadErr))
	}
	r.Affinity, r.Effective = setText(c.Affinity), setText(c.Effective)
	_, land := irq.Info{Affinity: c.Affinity, Effective: c.Effective}.Landing()
	r.land = land.Or("")
}

// PinRequest says what Pin does.
type PinRequest struct {
	Root    kfile.FS // the host, opened once
	NICs    []string
	Options PlanOptions
	// Config, when set, names the NICs and their options instead.
	Config    *PinConfig
	DryRun    bool
	KeepGoing bool   // carry on past a failed write instead of rolling back
	StatePath string // "" for the default, <root>/var/lib/irqnuma/state-<time>.json
	Writer    Writer
	Now       time.Time // names the default state file
	// Planned, when set, is called with the plan (targets, rows, the
	// irqbalance warning) before anything is written, so the caller can
	// show it first; an error it returns stops the pin before any write.
	Planned func(*PinResult) error
	// Lock, when set, is the root's lock the caller holds across a
	// longer transaction (a pin, a run, its restore); Pin then does not
	// take the lock itself.
	Lock *Lock
	// Host and IRQs are the host's topology and IRQs when the caller has
	// read them (tune's one reading, which covers the NICs); nil: Pin
	// reads them.
	Host *topology.Host
	IRQs *irq.Table
	// IrqbalanceRead is irqbalance's settings when the caller has read
	// them (tune's audit, which asked the daemon's socket); nil: Pin
	// reads them.
	IrqbalanceRead *irqbalance.Settings
	// Steering is the NICs' steering when the caller has read it; nil:
	// Pin reads it (steer.Read) to find their threaded NAPI.
	Steering *steer.Host
	// Threads moves the NAPI threads; nil: the running kernel's on the
	// live host, and none on a captured root, whose threads are reported
	// and left alone.
	Threads ThreadAffinity
	// Steer, when set, is NIC steering changed before the IRQs, in the
	// same transaction: saved with them, undone with them.
	Steer *SteerChange
	// Settings are sysfs settings (rps_cpus, NAPI defaults, governors)
	// written after the steering and before the IRQs, in the same
	// transaction: saved with them, undone with them.
	Settings []SettingChange
	// Irqbalance, when set, is the IRQs irqbalance is kept off, after the
	// steering and before the IRQs, in the same transaction
	// (irqbalance.go).
	Irqbalance *IrqbalanceBan
}

// PinResult is what Pin did, or would do in a dry run.
type PinResult struct {
	Strategy Strategy
	Targets  []Target
	Rows     []Row
	// Threads are the NIC's NAPI kernel threads: those moved with their
	// IRQ, and those left alone with why. Empty when NAPI is not
	// threaded.
	Threads []ThreadRow
	// Steer is what became of each steering step (PinRequest.Steer).
	Steer []SteerRow
	// Settings is what became of each setting (PinRequest.Settings).
	Settings []SettingRow
	Notes    []string
	// StateFile holds the values the writes replaced; "" when nothing
	// was written (a dry run, nothing to change).
	StateFile string
	// Changes is the writes planned, Changed those made and kept.
	Changes, Changed int
	// Failed and RollbackFailed name the steps whose write or rollback
	// failed, with why.
	Failed, RollbackFailed []string
	Stop                   Stop
	// Cause is why ctx was cancelled, when Stop is StopInterrupted.
	Cause error
	// Retired is the state file's new name after a complete rollback.
	Retired   string
	RetireErr error
	// Irqbalance says whether a running irqbalance will move the placed
	// IRQs back (read before anything is written), but for those
	// IrqbalanceBan bans.
	Irqbalance IrqbalanceWarning
	// IrqbalanceBan is what became of PinRequest.Irqbalance: nil without
	// one, or when irqbalance has nothing to be kept off.
	IrqbalanceBan *IrqbalanceRow
}

// IrqbalanceWarning is what a running irqbalance will do to a pin.
type IrqbalanceWarning struct {
	Err   error // irqbalance's settings could not be read
	PID   int   // 0 when it does not run
	Loose []int // placed IRQs it does not ban: it will move them back
	// BanConfig is what would make it leave them alone.
	BanConfig []string
}

// Err says how a pin that wrote went wrong, nil when every change was
// made and kept: a rollback that failed (the state file is the way
// back), a stop that rolled everything back, or writes that failed with
// KeepGoing.
func (res *PinResult) Err() error {
	switch {
	case len(res.RollbackFailed) > 0:
		return fmt.Errorf("rollback incomplete; the old values are in %s: run irqnuma irq restore %s", res.StateFile, res.StateFile)
	case res.Stop == StopInterrupted:
		return fmt.Errorf("interrupted (%v): every change was rolled back", res.Cause)
	case res.Stop == StopFailed:
		return errors.New("a write failed: every change was rolled back")
	case len(res.Failed) > 0:
		return fmt.Errorf("%d of %d writes failed (--keep-going); undo the rest with: irqnuma irq restore %s", len(res.Failed), res.Changes, res.StateFile)
	}
	return nil
}

// Pin plans a placement of the NICs' IRQs and writes it, all or nothing:
// under the root's lock it saves every value it replaces to a state file
// before the first write; a failed write (unless KeepGoing) or a
// cancelled ctx rolls back everything written, newest first. A managed
// IRQ the kernel refuses is skipped. The error is for what stops the
// plan before any write; what became of the writes is in the result.
func Pin(ctx context.Context, req PinRequest) (*PinResult, error) {
	h, t, plan, err := planRequest(req)
	if err != nil {
		return nil, err
	}
	res := &PinResult{Strategy: plan.Strategy, Targets: plan.Targets, Notes: append([]string{}, plan.Notes...)}
	ib, ibErr := req.IrqbalanceRead, error(nil)
	if ib == nil {
		ib, ibErr = irqbalance.ReadWith(req.Root, irqbalance.ReadOptions{Socket: irqbalanceSocket})
	}
	res.Irqbalance = irqbalanceWarning(ib, ibErr, h, t, plan)
	ban, err := res.planIrqbalance(req, ib, ibErr) // irqbalance.go
	if err != nil {
		return nil, err
	}

	changes, stepOf, err := pinChanges(req.Root, h, plan)
	if err != nil {
		return nil, err
	}
	files := map[int]string{}
	for ci, si := range stepOf {
		files[si] = changes[ci].Path
	}
	for i, s := range plan.Steps {
		res.Rows = append(res.Rows, stepRow(s, files[i]))
	}
	ta := threadsOf(req.Root, req.Threads)
	if res.Threads, err = pinThreads(req, plan, ta); err != nil {
		return nil, err
	}
	res.Changes = len(changes) + len(threadChanges(res.Threads)) + len(irqbalanceSteps(ban))
	settings, err := res.planBeside(req)
	if err != nil {
		return nil, err
	}
	if req.Planned != nil {
		if err := req.Planned(res); err != nil {
			return nil, err
		}
	}
	if req.DryRun || res.Changes == 0 {
		return res, nil
	}

	if req.Lock != nil {
		if err := req.Lock.held(req.Root); err != nil {
			return nil, err
		}
	} else {
		lock, err := AcquireLock(req.Root)
		if err != nil {
			return nil, err
		}
		defer lock.Release()
	}
	var saved []savedStep
	if req.Steer != nil {
		if saved, err = saveSteer(req.Steer.Setter, req.Steer.Steps); err != nil {
			return nil, err
		}
	}
	around, err := aroundFiles(req, t, changes)
	if err != nil {
		return nil, err
	}
	var savedAll []Change
	if res.StateFile, savedAll, err = saveState(req, changes, res.Threads, saved, settings, around, savedBan(ban)); err != nil {
		return nil, err
	}
	applied, stop := res.apply(ctx, req, changes, saved, settings, ta, ban)
	if stop != StopCompleted {
		res.putBack(ctx, req, savedAll)
	}
	res.Stop = stop
	if stop == StopInterrupted {
		res.Cause = context.Cause(ctx)
	}
	res.record(applied, stepOf)
	res.recordThreads(ta)
	res.recordSteer()
	res.recordSettings(req.Root)
	res.recordIrqbalance()
	res.readBack(req.Root, plan)
	res.Notes = append(res.Notes, afterNotes(req.Root, res.Rows)...)
	if len(res.RollbackFailed) == 0 && (stop == StopInterrupted || stop == StopFailed) {
		res.Retired, res.RetireErr = retire(req.Root, res.StateFile, ".rolled-back")
	}
	return res, nil
}

// planBeside plans the steps beside the IRQs' (steering, settings):
// their rows, their count in Changes, and the settings' values before.
func (res *PinResult) planBeside(req PinRequest) ([]savedSetting, error) {
	if req.Steer != nil {
		res.Changes += len(req.Steer.Steps)
		for _, s := range req.Steer.Steps {
			res.Steer = append(res.Steer, SteerRow{NIC: s.NIC, Step: s.Name(), To: stepTo(s), Result: ResultPlanned})
		}
	}
	settings, rows, err := saveSettings(req.Root, req.Settings)
	if err != nil {
		return nil, err
	}
	res.Settings = rows
	res.Changes += len(req.Settings)
	return settings, nil
}

// apply runs one transaction: the steering steps, then the irqbalance
// ban, then the settings, then the IRQ writes, then the thread moves. A
// failure or a stop at any of them undoes all made before it, newest
// first; the steering's default RSS tables are then spread once more
// (respreadUndone).
func (res *PinResult) apply(ctx context.Context, req PinRequest, changes []Change, saved []savedStep, settings []savedSetting, ta ThreadAffinity, ban *irqbalanceStep) ([]ChangeResult, Stop) {
	tx := txn{keepGoing: req.KeepGoing}
	if req.Steer != nil {
		res.Steer = steerRows(req.Steer, saved)
		tx.steps = steerSteps(req.Steer, saved, res.Steer)
		tx.afterUndo = func(made []int) {
			n := 0 // the steering steps come first: count those made
			for _, i := range made {
				if i < len(saved) {
					n++
				}
			}
			respreadUndone(req.Steer.Setter, saved[:n], res.Steer[:n])
		}
	}
	tx.steps = append(tx.steps, irqbalanceSteps(ban)...)
	tx.steps = append(tx.steps, settingSteps(req.Writer, req.Root, req.Settings, settings, res.Settings)...)
	irqFrom := len(tx.steps)
	applied := make([]ChangeResult, len(changes))
	tx.steps = append(tx.steps, affinitySteps(req.Writer, req.Root, changes, applied)...)
	tx.steps = append(tx.steps, threadSteps(ta, res.Threads)...)
	stop := tx.run(ctx)
	if req.Steer != nil {
		markUnchanged(res.Steer)
	}
	if tx.reached >= irqFrom {
		// The IRQ writes were reached: their files say what they hold
		// now. Before them, nothing of theirs was touched.
		readBackChanges(req.Root, changes, applied)
	}
	return applied, stop
}

// pinThreads plans the NAPI threads of the plan's NICs, reading their
// steering unless the request has it.
func pinThreads(req PinRequest, plan *pinPlan, ta ThreadAffinity) ([]ThreadRow, error) {
	var nics []string
	for _, s := range plan.Steps {
		if !slices.Contains(nics, s.NIC) {
			nics = append(nics, s.NIC)
		}
	}
	sh, failed := readSteering(req.Root, req.Steering, nics)
	return planThreads(req.Root, sh, failed, plan, ta)
}

// recordThreads reads back where the threads may run, and names the
// threads whose move or rollback failed.
func (res *PinResult) recordThreads(ta ThreadAffinity) {
	readBackThreads(ta, res.Threads)
	for i := range res.Threads {
		r := &res.Threads[i]
		if r.Result == ResultPlanned {
			r.Result = ResultUnchanged // a write before it failed
		}
		var rb *RollbackError
		switch {
		case errors.As(r.err, &rb):
			res.RollbackFailed = append(res.RollbackFailed, rb.listed())
		case r.Result == ResultFailed:
			res.Failed = append(res.Failed, r.Name()+": "+r.Error)
		}
		if r.Result == ResultChanged {
			res.Changed++
		}
	}
}

// planRequest reads the host and the request's NICs' IRQs, and plans.
func planRequest(req PinRequest) (*topology.Host, *irq.Table, *pinPlan, error) {
	nics := req.NICs
	if req.Config != nil {
		nics = req.Config.Names()
	}
	// A NIC named twice is planned once: "irq pin eth0 eth0" is "irq pin
	// eth0".
	seen := map[string]bool{}
	var once []string
	for _, n := range nics {
		if !seen[n] {
			seen[n] = true
			once = append(once, n)
		}
	}
	nics = once
	h, t := req.Host, req.IRQs
	if h == nil || t == nil {
		var err error
		if h, t, err = irq.Read(req.Root, irq.Options{NICs: nics}); err != nil {
			return nil, nil, nil, err
		}
	}
	var plan *pinPlan
	var err error
	if req.Config != nil {
		plan, err = planPinConfig(h, t, req.Config)
	} else {
		plan, err = planPin(h, t, nics, req.Options)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if err := plan.dedupe(); err != nil {
		return nil, nil, nil, err
	}
	return h, t, plan, nil
}

// dedupe keeps one step per IRQ (and per tx queue): a later step that
// places the same one again is dropped when it places it alike, and
// refused when it places it elsewhere, before anything is written. Two
// steps for one file would save it twice in the state file.
func (p *pinPlan) dedupe() error {
	type key struct {
		irq   int
		nic   string
		queue int
	}
	keyOf := func(s planStep) key {
		if s.Kind == KindXPS {
			return key{irq: -1, nic: s.NIC, queue: s.Queue}
		}
		return key{irq: s.IRQ}
	}
	first := map[key]int{}
	kept := p.Steps[:0:0]
	for _, s := range p.Steps {
		k := keyOf(s)
		j, ok := first[k]
		if !ok {
			first[k] = len(kept)
			kept = append(kept, s)
			continue
		}
		prev := kept[j]
		if prev.Action == s.Action && prev.To.Equal(s.To) {
			continue
		}
		name := "IRQ " + strconv.Itoa(s.IRQ)
		if s.Kind == KindXPS {
			name = fmt.Sprintf("%s tx-%d xps_cpus", s.NIC, s.Queue)
		}
		return fmt.Errorf("%s is planned twice, for %s (%s %s) and for %s (%s %s): name each NIC once", name,
			prev.NIC, prev.Action, prev.To, s.NIC, s.Action, s.To)
	}
	p.Steps = kept
	return nil
}

// saveState reads the values the writes replace, under the lock the
// caller holds, puts them in the changes and saves them to the state
// file, whose path it returns.
func saveState(req PinRequest, changes []Change, threads []ThreadRow, steps []savedStep, settings []savedSetting, around []string, ban *savedIrqbalance) (string, []Change, error) {
	state, err := newState(req.Root, req.Now)
	if err != nil {
		return "", nil, err
	}
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	raws, err := state.snapshot(req.Root, append(paths, around...))
	if err != nil {
		return "", nil, err
	}
	// Never save a value restore would refuse: the IRQs would stay moved.
	possible, hasPossible, err := possibleCPUs(req.Root)
	if err != nil {
		return "", nil, fmt.Errorf("save current value: %w", err)
	}
	for _, e := range state.Entries {
		if err := entryError(e, possible, hasPossible); err != nil {
			return "", nil, fmt.Errorf("%w: %w; irq restore could not put it back, so nothing was written", ErrUnsaveable, err)
		}
	}
	for i := range changes {
		changes[i].From, changes[i].FromRaw = state.Entries[i].Value, raws[i]
	}
	for _, i := range threadChanges(threads) {
		r := threads[i]
		t := savedThread{PID: r.PID, Comm: r.Comm, Start: r.start, CPUs: r.from.String(), NIC: r.NIC, NAPI: r.NAPI, Queue: r.Queue.Or(-1), Dir: string(r.Dir), IRQ: r.IRQ.Or(-1)}
		if err := threadError(t, possible, hasPossible); err != nil {
			return "", nil, fmt.Errorf("%w: %w; irq restore could not put it back, so nothing was written", ErrUnsaveable, err)
		}
		state.Threads = append(state.Threads, t)
	}
	if len(state.Threads) > 0 {
		state.Version = stateVersionThreads
	}
	if state.Steer = steps; len(steps) > 0 {
		state.Version = stateVersionSteer
	}
	if slices.ContainsFunc(steps, func(s savedStep) bool { return s.NAPI != nil }) {
		state.Version = stateVersionTune
	}
	if state.Settings = settings; len(settings) > 0 {
		state.Version = stateVersionTune
	}
	if state.Irqbalance = ban; ban != nil {
		state.Version = stateVersionTune
	}
	var savedAll []Change
	for _, e := range state.Entries {
		savedAll = append(savedAll, Change{Path: e.Path, To: e.Value})
	}
	path := req.StatePath
	if path == "" {
		path = defaultStatePath(req.Root, state.Created)
	}
	return path, savedAll, state.Save(req.Root, path)
}

// record fills in the rows of the changes written, from their results.
func (res *PinResult) record(applied []ChangeResult, stepOf []int) {
	for ci, r := range applied {
		row := &res.Rows[stepOf[ci]]
		row.fill(r)
		switch {
		case r.Managed:
			row.Action = ActionSkipManaged
		case r.Err != nil:
			res.Failed = append(res.Failed, row.Name()+": "+r.Err.Error())
		}
		var rb *RollbackError
		if errors.As(row.err, &rb) {
			res.RollbackFailed = append(res.RollbackFailed, rb.listed())
		}
		if r.Result == ResultChanged {
			res.Changed++
		}
	}
}

// readBack reports where the IRQ (or queue) of every step not written is
// now.
func (res *PinResult) readBack(fsys kfile.FS, plan *pinPlan) {
	for i := range res.Rows {
		row := &res.Rows[i]
		if row.File != "" && plan.Steps[i].Action == ActionChange {
			continue
		}
		s := plan.Steps[i]
		p := irq.XPSPath(s.NIC, s.Queue)
		if s.Kind != KindXPS {
			p = irq.AffinityPath(s.IRQ, irq.FileAffinityList)
		}
		rb := irq.ReadBackOf(fsys, p)
		rb.ReadErr = nil // an IRQ without files was reported as skip-unknown
		row.fill(ChangeResult{Result: row.Result, ReadBack: rb})
	}
}

// pinChanges turns the plan's change steps into writes: the file each
// writes and its value in that file's form, with the step of each.
func pinChanges(fsys kfile.FS, h *topology.Host, plan *pinPlan) ([]Change, []int, error) {
	var changes []Change
	var stepOf []int
	for i, s := range plan.Steps {
		if s.Action != ActionChange {
			continue
		}
		var p string
		var err error
		if s.Kind == KindXPS {
			p = irq.XPSPath(s.NIC, s.Queue)
		} else if p, err = irq.AffinityFile(fsys, s.IRQ); err != nil {
			return nil, nil, err
		}
		tgt, err := irq.ParseTarget(p)
		if err != nil {
			return nil, nil, err
		}
		changes = append(changes, Change{Path: p, To: irq.FormatFor(tgt, s.To, h.MaxCPUs())})
		stepOf = append(stepOf, i)
	}
	return changes, stepOf, nil
}

// stepRow is a plan step before anything is written.
func stepRow(s planStep, file string) Row {
	r := Row{IRQ: stepIRQ(s), NIC: s.NIC, Queue: stepQueue(s), Kind: s.Kind, Dir: s.Dir, Action: s.Action, File: file,
		Affinity: unknown.Not[string](whyNotWritten), Effective: unknown.Not[string](whyNotWritten)}
	if s.HasFrom {
		r.From = s.From.String()
	}
	if s.Action == ActionChange || s.Action == ActionKeep {
		r.To = s.To.String()
	}
	switch s.Action {
	case ActionChange:
		r.Result = ResultPlanned // until the write says otherwise
	case ActionSkipManaged, ActionSkipUnknown:
		r.Result = ResultSkipped
	default:
		r.Result = ResultUnchanged
	}
	return r
}

// afterNotes says how to read the affinities read back after writing.
func afterNotes(fsys kfile.FS, rows []Row) []string {
	if !fsys.Live() {
		return []string{"this root is a host tree, not the running kernel: nothing re-targets the IRQs, so effective affinity is what the tree's file says and a write does not change it"}
	}
	return pendingMoves(rows)
}

// pendingMoves notes the changed IRQs the kernel still delivers outside
// their new affinity (irq.LandPending): on x86 without interrupt
// remapping an MSI moves at its next interrupt, so effective_affinity_list
// changes only then.
func pendingMoves(rows []Row) []string {
	var notes []string
	for _, r := range rows {
		if r.Result == ResultChanged && r.Kind != KindXPS && r.land == irq.LandPending {
			notes = append(notes, fmt.Sprintf("IRQ %d: the kernel still delivers it to CPU %s; it moves at its next interrupt (x86 moves an MSI then, without interrupt remapping)", r.IRQ.Or(-1), r.Effective.Or("")))
		}
	}
	return notes
}

// irqbalanceWarning says whether a running irqbalance bans the IRQs the
// plan places; it will move back those it does not. b is what
// irqbalance.Read said, err why it could not. The warning leaves
// irqbalance alone; PinRequest.Irqbalance bans them.
func irqbalanceWarning(b *irqbalance.Settings, err error, h *topology.Host, t *irq.Table, plan *pinPlan) IrqbalanceWarning {
	if err != nil {
		return IrqbalanceWarning{Err: err}
	}
	if !unknown.Is(b.Running, true) {
		return IrqbalanceWarning{}
	}
	w := IrqbalanceWarning{PID: b.PIDs[0]}
	for _, s := range plan.Steps {
		if s.IRQ < 0 || (s.Action != ActionChange && s.Action != ActionKeep) {
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
			w.Loose = append(w.Loose, s.IRQ)
		}
	}
	if len(w.Loose) > 0 {
		w.BanConfig = b.BanConfig(w.Loose, cpuset.Set{})
	}
	return w
}

// RestoreResult is what Restore did.
type RestoreResult struct {
	StateFile string
	Rows      []Row
	// Threads are the NAPI threads the pin moved and what became of each.
	Threads []ThreadRow
	// Steer is the NIC steering put back, newest step first.
	Steer []SteerRow
	// Settings are the sysfs settings put back, newest first.
	Settings []SettingRow
	Notes    []string
	// Total is the values the state file holds; Failed names those that
	// could not be written and Gone those whose IRQ or queue no longer
	// exists, with why.
	Total        int
	Failed, Gone []string
	// Retired is the state file's new name once every value is back.
	Retired   string
	RetireErr error
	// IrqbalanceBan is the pin's irqbalance ban taken back out, last;
	// nil when the pin made none.
	IrqbalanceBan *IrqbalanceRow
}

// Err says which values a restore could not put back, nil when it put
// back every one.
func (r *RestoreResult) Err() error {
	if len(r.Failed) == 0 && len(r.Gone) == 0 {
		return nil
	}
	restored := r.Total - len(r.Failed) - len(r.Gone)
	kept := r.StateFile + " is kept"
	switch {
	case r.Retired != "":
		kept = fmt.Sprintf("nothing else is left to restore: %s is renamed to %s", r.StateFile, r.Retired)
	case r.RetireErr != nil:
		kept = r.RetireErr.Error()
	}
	return fmt.Errorf("restored %d of %d values; %d could not be written, %d are gone; %s",
		restored, r.Total, len(r.Failed), len(r.Gone), kept)
}

// Restore writes back every value a state file saved (statePath, or the
// newest under root when ""), under the root's lock: it tries each one
// whatever fails, and nothing is rolled back; a value whose IRQ or queue
// has gone (a driver reload) is reported, not written. A state file fully
// restored is renamed FILE.restored. The error is for what stops the
// restore before any write; what became of each value is in the result.
//
// threads moves back the NAPI threads the pin moved; nil: the running
// kernel's on the live host, and none on a captured root.
func Restore(ctx context.Context, fsys kfile.FS, statePath string, w Writer, threads ThreadAffinity) (*RestoreResult, error) {
	// A state file that is not there is said before the lock is taken,
	// which would make <root>/var/lib/irqnuma.
	if statePath != "" {
		fsys, abs, err := stateFS(fsys, statePath)
		if err != nil {
			return nil, fmt.Errorf("read state: %w", err)
		}
		if _, err := fsys.Stat(abs); err != nil {
			return nil, fmt.Errorf("read state: %w", err)
		}
	}
	lock, err := AcquireLock(fsys)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	return restore(ctx, fsys, statePath, w, threads)
}

// RestoreHeld is Restore under a lock of root the caller holds (see
// PinRequest.Lock).
func RestoreHeld(ctx context.Context, lock *Lock, fsys kfile.FS, statePath string, w Writer, threads ThreadAffinity) (*RestoreResult, error) {
	if err := lock.held(fsys); err != nil {
		return nil, err
	}
	return restore(ctx, fsys, statePath, w, threads)
}

// restore is Restore once the lock is held.
func restore(ctx context.Context, fsys kfile.FS, statePath string, w Writer, threads ThreadAffinity) (*RestoreResult, error) {
	var err error
	if statePath == "" {
		if statePath, err = newestState(fsys); err != nil {
			return nil, err
		}
	}
	state, bad, err := loadStateEntries(fsys, statePath)
	if err != nil {
		return nil, err
	}
	gone, err := state.Gone(fsys)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", statePath, err)
	}
	res := &RestoreResult{StateFile: statePath, Total: len(state.Entries) + len(state.Threads) + len(state.Steer) + len(state.Settings) + len(savedBans(state.Irqbalance)), Rows: []Row{}, Notes: []string{}}
	// The steering goes back first, newest step first: a rule deleted,
	// the table back before the channels shrink under it; then the IRQs,
	// so those a driver moved when its channels changed go back too.
	res.restoreSteer(ctx, fsys, state.Steer)
	res.restoreSettings(ctx, fsys, w, state.Settings)
	owners := irqOwners(fsys)
	var changes []Change
	var rowOf []int
	for i, e := range state.Entries {
		tgt, _ := irq.ParseTarget(e.Path) // validated by LoadState
		row := restoreRow(tgt, e.Path, owners)
		if why := bad[i]; why != nil {
			// A value restore cannot write: the others are still restored.
			row.Result = ResultFailed
			row.fail(why)
			res.Failed = append(res.Failed, row.Name()+": "+row.Error)
			res.Rows = append(res.Rows, row)
			continue
		}
		to, _ := irq.ParseValue(tgt, strings.TrimSpace(e.Value))
		row.To = to.String()
		if why, ok := gone[i]; ok {
			row.Result, row.Error = ResultGone, why.Error()
			res.Gone = append(res.Gone, row.Name())
			res.Rows = append(res.Rows, row)
			continue
		}
		cur, err := irq.ReadValue(fsys, e.Path)
		if err == nil {
			if set, perr := irq.ParseValue(tgt, strings.TrimSpace(cur)); perr == nil {
				row.From = set.String()
			}
		}
		if err == nil && cur == e.Value {
			row.Action = ActionKeep
		} else {
			changes = append(changes, Change{Path: e.Path, From: cur, To: e.Value})
			rowOf = append(rowOf, len(res.Rows))
		}
		res.Rows = append(res.Rows, row)
	}
	applied := putBackAll(ctx, w, fsys, changes)
	for i, r := range applied {
		row := &res.Rows[rowOf[i]]
		row.fill(r)
		if r.Result != ResultChanged {
			row.Result = ResultFailed
			res.Failed = append(res.Failed, row.Name()+": "+row.Error)
		}
	}
	// Rows not written still report what the files say now.
	for i := range res.Rows {
		if row := &res.Rows[i]; row.Action == ActionKeep {
			row.fill(ChangeResult{Result: ResultUnchanged, ReadBack: irq.ReadBackOf(fsys, row.File)})
		}
	}
	// The threads go back after their IRQs, as the pin moved them; then
	// irqbalance may move them again (irqbalance.go).
	res.restoreThreads(ctx, fsys, threadsOf(fsys, threads), state.Threads)
	res.restoreIrqbalance(fsys, state.Irqbalance)
	if fsys.Live() {
		res.Notes = append(res.Notes, pendingMoves(res.Rows)...)
	} else {
		res.Notes = append(res.Notes, "this root is a host tree, not the running kernel: effective affinity is what the tree's file says and a write does not change it")
	}
	// A gone IRQ has nothing left to restore: once every other value is
	// back, the file is retired, or it would be found again forever.
	if len(res.Failed) == 0 {
		res.Retired, res.RetireErr = retire(fsys, statePath, ".restored")
	}
	return res, nil
}

// irqOwners returns who owns each IRQ, for the report only: a tree
// without topology still restores.
func irqOwners(fsys kfile.FS) map[int]*irq.Owner {
	owners := map[int]*irq.Owner{}
	_, t, err := irq.Read(fsys, irq.Options{})
	if err != nil {
		return owners
	}
	for i := range t.IRQs {
		if o := t.IRQs[i].Owner; o != nil {
			owners[t.IRQs[i].IRQ] = o
		}
	}
	return owners
}

// restoreRow is the row of a saved value's file, before it is
// restored: its IRQ's owner as the host names it now.
func restoreRow(tgt irq.Target, path string, owners map[int]*irq.Owner) Row {
	row := Row{IRQ: tgt.IRQ, NIC: tgt.NIC, Queue: tgt.Queue, Kind: irq.KindOther, File: path,
		Action: ActionRestore, Result: ResultUnchanged,
		Affinity: unknown.Not[string](whyNotWritten), Effective: unknown.Not[string](whyNotWritten)}
	if tgt.File == irq.FileXPS {
		row.Kind, row.Dir, row.IRQ = KindXPS, interrupts.DirTX, unknown.Not[int](whyXPSNoIRQ)
	} else if o := owners[tgt.IRQ.Or(-1)]; o != nil {
		row.NIC, row.Queue, row.Kind, row.Dir = o.NIC, o.Queue, o.Kind, o.Dir
	} else if !row.Queue.Known() {
		row.Queue = unknown.Not[int](whyNoQueue)
	}
	return row
}

// setText is a CPU set read back as a row says it: its list form, or
// unknown with the read's reason.
func setText(v unknown.Value[cpuset.Set]) unknown.Value[string] {
	if s, ok := v.Get(); ok {
		return unknown.Of(s.String())
	}
	return unknown.Not[string](v.Why())
}
