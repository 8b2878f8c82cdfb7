package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/irqbalance"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/judge/flow"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/run/watch"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Request says what Run does.
type Request struct {
	Root kfile.FS // the host, opened once
	// NIC is the NIC whose IRQs are placed; "" takes the host's only NIC
	// with queue IRQs.
	NIC   string
	Cells []Cell // the placements, in order; nil: DefaultCells
	// RemoteNode chooses the remote node; nil: the farthest from the NIC.
	RemoteNode *int
	// Flow is the flow of the flow placements (--flow); nil: none, and
	// those placements are refused unless Observe finds the queue.
	Flow *flow.Flow
	// Observe finds the flow's queue instead (--observe): the command
	// runs once first, unpinned, while the NIC's per-queue rx counters
	// are sampled, and the queue that rose clearly is the flow's.
	Observe bool
	// Counters samples the NIC's per-queue rx counters for Observe; nil:
	// flow.ReadCounters on Root.
	Counters func(fsys kfile.FS, nic string) (*flow.Counters, error)
	Repeat   int      // runs of each cell, at least 1
	Command  []string // the benchmark: its name (found in PATH) and arguments
	Parser   Parser
	DryRun   bool // plan and audit, change and run nothing
	// KeepGoing carries on past a failed run instead of stopping the
	// matrix (the host is restored either way).
	KeepGoing bool
	// AllowIrqbalance runs even while irqbalance runs (it may move the
	// IRQs during a run).
	AllowIrqbalance bool
	Writer          tune.Writer      // every write to /proc/irq
	Now             func() time.Time // state file names and samples; nil: time.Now
	// Stderr is where the command's standard error goes; nil discards it.
	Stderr io.Writer
	// Timeout stops a run still going after it (SIGTERM to the command's
	// process group, SIGKILL after the grace); the run fails. 0: none.
	Timeout time.Duration
	// Exec runs the command once; nil: sched.RunGroup, on this host,
	// after checking that Root is its / and that the command exists.
	Exec Exec
	// Observer is told of every step as it happens; nil: no one is.
	Observer Observer
}

// Exec runs a command once with a placement and returns its exit code
// as a shell reports it (sched.RunGroup's contract). When ctx is done
// it stops the command and returns.
type Exec func(ctx context.Context, p sched.Placement, args []string, s sched.Streams) (int, error)

// Observer is told of every step, in order, as it happens: a command
// prints them (each change before it is made), a test records them.
type Observer interface {
	Planned(res *Result)                // the audit and the matrix, before any change
	Pinning(pin *tune.PinResult)        // where the IRQs go, before the first write
	Pinned(pin *tune.PinResult)         // what the pin did
	Running(c *PlannedCell, repeat int) // before each run
	Ran(c *PlannedCell, r *RunResult)   // after each run
	Restoring(stateFile string)         // before the IRQs are put back
	Restored(res *tune.RestoreResult)   // what the restore did
}

// Result is what a bench gave: the matrix with every run, the audit of
// the host at the start, and how it ended.
type Result struct {
	Plan     *Plan           `json:"plan"`
	Findings []audit.Finding `json:"-"` // the audit at the start (report renders it)
	Cells    []CellResult    `json:"cells"`
	// Stopped says why the matrix ended early ("" when it ran whole): a
	// failed run, a stop signal, a pin or restore that failed.
	Stopped string `json:"stopped"`
	// StateFiles are the pins' state files, each restored (renamed
	// *.restored) unless Unrestored names it.
	StateFiles []string `json:"state_files"`
	Unrestored []string `json:"unrestored"`
	DryRun     bool     `json:"dry_run"`
}

// CellResult is one cell with its runs.
type CellResult struct {
	PlannedCell
	Runs    []RunResult `json:"runs"`
	Summary *Summary    `json:"summary"` // null when no run succeeded
}

// MarshalJSON writes the cell's fields (with the reasons of those
// unknown) and then its runs: PlannedCell's MarshalJSON, promoted, would
// write the cell alone.
func (c CellResult) MarshalJSON() ([]byte, error) {
	cell, err := json.Marshal(c.PlannedCell)
	if err != nil {
		return nil, err
	}
	rest, err := json.Marshal(struct {
		Runs    []RunResult `json:"runs"`
		Summary *Summary    `json:"summary"`
	}{c.Runs, c.Summary})
	if err != nil {
		return nil, err
	}
	return append(append(cell[:len(cell)-1], ','), rest[1:]...), nil
}

