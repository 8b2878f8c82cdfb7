package tune

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// This file pins threaded NAPI with the IRQs: when a NIC's NAPI runs in
// napi/IF-ID kernel threads, the packets of a queue are processed where
// its thread runs, not where its IRQ lands, so a pin that moves the IRQ
// moves the thread of the queue's NAPI instance to the same CPUs.

// ThreadRow is one NAPI kernel thread of a pin or a restore, as the JSON
// document and the text output show it.
type ThreadRow struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
	NIC  string `json:"nic"`
	// NAPI is the NAPI instance's id; 0 when not known.
	NAPI uint32 `json:"napi_id,omitempty"`
	// Queue and IRQ are those the thread was paired with, unknown (with
	// the reason) when it was paired with none.
	Queue  unknown.Value[int] `json:"queue"`
	Dir    interrupts.Dir     `json:"dir,omitempty"`
	IRQ    unknown.Value[int] `json:"irq"`
	From   string             `json:"from"`
	To     string             `json:"to"`
	Action Action             `json:"action"`
	Result Result             `json:"result"`
	Error  string             `json:"error"`
	// Note says why a thread goes to the CPUs of its NIC's queue IRQs
	// (all of them, not one queue's): its queue is unknown, and why.
	Note string `json:"note,omitempty"`
	// Affinity is the thread's CPUs read back after the run, unknown
	// (with the reason) in a dry run, or when it cannot be read.
	Affinity unknown.Value[string] `json:"affinity"`

	start uint64     // its start time, which with the pid names it
	to    cpuset.Set // where it goes
	from  cpuset.Set // where it was (what rollback writes)
	// err is the error Error says when the move failed or its rollback
	// did (a *RollbackError); nil when Error is a note.
	err error
}

// MarshalJSON writes each unknown field's reason beside it.
func (r ThreadRow) MarshalJSON() ([]byte, error) {
	type plain ThreadRow
	return unknown.MarshalObject(plain(r))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *ThreadRow) UnmarshalJSON(b []byte) error {
	type plain ThreadRow
	return unknown.UnmarshalObject(b, (*plain)(r))
}

// Why a thread's queue or IRQ is unknown.
var (
	whyThreadNoQueue = unknown.Reason{Kind: unknown.KindDriver, Detail: "netdev links the thread's NAPI instance to no queue"}
	whyThreadNoIRQ   = unknown.Reason{Kind: unknown.KindDriver, Detail: "netdev napi-get ties the thread's NAPI instance to no IRQ"}
)

// threadVal is a thread's queue or IRQ, -1 when it was paired with none.
func threadVal(i int, why unknown.Reason) unknown.Value[int] {
	if i < 0 {
		return unknown.Not[int](why)
	}
	return unknown.Of(i)
}

// Err returns the error the row's Error says when the thread's move
// failed or its rollback did (a *RollbackError), nil when it did
// neither.
func (r ThreadRow) Err() error { return r.err }

// fail records err as the row's error.
func (r *ThreadRow) fail(err error) { r.err, r.Error = err, err.Error() }

// Name names a thread in messages: "napi/eth0-8193 (pid 812)".
func (r ThreadRow) Name() string {
	return fmt.Sprintf("%s (pid %d)", r.Comm, r.PID)
}

// napiPrefix is the comm of a NIC's NAPI threads before the NAPI id:
// napi_kthread_create names them "napi/%s-%d" (netdev name, napi id).
func napiPrefix(nic string) string { return "napi/" + nic + "-" }

// napiIDOf returns the NAPI id of nic's thread comm, and false when comm
// is no NAPI thread of nic's.
func napiIDOf(comm, nic string) (uint32, bool) {
	rest, ok := strings.CutPrefix(comm, napiPrefix(nic))
	if !ok || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, false
	}
	id, err := strconv.ParseUint(rest, 10, 32)
	return uint32(id), err == nil
}

