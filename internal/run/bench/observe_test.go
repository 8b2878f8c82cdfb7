package bench

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/judge/flow"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// observing is a fake command for --observe, with fake per-queue
// packet counters (netdev qstats): its first run (the observing one)
// raises them by bumps (queue -> rise), and raises the seed's queue IRQ
// counts by irqBumps (IRQ -> rise); later runs are fakeIperf3's.
type observing struct {
	f        *fakeIperf3
	bumps    map[uint32]uint64
	irqBumps map[int]uint64
	qstats   map[uint32]uint64 // the counters now; nil: the tree's IRQ counts
	first    []string          // the observing run's CPUs
	called   int
}

func (o *observing) exec(ctx context.Context, p sched.Placement, args []string, s sched.Streams) (int, error) {
	o.called++
	if o.called > 1 {
		return o.f.exec(ctx, p, args, s)
	}
	o.first = append(o.first, p.CPUs.String())
	for q, by := range o.bumps {
		o.qstats[q] += by
	}
	for irq, by := range o.irqBumps {
		hosttest.BumpIRQ(o.f.t, o.f.root, irq, by)
	}
	s.Stdout.Write(o.f.doc)
	return 0, nil
}

// counters samples the fake qstats, or the tree's IRQ counts.
func (o *observing) counters(fsys kfile.FS, nic string) (*flow.Counters, error) {
	if o.qstats == nil {
		return flow.ReadCounters(fsys, nic)
	}
	return &flow.Counters{NIC: nic, Source: flow.CountersQStats, Queues: maps.Clone(o.qstats)}, nil
}

// seedQStats are fake rx packet counters of the seed's 16 queues.
func seedQStats() map[uint32]uint64 {
	m := map[uint32]uint64{}
	for q := range uint32(16) {
		m[q] = 1000 + uint64(q)
	}
	return m
}

// observeRequest is a bench of the three flow cells on root with
// --observe, run by o.
func observeRequest(t *testing.T, root string, o *observing, w *failingWriter) Request {
	t.Helper()
	opt := Options{NIC: "eth0", Placements: "flow-same-core,flow-sibling,flow-other-core", Observe: true, Repeat: 1, RemoteNode: -1}
	r, err := opt.Request(hosttest.Open(t, root), iperf3Cmd)
	if err != nil {
		t.Fatal(err)
	}
	r.Writer, r.Exec, r.Counters = w, o.exec, o.counters
	return r
}

// TestObserveFlowSeed: on the bare seed, whose steering is not recorded
// (so --flow cannot tell a queue), --observe's first run, on every
// online CPU, sees queue 3's packets rise by 5000 and queue 0's by 20:
// queue 3 is the flow's, found by observation and said so; its IRQ is
// 287 (mlx5_comp3), pinned alone to C for the flow cells; the tree is
// as before.
func TestObserveFlowSeed(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	f := &fakeIperf3{t: t, root: root, doc: iperf3Sample(t, "tcp.json")}
	o := &observing{f: f, bumps: map[uint32]uint64{3: 5000, 0: 20}, qstats: seedQStats()}
	w := &failingWriter{}
	req := observeRequest(t, root, o, w)
	var during []string
	f.onRun = func() { during = append(during, affinities(t, root, []int{287}).String()) }
	res, err := Run(context.Background(), req)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff([]string{"0-63"}, o.first); diff != "" {
		t.Errorf("the observing run's CPUs (-want +got):\n%s", diff)
	}
	fp := res.Plan.Flow
	if !unknown.Is(fp.Queue, 3) || !unknown.Is(fp.IRQ, 287) || fp.Flow != "" || fp.Observed == nil {
		t.Fatalf("flow plan %+v; want queue 3, IRQ 287, observed", fp)
	}
	if want := "observed: +5000 packets on it, at most +20 on another queue, during the observing run ("; !strings.HasPrefix(fp.QueueBy, want) {
		t.Errorf("QueueBy %q, want it to start %q", fp.QueueBy, want)
	}
	if diff := cmp.Diff([]string{"16", "16", "16"}, during); diff != "" {
		t.Errorf("IRQ 287's affinity during the flow runs (-want +got):\n%s", diff)
	}
	for _, c := range res.Cells {
		if c.Applicable && (len(c.PinIRQs) != 1 || c.PinIRQs[0] != 287) {
			t.Errorf("%s pins %v, want [287]", c.Name, c.PinIRQs)
		}
	}
	if w.n != 2 || len(res.Unrestored) != 0 {
		t.Errorf("%d writes, unrestored %v; want IRQ 287 set and put back", w.n, res.Unrestored)
	}
}

