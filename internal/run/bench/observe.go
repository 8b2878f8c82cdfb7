package bench

import (
	"context"
	"fmt"
	"io"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/flow"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// How clearly the observing run must show the flow's queue (--observe):
// its counter must rise by at least ObserveMinRise, and by at least
// ObserveRatio times as much as any other queue's. Fewer is a handshake
// or ARP, not a benchmark's flow; a rise within ObserveRatio of another
// queue's is two flows, or one spread, and which is "the" flow cannot be
// told. The counters are flow.ReadCounters': netdev qstats' packets, else
// the queue IRQs' counts, which are interrupts (QueueBy says which).
const (
	ObserveMinRise = 10
	ObserveRatio   = 4
)

// FlowObserver is an Observer that is also told of --observe's first
// run: before it, and what it found.
type FlowObserver interface {
	Observing(nic string)
	ObservedFlow(fp *FlowPlan)
}

// observeFlow runs the command once, unpinned (on every online CPU),
// with the NIC's per-queue rx counters sampled before and after
// (flow.ReadCounters: netdev qstats, else the queue IRQs' counts), and
// takes the flow's queue from what rose, when it rose clearly; else the
// plan's Unknown says why. A run that fails is an error: nothing is
// known of the flow.
func (r Request) observeFlow(ctx context.Context, h *topology.Host, nic string) (*FlowPlan, error) {
	if r.DryRun {
		return newFlowPlan(unknown.Because(unknown.KindNotApplicable, "queue unknown: --observe finds it during a first run of the command, which a dry run does not make")), nil
	}
	fp := newFlowPlan(unknown.Because(unknown.KindNotApplicable, "the flow's queue is unknown"))
	if o, ok := r.Observer.(FlowObserver); ok {
		o.Observing(nic)
	}
	read := r.Counters
	if read == nil {
		read = flow.ReadCounters
	}
	a, err := read(r.Root, nic)
	if err != nil {
		return nil, fmt.Errorf("--observe: %w", err)
	}
	exe := r.Exec
	if exe == nil {
		exe = execHere
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if r.Timeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(ctx, r.Timeout, errTimeout)
	}
	t0 := r.Now()
	code, err := exe(runCtx, sched.Placement{CPUs: h.Online}, r.Command, sched.Streams{Stdout: io.Discard, Stderr: r.Stderr})
	took := r.Now().Sub(t0)
	cancel()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("stopped during the observing run: %w", context.Cause(ctx))
	case err != nil:
		return nil, fmt.Errorf("%w: the observing run (unpinned, to find the flow's queue): %v", ErrRun, err)
	case code != 0:
		return nil, fmt.Errorf("%w: the observing run (unpinned, to find the flow's queue): exit status %d", ErrRun, code)
	}
	b, err := read(r.Root, nic)
	if err != nil {
		return nil, fmt.Errorf("--observe: %w", err)
	}
	o, err := flow.Diff(a, b, took)
	if err != nil {
		return nil, fmt.Errorf("--observe: %w", err)
	}
	fp.Observed = o
	q, by, why := judgeObserved(o)
	if why != "" {
		fp.Queue = unknown.NotAs[uint32](unknown.KindNotReported, why)
	} else {
		p, err := flow.PlaceQueue(r.Root, nic, q, by)
		if err != nil {
			return nil, err
		}
		fp.fromPath(p)
	}
	if ob, ok := r.Observer.(FlowObserver); ok {
		ob.ObservedFlow(fp)
	}
	return fp, nil
}

// judgeObserved takes the flow's queue from an observing run's counters:
// the queue whose counter rose at least ObserveMinRise, and at least
// ObserveRatio times as much as any other's, with how it was found;
// else why no queue can be told.
func judgeObserved(o *flow.Observation) (q uint32, by, why string) {
	unit := "packets"
	if o.Source == flow.CountersIRQ {
		unit = "interrupts"
	}
	during := fmt.Sprintf("during the observing run (%.1fs, %s)", o.Seconds, o.Source)
	switch {
	case o.BusiestDelta == 0:
		return 0, "", fmt.Sprintf("queue unknown: no rx queue counter of %s rose %s: the command's traffic did not arrive on %s", o.NIC, during, o.NIC)
	case !o.Busiest.Known():
		return 0, "", fmt.Sprintf("queue unknown: queues %s rose equally most (+%d %s each) %s: which one is the flow's cannot be told", idList32(o.Tied), o.BusiestDelta, unit, during)
	case o.BusiestDelta < ObserveMinRise:
		return 0, "", fmt.Sprintf("queue unknown: queue %d rose most, by only %d %s %s (fewer than %d is no flow)", o.Busiest.Or(0), o.BusiestDelta, unit, during, ObserveMinRise)
	}
	q = o.Busiest.Or(0)
	var next uint32
	var nextDelta uint64
	for _, d := range o.Queues {
		if d.Queue != q && d.Delta > nextDelta {
			next, nextDelta = d.Queue, d.Delta
		}
	}
	if nextDelta*ObserveRatio > o.BusiestDelta {
		return 0, "", fmt.Sprintf("queue unknown: queues %d (+%d %s) and %d (+%d) rose comparably (less than %d times apart) %s: which one is the flow's cannot be told",
			q, o.BusiestDelta, unit, next, nextDelta, ObserveRatio, during)
	}
	by = fmt.Sprintf("observed: +%d %s on it, at most +%d on another queue, %s", o.BusiestDelta, unit, nextDelta, during)
	return q, by, ""
}

func idList32(qs []uint32) string {
	ids := make([]int, len(qs))
	for i, q := range qs {
		ids[i] = int(q)
	}
	return idList(ids)
}