// napiComm reports whether comm is a NAPI thread of nic's.
func napiComm(comm, nic string) bool {
	_, ok := napiIDOf(comm, nic)
	return ok
}

// isNAPIComm reports whether comm is a NAPI thread's name: "napi/" a
// netdev name, "-" and a decimal NAPI id.
func isNAPIComm(comm string) bool {
	rest, ok := strings.CutPrefix(comm, "napi/")
	i := strings.LastIndexByte(rest, '-')
	if !ok || i <= 0 {
		return false
	}
	_, err := strconv.ParseUint(rest[i+1:], 10, 32)
	return err == nil && !strings.ContainsAny(rest[:i], "/: \t\n")
}

// readSteering reads each NIC's steering for its NAPI threads, unless
// the caller has read it. A NIC whose reading fails (an interface the
// root's /sys/class/net does not have, a capture inferred from IRQ names)
// is left out with why: its threads are named and left alone, and its
// IRQs are still pinned.
func readSteering(fsys kfile.FS, given *steer.Host, nics []string) (*steer.Host, map[string]error) {
	if given != nil {
		return given, nil
	}
	h := &steer.Host{}
	failed := map[string]error{}
	for _, name := range nics {
		one, err := steer.Read(fsys, []string{name})
		if err != nil {
			failed[name] = err
			continue
		}
		h.NICs = append(h.NICs, one.NICs...)
		h.Source = one.Source
	}
	return h, failed
}

// threadPlanner pairs the plan's IRQs with the NAPI threads of their
// queues.
type threadPlanner struct {
	fsys    kfile.FS
	threads ThreadAffinity   // nil: the threads are not moved
	failed  map[string]error // the NICs whose steering could not be read
	rows    []ThreadRow
	byPID   map[int]int // index in rows
	// only is why a thread whose queue is unknown is left alone when
	// the plan places only some IRQs (PlanOptions.IRQs); "" when it
	// places all of them.
	only string
}

// planThreads returns a row for every NAPI thread of the plan's NICs:
// those paired with an IRQ the plan places get its CPUs; those that
// cannot be paired say why and are left alone. A NIC whose NAPI is not
// threaded has no rows.
func planThreads(fsys kfile.FS, sh *steer.Host, failed map[string]error, plan *pinPlan, threads ThreadAffinity) ([]ThreadRow, error) {
	p := &threadPlanner{fsys: fsys, threads: threads, failed: failed, byPID: map[int]int{}}
	if len(plan.Only) > 0 {
		p.only = "not moved: this pin places only " + units.Choose(len(plan.Only), "IRQ ", "IRQs ") + irqList(plan.Only) +
			", and the thread may serve another queue"
	}
	var nics []string
	for _, s := range plan.Steps {
		if s.IRQ >= 0 && !slices.Contains(nics, s.NIC) {
			nics = append(nics, s.NIC)
		}
	}
	for _, name := range nics {
		if err := p.nic(name, sh.NIC(name), plan.Steps); err != nil {
			return nil, err
		}
	}
	return p.rows, nil
}