// UnmarshalJSON reads what MarshalJSON writes: PlannedCell's
// UnmarshalJSON, promoted, would read the cell alone.
func (c *CellResult) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &c.PlannedCell); err != nil {
		return err
	}
	var rest struct {
		Runs    []RunResult `json:"runs"`
		Summary *Summary    `json:"summary"`
	}
	if err := json.Unmarshal(b, &rest); err != nil {
		return err
	}
	c.Runs, c.Summary = rest.Runs, rest.Summary
	return nil
}

// Run audits the host, plans the matrix and, unless req.DryRun, runs it:
// for each placement of the IRQs, one pin of the NIC's IRQs (a flow
// placement's: the flow's queue IRQ alone, with its NAPI thread; saved
// to a state file first, under the root's lock held throughout), every
// run of the cells that need it (repeats interleaved across cells), and
// the restore of what the pin changed — also when a run fails and when
// ctx is cancelled, which stops the command that runs. The result is nil
// only when nothing ran (a refused request, a host that cannot be
// read); otherwise it holds what ran, and the error says what stopped
// the matrix or which runs failed.
func Run(ctx context.Context, req Request) (*Result, error) {
	req = req.defaults()
	res, err := prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	req.Observer.Planned(res)
	if req.DryRun {
		return res, nil
	}
	b := &bencher{req: req, res: res}
	if b.sampler, err = watch.Open(req.Root, []string{res.Plan.NIC}, proc.Selection{}, req.Now, nil); err != nil {
		return res, err
	}
	if b.lock, err = tune.AcquireLock(req.Root); err != nil {
		return res, err
	}
	defer b.lock.Release()
	for _, g := range b.irqGroups() {
		if err = b.group(ctx, g); err != nil {
			break
		}
	}
	for i := range res.Cells {
		res.Cells[i].Summary = summarize(res.Cells[i].Runs)
	}
	if err == nil && slices.ContainsFunc(res.Cells, func(c CellResult) bool { return c.failed() > 0 }) {
		err = fmt.Errorf("%w: %d of %d runs failed (--keep-going)", ErrRun, res.failed(), res.runs())
	}
	return res, err
}

func (r Request) defaults() Request {
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Observer == nil {
		r.Observer = nobody{}
	}
	if r.Stderr == nil {
		r.Stderr = io.Discard
	}
	if r.Cells == nil {
		r.Cells, _ = ParseCells("default")
	}
	return r
}

// prepare checks the request, reads and audits the host and plans the
// matrix; nothing has changed when it returns (with --observe the
// command has run once, unpinned).
func prepare(ctx context.Context, req Request) (*Result, error) {
	switch {
	case req.Repeat < 1:
		return nil, usagef("--repeat %d: want 1 or more", req.Repeat)
	case len(req.Command) == 0:
		return nil, usagef("no command to run")
	case req.Parser.Kind == "":
		return nil, usagef("no parser for the command's result")
	}
	if req.Exec == nil && !req.DryRun {
		// The command runs here: the IRQs placed must be this host's.
		if !req.Root.Live() {
			return nil, usagef("bench runs the command on this host, so it reads / only, not %s (--dry-run plans for any root)", req.Root.Root())
		}
		if _, err := exec.LookPath(req.Command[0]); err != nil {
			return nil, fmt.Errorf("%s: %w", req.Command[0], err)
		}
	}
	h, t, err := irq.Read(req.Root, irq.Options{})
	if err != nil {
		return nil, err
	}
	nic, err := chooseNIC(h, t, req.NIC)
	if err != nil {
		return nil, err
	}
	st, err := audit.Read(req.Root, audit.Selection{NICs: []string{nic}})
	if err != nil {
		return nil, err
	}
	fp, err := req.flowPlan(ctx, h, t, nic)
	if err != nil {
		return nil, err
	}
	plan, err := planMatrix(req.Root, h, t, nic, req.Cells, req.RemoteNode, fp)
	if err != nil {
		return nil, err
	}
	plan.Command, plan.Parser, plan.Repeat = req.Command, req.Parser, req.Repeat
	res := &Result{Plan: plan, Findings: st.Findings, DryRun: req.DryRun, StateFiles: []string{}, Unrestored: []string{}}
	for _, c := range plan.Cells {
		res.Cells = append(res.Cells, CellResult{PlannedCell: c, Runs: []RunResult{}})
	}
	// A dry run with --observe shows the matrix: the queue is found by
	// the first run it does not make.
	if !slices.ContainsFunc(plan.Cells, func(c PlannedCell) bool { return c.Applicable }) && !(req.DryRun && req.Observe) {
		return res, fmt.Errorf("no placement asked for can run on this host: %s", plan.Cells[0].Reason)
	}
	if req.DryRun || req.AllowIrqbalance {
		return res, nil
	}
	b, err := irqbalance.Read(req.Root)
	if err != nil {
		return nil, err
	}
	if unknown.Is(b.Running, true) {
		return nil, fmt.Errorf("%w (PID %d): it would move %s's IRQs during the runs; stop it for the bench (systemctl stop irqbalance), or give --allow-irqbalance if it bans them", ErrIrqbalance, b.PIDs[0], nic)
	}
	return res, nil
}

