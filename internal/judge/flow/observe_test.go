package flow

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func counters(t *testing.T, root, nic string) *Counters {
	t.Helper()
	fsys, err := kfile.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadCounters(fsys, nic)
	if err != nil {
		t.Fatalf("ReadCounters(%s, %s): %v", root, nic, err)
	}
	return c
}

// TestObserveSeedIRQs: two samples of the seed host, whose eth0 (mlx5,
// no recorded qstats) has combined queue vectors mlx5_comp0..15 on IRQs
// 284..299; between them queue 3's IRQ (287) rose by 500 and queue 0's
// (284) by 20.
func TestObserveSeedIRQs(t *testing.T) {
	a := hosttest.Copy(t, "seed")
	b := hosttest.Copy(t, "seed")
	hosttest.BumpIRQ(t, b, 287, 500)
	hosttest.BumpIRQ(t, b, 284, 20)
	ca, cb := counters(t, a, "eth0"), counters(t, b, "eth0")
	if ca.Source != CountersIRQ || !strings.Contains(ca.NotQStats, "qstats") {
		t.Fatalf("source %q (not qstats: %q), want %q with why", ca.Source, ca.NotQStats, CountersIRQ)
	}
	o, err := Diff(ca, cb, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint32]uint64{}
	for _, d := range o.Queues {
		got[d.Queue] = d.Delta
		if len(d.IRQs) != 1 || d.IRQs[0] != 284+int(d.Queue) {
			t.Errorf("queue %d counted IRQs %v, want [%d]", d.Queue, d.IRQs, 284+d.Queue)
		}
	}
	want := map[uint32]uint64{}
	for q := range uint32(len(o.Queues)) {
		want[q] = 0
	}
	want[0], want[3] = 20, 500
	if len(o.Queues) != 16 {
		t.Errorf("%d queues, want 16", len(o.Queues))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	if !o.Busiest.Known() || o.Busiest.Or(0) != 3 || o.BusiestDelta != 500 {
		t.Fatalf("busiest %v +%d, want 3 +500", o.Busiest, o.BusiestDelta)
	}
	if len(o.Notes) == 0 || !strings.Contains(strings.Join(o.Notes, "\n"), "also serves tx") {
		t.Errorf("notes %q: want the combined vectors' tx completions said", o.Notes)
	}

	q3, q5 := uint32(3), uint32(5)
	o.Judge(unknown.Of(q3))
	if !o.Landed.Known() || !o.Landed.Or(false) || !strings.Contains(o.Verdict, "landed on the predicted queue 3") || !strings.Contains(o.Verdict, "0 +20") {
		t.Errorf("Judge(3): landed %v, verdict %q", o.Landed, o.Verdict)
	}
	o.Judge(unknown.Of(q5))
	if !o.Landed.Known() || o.Landed.Or(false) || !strings.Contains(o.Verdict, "not on the predicted queue 5 (+0 interrupts): queue 3 rose most (+500") {
		t.Errorf("Judge(5): landed %v, verdict %q", o.Landed, o.Verdict)
	}
	o.Judge(unknown.NotAs[uint32](unknown.KindNotCaptured, "queue unknown: no key"))
	if o.Landed.Known() || !strings.Contains(o.Verdict, "queue 3 rose most") || !strings.Contains(o.Verdict, "no key") {
		t.Errorf("Judge(nil): landed %v, verdict %q", o.Landed, o.Verdict)
	}
}

// TestObserveNothingRoseAndTie: the same sample twice says nothing rose;
// two queues rising equally name no queue, and a prediction outside them
// did not land.
func TestObserveNothingRoseAndTie(t *testing.T) {
	a := hosttest.Copy(t, "seed")
	ca := counters(t, a, "eth0")
	o, err := Diff(ca, ca, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	q := uint32(3)
	o.Judge(unknown.Of(q))
	if o.Busiest.Known() || o.Landed.Known() || !strings.HasPrefix(o.Verdict, "no rx counter of eth0 rose") {
		t.Errorf("nothing rose: busiest %v landed %v verdict %q", o.Busiest, o.Landed, o.Verdict)
	}
	b := hosttest.Copy(t, "seed")
	hosttest.BumpIRQ(t, b, 285, 7)
	hosttest.BumpIRQ(t, b, 286, 7)
	if o, err = Diff(ca, counters(t, b, "eth0"), time.Second); err != nil {
		t.Fatal(err)
	}
	o.Judge(unknown.Of(q))
	if o.Busiest.Known() || !cmp.Equal(o.Tied, []uint32{1, 2}) || !o.Landed.Known() || o.Landed.Or(false) {
		t.Errorf("tie: busiest %v tied %v landed %v verdict %q", o.Busiest, o.Tied, o.Landed, o.Verdict)
	}
	one := uint32(1)
	o.Judge(unknown.Of(one))
	if o.Landed.Known() || !strings.Contains(o.Verdict, "queues 1, 2 rose equally most") {
		t.Errorf("tie with queue 1 predicted: landed %v verdict %q", o.Landed, o.Verdict)
	}
}

// TestObserveVirtio: the virtio VM's eth0 has one rx vector,
// virtio2-input.0 (IRQ 38), and a tx one that is not counted.
func TestObserveVirtio(t *testing.T) {
	a := hosttest.Copy(t, "vm-virtio")
	b := hosttest.Copy(t, "vm-virtio")
	hosttest.BumpIRQ(t, b, 38, 3)
	o, err := Diff(counters(t, a, "eth0"), counters(t, b, "eth0"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := []QueueDelta{{Queue: 0, Delta: 3, IRQs: []int{38}}}
	if diff := cmp.Diff(want, o.Queues); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
	if len(o.Notes) != 0 {
		t.Errorf("notes %q, want none (an rx-only vector)", o.Notes)
	}
}

// TestObserve: Observe says when its first sample is taken, and what
// rises after it (queue 0's rx vector, IRQ 38, on the virtio VM) is the
// queue's rise.
func TestObserve(t *testing.T) {
	root := hosttest.Copy(t, "vm-virtio")
	fsys, err := kfile.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	told := 0
	o, err := Observe(fsys, "eth0", 10*time.Millisecond, func(first *Counters) {
		told++
		if first.Source != CountersIRQ || first.Queues[0] != 814 {
			t.Errorf("first sample %s, queue 0 at %d; want %s, 814", first.Source, first.Queues[0], CountersIRQ)
		}
		hosttest.BumpIRQ(t, root, 38, 3)
	})
	if err != nil {
		t.Fatal(err)
	}
	if told != 1 {
		t.Errorf("told of the first sample %d times, want once", told)
	}
	want := []QueueDelta{{Queue: 0, Delta: 3, IRQs: []int{38}}}
	if diff := cmp.Diff(want, o.Queues); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
	if o.Seconds < 0.01 {
		t.Errorf("observed for %gs, want at least the 10ms asked", o.Seconds)
	}
}

// TestDiffQStats: qstats samples, a counter that went back, a queue
// that appeared, and samples of different sources refused.
func TestDiffQStats(t *testing.T) {
	a := &Counters{NIC: "eth2", Source: CountersQStats, Queues: map[uint32]uint64{0: 10, 1: 100, 2: 5}}
	b := &Counters{NIC: "eth2", Source: CountersQStats, Queues: map[uint32]uint64{0: 12, 1: 90, 2: 905, 3: 1}}
	o, err := Diff(a, b, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := []QueueDelta{{Queue: 0, Delta: 2}, {Queue: 1, Reset: true}, {Queue: 2, Delta: 900}, {Queue: 3, Reset: true}}
	if diff := cmp.Diff(want, o.Queues); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
	q := uint32(2)
	o.Judge(unknown.Of(q))
	if !o.Landed.Known() || !o.Landed.Or(false) || !strings.Contains(o.Verdict, "+900 packets") {
		t.Errorf("landed %v verdict %q", o.Landed, o.Verdict)
	}
	if len(o.Notes) != 2 {
		t.Errorf("notes %q, want the reset and the new queue", o.Notes)
	}
	irqs := &Counters{NIC: "eth2", Source: CountersIRQ, Queues: map[uint32]uint64{0: 1}}
	if _, err := Diff(a, irqs, time.Second); err == nil {
		t.Error("Diff of a qstats and an IRQ sample: no error")
	}
}