// nic plans the threads of one NIC. A thread paired with a queue's IRQ
// goes with that IRQ; a thread that cannot be paired (a kernel without
// netdev napi-get, a driver that links no NAPI to a queue or IRQ, a
// NAPI instance netdev does not list) goes to the union of the CPUs the
// pin gives the NIC's queue IRQs, where it would go whichever queue it
// serves.
func (p *threadPlanner) nic(name string, n *steer.NIC, steps []planStep) error {
	switch {
	case p.failed[name] != nil:
		return p.unpaired(name, cpuset.Set{}, "its queue is unknown: "+p.failed[name].Error()+"; not moved")
	case n == nil:
		return p.unpaired(name, cpuset.Set{}, "its queue is unknown: the NIC's steering was not read; not moved")
	}
	union := queueCPUs(name, steps)
	if r, isUnknown := n.Why(steer.PartNAPI); isUnknown {
		why := "its queue is unknown: netdev napi-get " + r.String()
		if r.Kind == unknown.KindKernel {
			why = "its queue is unknown on this kernel (no netdev napi-get)"
		}
		if !threaded(n) {
			return p.unpaired(name, cpuset.Set{}, why+"; not moved: the NIC's NAPI is not known to be threaded")
		}
		return p.unpaired(name, union, why)
	}
	if !threaded(n) {
		return nil
	}
	for _, s := range steps {
		if s.NIC != name || s.IRQ < 0 || (s.Action != ActionChange && s.Action != ActionKeep) {
			continue
		}
		for _, napi := range napisOf(n, s) {
			if err := p.add(name, napi, s); err != nil {
				return err
			}
		}
	}
	for _, napi := range n.NAPIs {
		if err := p.leftover(name, n, napi, union); err != nil {
			return err
		}
	}
	// Threads netdev does not list (a NAPI instance never registered,
	// as virtio_net's tx NAPI) still run the NIC's work.
	return p.unpaired(name, union, "its queue is unknown: netdev napi-get does not list it")
}

// leftover plans a listed NAPI thread the pin's steps did not pair: one
// whose IRQ or queue is known but not placed by this pin is left alone;
// one netdev ties to no IRQ and no queue goes to the union of the NIC's
// queue IRQs' CPUs.
func (p *threadPlanner) leftover(name string, n *steer.NIC, napi steer.NAPI, union cpuset.Set) error {
	if _, ok := p.byPID[napi.PID]; napi.PID <= 0 || ok {
		return nil
	}
	switch irq, ok := napi.IRQ.Get(); {
	case ok:
		return p.skip(name, napi.PID, napi.ID, irq, "not moved: its IRQ "+strconv.Itoa(irq)+" is not one this pin places")
	case slices.ContainsFunc(n.Queues, func(q steer.NetdevQueue) bool { return q.NAPI == napi.ID }):
		return p.skip(name, napi.PID, napi.ID, -1, "not moved: its IRQ is unknown (napi-get reports none) and no queue this pin places is served by it")
	}
	return p.moveUnpaired(name, napi.PID, napi.ID, union, "its queue is unknown ("+driverName(n)+" links no NAPI to a queue or IRQ)")
}

// driverName is the NIC's driver as ethtool -i names it, or "its
// driver" when not read.
func driverName(n *steer.NIC) string {
	if n.Driver != nil && n.Driver.Driver != "" {
		return n.Driver.Driver
	}
	return "its driver"
}

// queueCPUs is the union of the CPUs the plan gives nic's queue IRQs
// (those it moves and those already in place): where a NAPI thread of
// the NIC's whose queue is unknown goes.
func queueCPUs(nic string, steps []planStep) cpuset.Set {
	var out cpuset.Set
	for _, s := range steps {
		if s.NIC == nic && s.IRQ >= 0 && s.Queue >= 0 && (s.Action == ActionChange || s.Action == ActionKeep) {
			out = out.Union(s.To)
		}
	}
	return out
}

// threaded reports whether any of the NIC's NAPI instances runs in a
// kernel thread, by napi-get's pid, or the NIC's sysfs threaded says it
// may.
func threaded(n *steer.NIC) bool {
	for _, napi := range n.NAPIs {
		if napi.PID > 0 {
			return true
		}
	}
	return n.Sysfs.Threaded != nil && *n.Sysfs.Threaded != 0
}