// flowPlan predicts the flow's queue and IRQ (--flow), or finds them
// with a first run (--observe), when a flow placement is asked for; nil
// when none is. A flow without a flow placement, or a flow placement
// without a flow, is a usage error.
func (r Request) flowPlan(ctx context.Context, h *topology.Host, t *irq.Table, nic string) (*FlowPlan, error) {
	want := slices.ContainsFunc(r.Cells, func(c Cell) bool { return c.Flow != "" })
	switch {
	case r.Flow != nil && r.Observe:
		return nil, usagef("give --flow or --observe, not both: --observe finds the queue of a flow --flow would name")
	case !want && r.Flow != nil:
		return nil, usagef("--flow is for the flow placements: add flow-same-core, flow-sibling or flow-other-core to --placements")
	case !want && r.Observe:
		return nil, usagef("--observe finds the flow of the flow placements: add flow-same-core, flow-sibling or flow-other-core to --placements")
	case !want:
		return nil, nil
	case r.Flow == nil && !r.Observe:
		return nil, usagef("the flow placements need the flow: give --flow \"udp|tcp SRC[:PORT] DST[:PORT]\", or --observe to find its queue during a first run")
	}
	var fp *FlowPlan
	var err error
	if r.Observe {
		fp, err = r.observeFlow(ctx, h, nic)
	} else {
		fp, err = predictFlow(r.Root, *r.Flow, nic)
	}
	if err != nil {
		return nil, err
	}
	if irq, ok := fp.IRQ.Get(); ok {
		if x, ok := t.Get(irq); ok && unknown.Is(x.Managed, true) {
			fp.Managed = true
		}
	}
	return fp, nil
}

// chooseNIC returns name, checked, or the host's only NIC with queue
// IRQs when name is "".
func chooseNIC(h *topology.Host, t *irq.Table, name string) (string, error) {
	if name != "" {
		_, err := h.LookupNIC(name)
		return name, err
	}
	var with []string
	for _, n := range h.NICs {
		if slices.ContainsFunc(t.ForNIC(n.Name), func(q *irq.IRQ) bool { return q.Owner.Kind == irq.KindQueue }) {
			with = append(with, n.Name)
		}
	}
	switch len(with) {
	case 1:
		return with[0], nil
	case 0:
		return "", fmt.Errorf("%w: no NIC on this host has queue IRQs", tune.ErrNoIRQs)
	}
	list := with
	if len(list) > 8 {
		list = append(slices.Clone(list[:8]), fmt.Sprintf("and %d more: irqnuma topology lists them", len(with)-8))
	}
	return "", usagef("choose the NIC with --nic: %d have queue IRQs (%s)", len(with), strings.Join(list, ", "))
}

// bencher runs a planned matrix.
type bencher struct {
	req     Request
	res     *Result
	lock    *tune.Lock
	sampler *watch.Sampler
}

// irqGroup is a set of cells that pin the same IRQs to the same CPUs.
type irqGroup struct {
	node  int
	cpus  cpuset.Set
	irqs  []int // PlannedCell.PinIRQs: empty for all the NIC's
	cells []int // indexes into Result.Cells
}

// irqGroups groups the applicable cells by the IRQs they pin and the
// CPUs they pin them to, in the order of their first cell.
func (b *bencher) irqGroups() []irqGroup {
	var gs []irqGroup
	for i, c := range b.res.Cells {
		if !c.Applicable {
			continue
		}
		k := slices.IndexFunc(gs, func(g irqGroup) bool { return g.cpus.Equal(c.IRQCPUs) && slices.Equal(g.irqs, c.PinIRQs) })
		if k < 0 {
			gs = append(gs, irqGroup{node: c.IRQNode.Or(-1), cpus: c.IRQCPUs, irqs: c.PinIRQs})
			k = len(gs) - 1
		}
		gs[k].cells = append(gs[k].cells, i)
	}
	return gs
}