// TestObserveUnclear: when the observing run shows no queue clearly —
// nothing rose, two queues tied, two rose comparably (by qstats or by
// the seed's IRQ counts), too little — the flow cells are refused with
// why, after that one run and before any write.
func TestObserveUnclear(t *testing.T) {
	tests := []struct {
		name     string
		bumps    map[uint32]uint64
		irqBumps map[int]uint64 // with IRQ counts, not qstats
		want     string
	}{
		{"nothing", nil, nil, "queue unknown: no rx queue counter of eth0 rose during the observing run"},
		{"tie", map[uint32]uint64{3: 500, 6: 500}, nil, "queue unknown: queues 3, 6 rose equally most (+500 packets each)"},
		{"comparable", map[uint32]uint64{3: 500, 6: 200}, nil, "queue unknown: queues 3 (+500 packets) and 6 (+200) rose comparably (less than 4 times apart)"},
		{"trickle", map[uint32]uint64{3: 5}, nil, "queue unknown: queue 3 rose most, by only 5 packets"},
		{"irq counts", nil, map[int]uint64{287: 500, 290: 300}, "queue unknown: queues 3 (+500 interrupts) and 6 (+300) rose comparably"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := hosttest.Copy(t, "seed")
			f := &fakeIperf3{t: t, root: root, doc: iperf3Sample(t, "tcp.json")}
			o := &observing{f: f, bumps: tt.bumps, irqBumps: tt.irqBumps}
			if tt.irqBumps == nil {
				o.qstats = seedQStats()
			}
			w := &failingWriter{}
			res, err := Run(context.Background(), observeRequest(t, root, o, w))
			if res != nil || err == nil || !strings.HasPrefix(err.Error(), "no placement asked for can run on this host: "+tt.want) {
				t.Errorf("result %v, error %v; want none and %q", res != nil, err, tt.want)
			}
			if o.called != 1 || w.n != 0 {
				t.Errorf("%d runs, %d writes; want the observing run alone, no write", o.called, w.n)
			}
		})
	}
}

// TestObserveRunFails: an observing run that fails stops the bench
// before any pin: nothing is known of the flow.
func TestObserveRunFails(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	f := &fakeIperf3{t: t, root: root, doc: iperf3Sample(t, "tcp.json"), fails: map[int]int{1: 1}}
	w := &failingWriter{}
	req := observeRequest(t, root, &observing{f: f}, w)
	req.Exec = f.exec
	res, err := Run(context.Background(), req)
	if res != nil || !errors.Is(err, ErrRun) || !strings.Contains(err.Error(), "the observing run (unpinned, to find the flow's queue): exit status 1") || w.n != 0 {
		t.Errorf("result %v, error %v, %d writes; want ErrRun naming the observing run, no write", res != nil, err, w.n)
	}
}

// TestObserveDryRun: a dry run makes no first run, so the flow cells
// say their queue is found by it; the dry run still shows the matrix.
func TestObserveDryRun(t *testing.T) {
	root := hosttest.Shared(t, "seed")
	o := &observing{f: &fakeIperf3{t: t, root: root}}
	req := observeRequest(t, root, o, &failingWriter{})
	req.DryRun = true
	res, err := Run(context.Background(), req)
	if err != nil || o.called != 0 {
		t.Fatalf("Run: %v, %d runs", err, o.called)
	}
	for _, c := range res.Cells {
		if c.Applicable || !strings.Contains(c.Reason, "which a dry run does not make") {
			t.Errorf("%s: applicable %v, reason %q", c.Name, c.Applicable, c.Reason)
		}
	}
}

// TestObserveUsage: --observe goes with the flow placements and not
// with --flow.
func TestObserveUsage(t *testing.T) {
	fsys := hosttest.Open(t, hosttest.Shared(t, "seed"))
	tests := []struct{ cells, flow, want string }{
		{"flow-sibling", seedFlow, "give --flow or --observe, not both"},
		{"local", "", "--observe finds the flow of the flow placements"},
	}
	for _, tt := range tests {
		o := Options{NIC: "eth0", Placements: tt.cells, Flow: tt.flow, Observe: true, Repeat: 1, RemoteNode: -1, DryRun: true}
		r, err := o.Request(fsys, iperf3Cmd)
		if err == nil {
			_, err = Run(context.Background(), r)
		}
		if !usage.Is(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s --flow %q --observe: %v; want usage error with %q", tt.cells, tt.flow, err, tt.want)
		}
	}
}

// TestObserveIRQCounts: without qstats the queue IRQs' counts decide,
// said as interrupts: on the seed queue 3's IRQ 287 rose by 500 and
// queue 0's by 20.
func TestObserveIRQCounts(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	f := &fakeIperf3{t: t, root: root, doc: iperf3Sample(t, "tcp.json")}
	o := &observing{f: f, irqBumps: map[int]uint64{287: 500, 284: 20}}
	res, err := Run(context.Background(), observeRequest(t, root, o, &failingWriter{}))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	fp := res.Plan.Flow
	want := "observed: +500 interrupts on it, at most +20 on another queue, during the observing run ("
	if !unknown.Is(fp.Queue, 3) || !unknown.Is(fp.IRQ, 287) || !strings.HasPrefix(fp.QueueBy, want) || !strings.Contains(fp.QueueBy, "queue IRQ count") {
		t.Errorf("flow plan %+v; want queue 3, IRQ 287, by %q… (queue IRQ count)", fp, want)
	}
}