// napisOf returns the threaded NAPI instances of a step's IRQ: those
// napi-get ties to it, else, for instances napi-get gives no IRQ, those
// queue-get says serve its queue (an rx vector's rx queue, a tx
// vector's tx queue, a combined vector's both).
func napisOf(n *steer.NIC, s planStep) []steer.NAPI {
	var out []steer.NAPI
	for _, napi := range n.NAPIs {
		if napi.PID > 0 && unknown.Is(napi.IRQ, s.IRQ) {
			out = append(out, napi)
		}
	}
	if len(out) > 0 || s.Queue < 0 {
		return out
	}
	for _, q := range n.Queues {
		if q.NAPI == 0 || q.ID != uint32(s.Queue) || (s.Dir != "" && string(q.Type) != string(s.Dir)) {
			continue
		}
		for _, napi := range n.NAPIs {
			if napi.ID == q.NAPI && napi.PID > 0 && !napi.IRQ.Known() && !slices.ContainsFunc(out, func(o steer.NAPI) bool { return o.ID == napi.ID }) {
				out = append(out, napi)
			}
		}
	}
	return out
}

// add plans the thread of napi to the CPUs of step s.
func (p *threadPlanner) add(nic string, napi steer.NAPI, s planStep) error {
	if j, ok := p.byPID[napi.PID]; ok {
		prev := &p.rows[j]
		if !prev.to.Equal(s.To) && prev.Action != ActionSkipUnknown {
			prev.Action, prev.Result = ActionSkipUnknown, ResultSkipped
			prev.Error = fmt.Sprintf("not moved: it serves IRQs %d and %d, which this pin places on different CPUs (%s and %s)", prev.IRQ.Or(-1), s.IRQ, prev.to, s.To)
			prev.To = ""
		}
		return nil
	}
	return p.plan(ThreadRow{PID: napi.PID, NIC: nic, NAPI: napi.ID, Queue: threadVal(s.Queue, whyThreadNoQueue), Dir: s.Dir, IRQ: threadVal(s.IRQ, whyThreadNoIRQ)}, s.To,
		fmt.Sprintf("not moved: netdev names pid %d as NAPI %d's thread, but its name %%q is not a NAPI thread's", napi.PID, napi.ID))
}

// moveUnpaired plans a NAPI thread whose queue is unknown to to, the
// CPUs of the NIC's queue IRQs, saying why; with to empty (the pin
// places none of the NIC's queue IRQs) it is left alone.
func (p *threadPlanner) moveUnpaired(nic string, pid int, napi uint32, to cpuset.Set, why string) error {
	if p.only != "" {
		return p.skip(nic, pid, napi, -1, why+"; "+p.only)
	}
	if to.IsEmpty() {
		return p.skip(nic, pid, napi, -1, why+"; not moved: this pin places none of "+nic+"'s queue IRQs")
	}
	return p.plan(ThreadRow{PID: pid, NIC: nic, NAPI: napi, Queue: unknown.Not[int](whyThreadNoQueue), IRQ: unknown.Not[int](whyThreadNoIRQ),
		Note: why}, to,
		"not moved: its name %q is not a NAPI thread's")
}

// plan adds row r, moving its thread to to, after reading its name,
// start time and CPUs; notNAPI is the error (with a %q for the name)
// when its name is not one of the NIC's NAPI threads.
func (p *threadPlanner) plan(r ThreadRow, to cpuset.Set, notNAPI string) error {
	task, err := p.task(r.PID)
	if err != nil || task == nil {
		return err
	}
	r.Comm, r.From, r.To, r.Action, r.Result = task.Comm, cpusOrUnknown(task.Allowed), to.String(), ActionChange, ResultPlanned
	r.start, r.to, r.from = task.Start, to, task.Allowed
	switch {
	case !napiComm(task.Comm, r.NIC):
		r.Action, r.Result, r.To = ActionSkipUnknown, ResultSkipped, ""
		r.Error = fmt.Sprintf(notNAPI, task.Comm)
	case p.threads == nil:
		r.Action, r.Result = ActionSkipUnknown, ResultSkipped
		r.Error = "not moved: " + errCaptured.Error()
	default:
		if r.from, err = p.threads.Get(r.PID); err != nil {
			return fmt.Errorf("save current value: %s: %w", r.Name(), err)
		}
		r.From = r.from.String()
		if r.from.Equal(to) {
			r.Action, r.Result = ActionKeep, ResultUnchanged
		}
	}
	p.byPID[r.PID] = len(p.rows)
	r.Affinity = unknown.Not[string](whyNotWritten)
	p.rows = append(p.rows, r)
	return nil
}