// group pins the IRQs to the group's CPUs, runs its cells, and restores
// what the pin changed whatever happens meanwhile.
func (b *bencher) group(ctx context.Context, g irqGroup) (err error) {
	node, cells, irqCPUs := g.node, g.cells, g.cpus
	if err := ctx.Err(); err != nil {
		return b.stop(fmt.Errorf("stopped before pinning to node %d: %w", node, context.Cause(ctx)))
	}
	pin, err := tune.Pin(ctx, tune.PinRequest{
		Root: b.req.Root, NICs: []string{b.res.Plan.NIC}, Writer: b.req.Writer, Now: b.req.Now(), Lock: b.lock,
		Options: tune.PlanOptions{Strategy: tune.StrategySpread, CPUs: irqCPUs, IRQs: g.irqs},
		Planned: func(p *tune.PinResult) error { b.req.Observer.Pinning(p); return nil },
	})
	if err != nil {
		return b.stop(fmt.Errorf("pin to node %d: %w", node, err))
	}
	if pin.StateFile != "" {
		b.res.StateFiles = append(b.res.StateFiles, pin.StateFile)
	}
	b.req.Observer.Pinned(pin)
	if err := pin.Err(); err != nil {
		// Pin rolled back what it wrote (or says what it could not).
		if len(pin.RollbackFailed) > 0 {
			b.res.Unrestored = append(b.res.Unrestored, pin.StateFile)
		}
		return b.stop(fmt.Errorf("pin to node %d: %w", node, err))
	}
	if pin.StateFile != "" {
		defer func() {
			if rerr := b.restore(ctx, pin.StateFile); rerr != nil {
				err = errors.Join(err, b.stop(rerr))
			}
		}()
	}
	for rep := 1; rep <= b.req.Repeat; rep++ {
		for _, i := range cells {
			if err := ctx.Err(); err != nil {
				return b.stop(fmt.Errorf("stopped: %w", context.Cause(ctx)))
			}
			c := &b.res.Cells[i]
			b.req.Observer.Running(&c.PlannedCell, rep)
			r := b.measure(ctx, &c.PlannedCell, rep)
			c.Runs = append(c.Runs, r)
			b.req.Observer.Ran(&c.PlannedCell, &r)
			if ctx.Err() != nil {
				return b.stop(fmt.Errorf("stopped during %s run %d: %w", c.Name, rep, context.Cause(ctx)))
			}
			if r.Error != "" && !b.req.KeepGoing {
				return b.stop(fmt.Errorf("%w: %s run %d: %s", ErrRun, c.Name, rep, r.Error))
			}
		}
	}
	return nil
}

// restore puts back what a pin changed, under the held lock; a stop
// signal does not cut it short.
func (b *bencher) restore(ctx context.Context, stateFile string) error {
	b.req.Observer.Restoring(stateFile)
	rr, err := tune.RestoreHeld(context.WithoutCancel(ctx), b.lock, b.req.Root, stateFile, b.req.Writer, nil)
	if err == nil {
		b.req.Observer.Restored(rr)
		err = rr.Err()
	}
	if err != nil {
		b.res.Unrestored = append(b.res.Unrestored, stateFile)
		return fmt.Errorf("restore %s: %w (run irqnuma irq restore %s)", stateFile, err, stateFile)
	}
	return nil
}

// stop records why the matrix ended early and returns it.
func (b *bencher) stop(err error) error {
	if b.res.Stopped == "" {
		b.res.Stopped = err.Error()
	}
	return err
}

// runs and failed count the runs made and those that failed.
func (r *Result) runs() (n int) {
	for _, c := range r.Cells {
		n += len(c.Runs)
	}
	return n
}

func (r *Result) failed() (n int) {
	for _, c := range r.Cells {
		n += c.failed()
	}
	return n
}

func (c *CellResult) failed() (n int) {
	for _, r := range c.Runs {
		if r.Error != "" {
			n++
		}
	}
	return n
}

// nobody observes nothing.
type nobody struct{}

func (nobody) Planned(*Result)              {}
func (nobody) Pinning(*tune.PinResult)      {}
func (nobody) Pinned(*tune.PinResult)       {}
func (nobody) Running(*PlannedCell, int)    {}
func (nobody) Ran(*PlannedCell, *RunResult) {}
func (nobody) Restoring(string)             {}
func (nobody) Restored(*tune.RestoreResult) {}