// task reads a thread's name, start time and CPUs; nil when it has
// exited meanwhile. A tree that holds only its comm gives the name with
// no CPUs.
func (p *threadPlanner) task(pid int) (*proc.Task, error) {
	t, err := proc.ReadTask(p.fsys, pid)
	if errors.Is(err, proc.ErrNoProcess) {
		return nil, nil
	}
	if errors.Is(err, proc.ErrPartial) {
		// A snapshot keeps every task's comm and no more: the thread is
		// named, its CPUs unknown.
		comm, cerr := p.fsys.String(p.fsys.Path("proc", strconv.Itoa(pid), "comm"))
		if cerr == nil {
			return &proc.Task{PID: pid, Comm: comm}, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("NAPI thread: %w", err)
	}
	return &t, nil
}

// cpusOrUnknown is a thread's CPUs as a row shows them: "" when not
// known (a task may never run on no CPU, so the empty set is unknown).
func cpusOrUnknown(s cpuset.Set) string {
	if s.IsEmpty() {
		return ""
	}
	return s.String()
}

// skip adds a row for a thread left alone, with why.
func (p *threadPlanner) skip(nic string, pid int, napi uint32, irqN int, why string) error {
	task, err := p.task(pid)
	if err != nil || task == nil {
		return err
	}
	p.byPID[pid] = len(p.rows)
	p.rows = append(p.rows, ThreadRow{PID: pid, Comm: task.Comm, NIC: nic, NAPI: napi, Queue: unknown.Not[int](whyThreadNoQueue), IRQ: threadVal(irqN, whyThreadNoIRQ),
		From: cpusOrUnknown(task.Allowed), Action: ActionSkipUnknown, Result: ResultSkipped, Error: why,
		Affinity: unknown.Not[string](whyNotWritten)})
	return nil
}

// unpaired plans each of the NIC's NAPI threads found by name under
// /proc and not planned yet: to to, saying why its queue is unknown; left
// alone, saying why, when to is empty.
func (p *threadPlanner) unpaired(nic string, to cpuset.Set, why string) error {
	pids, err := proc.FindByCommPrefix(p.fsys, napiPrefix(nic))
	if err != nil {
		if kfile.IsNotExist(err) {
			return nil // a capture without processes
		}
		return fmt.Errorf("NAPI threads of %s: %w", nic, err)
	}
	for _, pid := range pids {
		if _, ok := p.byPID[pid]; ok {
			continue
		}
		task, err := p.task(pid)
		if err != nil {
			return err
		}
		if task == nil {
			continue
		}
		// "napi/eth0-x-5" is eth0-x's, not eth0's.
		id, ok := napiIDOf(task.Comm, nic)
		if !ok {
			continue
		}
		if to.IsEmpty() {
			err = p.skip(nic, pid, id, -1, why)
		} else {
			err = p.moveUnpaired(nic, pid, id, to, why)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// threadChanges returns the indexes of the rows to write.
func threadChanges(rows []ThreadRow) []int {
	var out []int
	for i, r := range rows {
		if r.Action == ActionChange {
			out = append(out, i)
		}
	}
	return out
}

// threadSteps are the transaction's steps that move the planned threads,
// after the IRQs they follow.
func threadSteps(ta ThreadAffinity, rows []ThreadRow) []step {
	var steps []step
	for _, i := range threadChanges(rows) {
		steps = append(steps, &threadStep{ta: ta, r: &rows[i]})
	}
	return steps
}

// threadStep sets one NAPI kernel thread's CPUs; its undo sets the CPUs
// it had.
type threadStep struct {
	ta ThreadAffinity
	r  *ThreadRow
}

func (s *threadStep) do() error { return s.ta.Set(s.r.PID, s.r.to) }

func (s *threadStep) done(err error) bool {
	if err != nil {
		s.r.Result = ResultFailed
		s.r.fail(err)
		return true
	}
	s.r.Result = ResultChanged
	return false
}

func (s *threadStep) undo() error { return s.ta.Set(s.r.PID, s.r.from) }

func (s *threadStep) undone(err error) {
	if err != nil {
		s.r.fail(&RollbackError{Step: s.r.Name(), Err: err})
		return
	}
	s.r.Result = ResultRolledBack
}

func (s *threadStep) strict() bool { return false }

// readBackThreads reads where every thread may run now.
func readBackThreads(ta ThreadAffinity, rows []ThreadRow) {
	if ta == nil {
		return
	}
	for i := range rows {
		r := &rows[i]
		if r.Result == ResultSkipped {
			continue
		}
		r.Affinity = threadCPUs(ta, r.PID)
	}
}

// restoreThreads moves each saved thread back to its CPUs, if its pid is
// still the task the pin moved (the same name and start time): a thread
// that has exited, or whose pid a new task has taken, is reported as
// gone and not touched. The moves are one final txn of thread steps:
// every thread is tried, whatever fails.
func (r *RestoreResult) restoreThreads(ctx context.Context, fsys kfile.FS, ta ThreadAffinity, saved []savedThread) {
	rows := make([]ThreadRow, 0, len(saved))
	var live []int // the rows of threads still there, on a host that moves them
	for _, t := range saved {
		row := ThreadRow{PID: t.PID, Comm: t.Comm, NIC: t.NIC, NAPI: t.NAPI, Queue: threadVal(t.Queue, whyThreadNoQueue), Dir: interrupts.Dir(t.Dir), IRQ: threadVal(t.IRQ, whyThreadNoIRQ),
			To: t.CPUs, Action: ActionRestore, Result: ResultUnchanged, Affinity: unknown.Not[string](whyNotWritten)}
		row.to, _ = cpuset.ParseList(t.CPUs) // validated with the state
		task, err := proc.ReadTask(fsys, t.PID)
		switch {
		case errors.Is(err, proc.ErrNoProcess) || (err == nil && (task.Comm != t.Comm || task.Start != t.Start)):
			row.Result, row.Error = ResultGone, row.Name()+" is gone: not restored"
			r.Gone = append(r.Gone, row.Name())
		case err != nil:
			row.Result = ResultFailed
			row.fail(err)
		case ta == nil:
			row.From = task.Allowed.String()
			row.Result = ResultFailed
			row.fail(fmt.Errorf("not restored: %w", errCaptured))
		default:
			cur, err := ta.Get(row.PID)
			if err == nil {
				row.From, row.from = cur.String(), cur
			}
			if err == nil && cur.Equal(row.to) {
				row.Action = ActionKeep
			}
			live = append(live, len(rows))
		}
		rows = append(rows, row)
	}
	tx := txn{final: true}
	for _, i := range live {
		if rows[i].Action == ActionRestore {
			tx.steps = append(tx.steps, &threadStep{ta: ta, r: &rows[i]})
		}
	}
	tx.run(ctx)
	for _, i := range live {
		rows[i].Affinity = threadCPUs(ta, rows[i].PID)
	}
	for _, row := range rows {
		if row.Result == ResultFailed {
			r.Failed = append(r.Failed, row.Name()+": "+row.Error)
		}
	}
	r.Threads = append(r.Threads, rows...)
}

// threadCPUs reads a thread's CPUs back, in list form.
func threadCPUs(ta ThreadAffinity, pid int) unknown.Value[string] {
	set, err := ta.Get(pid)
	if err != nil {
		return unknown.NotAs[string](unknown.KindFailed, err.Error())
	}
	return unknown.Of(set.String())
}
