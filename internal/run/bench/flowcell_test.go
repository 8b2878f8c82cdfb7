package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/judge/flow"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// seedFlow is a UDP flow into the seed's eth0 (udp4 hashed sd there).
const seedFlow = "udp 192.0.2.9:40000 192.0.2.2:5201"

// seedSteer copies the seed tree and lays over it the recorded steering
// of eth0 that irqnuma flow's tests use (cmd/irqnuma/testdata/flow/
// seed-steer: a key, a 128-entry table over 16 queues, udp4 hashed sd,
// threaded NAPI).
func seedSteer(t *testing.T) string {
	t.Helper()
	root := hosttest.Copy(t, "seed")
	hosttest.Overlay(t, root, hosttest.Path("cmd", "irqnuma", "testdata", "flow", "seed-steer"))
	return root
}

// flowRequest is a dry-run request for cells with --flow fl.
func flowRequest(t *testing.T, root, cells, fl string) Request {
	t.Helper()
	o := Options{NIC: "eth0", Placements: cells, Flow: fl, Repeat: 1, RemoteNode: -1, DryRun: true}
	r, err := o.Request(hosttest.Open(t, root), iperf3Cmd)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFlowPlanSeed: on the seed with its steering, the flow's queue and
// IRQ are flow's prediction, all three flow cells pin the IRQs to one
// CPU C of the NIC's node 1 and run the command on C, on C's SMT sibling
// (thread_siblings_list) and on another core that is no sibling of C,
// beside the node-wide cells.
func TestFlowPlanSeed(t *testing.T) {
	root := seedSteer(t)
	req := flowRequest(t, root, "local,flow-same-core,flow-sibling,flow-other-core", seedFlow)
	res, err := Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"local irq 1:16-23,48-55 app 1:24-31,56-63 mem -",
		"flow-same-core irq 1:16 app 1:16 mem -",
		"flow-sibling irq 1:16 app 1:48 mem -",
		"flow-other-core irq 1:16 app 1:17 mem -",
	}
	var got []string
	for _, c := range res.Plan.Cells {
		got = append(got, cellLine(c))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	p, err := flow.Predict(req.Root, *req.Flow, flow.Options{NIC: "eth0"})
	if err != nil {
		t.Fatal(err)
	}
	fp := res.Plan.Flow
	pi, _ := p.IRQ.Get()
	if !p.Queue.Known() || !p.IRQ.Known() || !unknown.Same(fp.Queue, p.Queue) || !unknown.Is(fp.IRQ, pi.IRQ) || fp.QueueBy != "rss" {
		t.Fatalf("flow plan %+v, flow's prediction %+v", fp, p)
	}
	pn, _ := p.NAPI.Get()
	if !unknown.Same(fp.NAPIPID, pn.PID) || fp.NAPIPID.Or(0) == 0 {
		t.Errorf("NAPI thread %v, flow says %+v", fp.NAPIPID, p.NAPI)
	}
	h, _, err := irq.Read(req.Root, irq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	core, sib, other := fp.Core.Or(-1), fp.Sibling.Or(-1), fp.Other.Or(-1)
	c := cpuset.New(core)
	if !h.SiblingsOf(c).Contains(sib) || h.CoreOf(other) == h.CoreOf(core) || h.SiblingsOf(c).Contains(other) {
		t.Errorf("C %d, sibling %d, other %d: siblings of C are %s", core, sib, other, h.SiblingsOf(c))
	}
}

// TestFlowNoSMT: on cnto-worker2 (SMT off, 32 CPUs, one thread a core)
// the sibling cell is kept, not applicable, saying the host has SMT
// off; same-core and other-core run on two different cores of the NIC's
// node.
func TestFlowNoSMT(t *testing.T) {
	c := realhosts.MustLookup(t, "cnto-worker2")
	fsys := hosttest.Open(t, realhosts.Root(t, c))
	h, tab, err := irq.Read(fsys, irq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if hostSMT(h) {
		t.Fatal("cnto-worker2 has SMT on in this capture; the test needs a host with SMT off")
	}
	q := uint32(0)
	nic := "eno4"
	irqs := tab.ForNIC(nic)
	if len(irqs) == 0 {
		t.Fatalf("%s has no IRQs in the capture", nic)
	}
	fp := newFlowPlan(unknown.Because(unknown.KindNotApplicable, "not yet"))
	fp.Flow, fp.Queue, fp.QueueBy, fp.IRQ = "udp 10.0.0.1:1 10.0.0.2:2", unknown.Of(q), "rss", unknown.Of(irqs[0].IRQ)
	fp.NAPIPID = unknown.NotAs[int](unknown.KindNotApplicable, "NAPI is not threaded")
	cells, _ := ParseCells("flow-same-core,flow-sibling,flow-other-core")
	p, err := planMatrix(fsys, h, tab, nic, cells, nil, fp)
	if err != nil {
		t.Fatal(err)
	}
	same, sib, other := p.Cells[0], p.Cells[1], p.Cells[2]
	t.Logf("%s; %s; %s", cellLine(same), cellLine(sib), cellLine(other))
	if sib.Applicable || sib.Reason != "no SMT sibling: the host has SMT off" {
		t.Errorf("flow-sibling: %s", cellLine(sib))
	}
	if !same.Applicable || !other.Applicable {
		t.Fatalf("same %s; other %s", cellLine(same), cellLine(other))
	}
	a, b := same.AppCPUs.IDs()[0], other.AppCPUs.IDs()[0]
	if h.CoreOf(a) == h.CoreOf(b) || h.NodeOf(b).Or(-1) != p.NICNode || !same.IRQCPUs.Equal(same.AppCPUs) || !other.IRQCPUs.Equal(same.IRQCPUs) {
		t.Errorf("same %s, other %s on node %d", cellLine(same), cellLine(other), p.NICNode)
	}
}

// TestFlowQueueUnknown: on the seed without recorded steering flow
// cannot tell the queue; bench refuses the flow cells with flow's own
// reason, and with no other cell asked refuses the bench.
func TestFlowQueueUnknown(t *testing.T) {
	root := hosttest.Shared(t, "seed")
	req := flowRequest(t, root, "flow-same-core,flow-sibling,flow-other-core", seedFlow)
	p, err := flow.Predict(req.Root, *req.Flow, flow.Options{NIC: "eth0"})
	if err != nil {
		t.Fatal(err)
	}
	why := p.Queue.Why().Detail
	if p.Queue.Known() || !strings.HasPrefix(why, "queue unknown: ") {
		t.Fatalf("flow predicts queue %v (%q) on the bare seed", p.Queue, why)
	}
	res, err := Run(context.Background(), req)
	if res != nil || err == nil || err.Error() != "no placement asked for can run on this host: "+why {
		t.Errorf("result %v, error %v; want none, and flow's reason %q", res, err, why)
	}
	// Beside a node-wide cell, the bench goes on without the flow cells.
	req = flowRequest(t, root, "local,flow-sibling", seedFlow)
	res, err = Run(context.Background(), req)
	if err != nil || !res.Cells[0].Applicable || res.Cells[1].Applicable || res.Cells[1].Reason != why {
		t.Errorf("err %v, cells %+v", err, res.Cells)
	}
}

// TestFlowUsage: --flow and the flow placements go together, and a
// flow that does not parse is one clear usage error.
func TestFlowUsage(t *testing.T) {
	fsys := hosttest.Open(t, hosttest.Shared(t, "seed"))
	tests := []struct{ cells, flow, want string }{
		{"flow-sibling", "udp 192.0.2.9", `--flow "udp 192.0.2.9": want "udp|tcp SRC[:PORT] DST[:PORT]" (3 words, 2 given)`},
		{"flow-sibling", "sctp 192.0.2.9 192.0.2.2", `--flow: flow protocol "sctp": want udp or tcp`},
		{"flow-sibling", "", "the flow placements need the flow"},
		{"local", seedFlow, "--flow is for the flow placements"},
		{"all", seedFlow, "--flow is for the flow placements"},
	}
	for _, tt := range tests {
		o := Options{NIC: "eth0", Placements: tt.cells, Flow: tt.flow, Repeat: 1, RemoteNode: -1, DryRun: true}
		r, err := o.Request(fsys, iperf3Cmd)
		if err == nil {
			_, err = Run(context.Background(), r)
		}
		if !usage.Is(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s --flow %q: %v; want usage error with %q", tt.cells, tt.flow, err, tt.want)
		}
	}
}

// TestRunFlowSeed runs the three flow cells on a copy of the seed with
// its steering: one pin of the flow's queue IRQ alone to C for all
// three, each run on its CPU with that IRQ on C and every other queue
// IRQ of eth0 where it was, and the tree as it was afterwards.
func TestRunFlowSeed(t *testing.T) {
	root := seedSteer(t)
	before := hosttest.Files(t, root)
	f := &fakeIperf3{t: t, root: root, doc: iperf3Sample(t, "tcp.json")}
	w := &failingWriter{}
	req := flowRequest(t, root, "flow-same-core,flow-sibling,flow-other-core", seedFlow)
	rec := &recorder{w: w}
	req.DryRun, req.Writer, req.Exec, req.Observer = false, w, f.exec, rec
	others := slices.DeleteFunc(slices.Clone(seedQueueIRQs), func(n int) bool { return n == 284 })
	was := perIRQ(t, root, others)
	var during []string
	f.onRun = func() {
		during = append(during, affinities(t, root, []int{284}).String())
		if diff := cmp.Diff(was, perIRQ(t, root, others)); diff != "" {
			t.Errorf("run %d: other queue IRQs moved (-before +during):\n%s", f.runs, diff)
		}
	}
	res, err := Run(context.Background(), req)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, strings.Join(rec.events, "\n"))
	}
	if fp := res.Plan.Flow; !unknown.Is(fp.IRQ, 284) || !unknown.Is(fp.Core, 16) {
		t.Fatalf("flow IRQ %v on C %v; the test expects IRQ 284 (queue 0) on 16", fp.IRQ, fp.Core)
	}
	if diff := cmp.Diff([]string{"16", "16", "16"}, during); diff != "" {
		t.Errorf("IRQ 284's affinity per run (-want +got):\n%s", diff)
	}
	var apps []string
	for _, s := range f.seen {
		app, _, _ := strings.Cut(s, " / ")
		apps = append(apps, app)
	}
	if diff := cmp.Diff([]string{"16", "48", "17"}, apps); diff != "" {
		t.Errorf("app CPUs per run (-want +got):\n%s", diff)
	}
	for _, c := range res.Cells {
		if !slices.Equal(c.PinIRQs, []int{284}) {
			t.Errorf("%s pins IRQs %v, want [284]", c.Name, c.PinIRQs)
		}
	}
	// One IRQ write and one back: nothing else of eth0 was touched.
	if w.n != 2 || len(res.StateFiles) != 1 || len(res.Unrestored) != 0 {
		t.Errorf("%d writes, state files %v, unrestored %v; want 2, one file, none", w.n, res.StateFiles, res.Unrestored)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("tree not as it was (-before +after):\n%s", diff)
	}
}

// perIRQ reads each IRQ's smp_affinity_list under root.
func perIRQ(t *testing.T, root string, irqs []int) map[int]string {
	t.Helper()
	out := map[int]string{}
	for _, n := range irqs {
		out[n] = affinities(t, root, []int{n}).String()
	}
	return out
}

// FuzzParseFlow: any --flow gives a flow whose words parse back to it,
// or a usage error; never a panic.
func FuzzParseFlow(f *testing.F) {
	for _, s := range []string{seedFlow, "tcp [fe80::1]:5201 [fe80::2]", "udp 1.2.3.4", "sctp a b", " udp  1.2.3.4:1   5.6.7.8:2 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fl, err := parseFlow(s)
		if err != nil {
			if !usage.Is(err) {
				t.Fatalf("%q: %v is not a usage error", s, err)
			}
			return
		}
		w := strings.Fields(s)
		again, err := flow.Parse(w[0], w[1], w[2])
		if err != nil || again != fl {
			t.Fatalf("%q: %+v, then %+v, %v", s, fl, again, err)
		}
	})
}

// TestFlowNAPIThreadUnknown: with threaded NAPI on and no record of
// which kthread serves which queue (netdev's queue-get and napi-get
// gone, as on a kernel whose driver does not link its queues to NAPIs),
// the flow's receive work runs in a thread bench cannot pin: the flow
// cells are refused saying so, not planned with the IRQ alone.
func TestFlowNAPIThreadUnknown(t *testing.T) {
	root := seedSteer(t)
	for _, f := range []string{"netdev.queue-get", "netdev.napi-get"} {
		if err := os.Remove(filepath.Join(root, "irqnuma", "steer", "eth0", f)); err != nil {
			t.Fatal(err)
		}
	}
	req := flowRequest(t, root, "local,flow-same-core,flow-other-core", seedFlow)
	p, err := flow.Predict(req.Root, *req.Flow, flow.Options{NIC: "eth0"})
	if err != nil {
		t.Fatal(err)
	}
	pn, _ := p.NAPI.Get()
	pi, _ := p.IRQ.Get()
	napiWhy := pn.PID.Why().Detail
	if !p.Queue.Known() || !p.IRQ.Known() || !unknown.Is(p.Processing, flow.ProcessingNAPIThread) || !p.NAPI.Known() || pn.PID.Known() || napiWhy == "" {
		t.Fatalf("flow's path: queue %v, IRQ %+v, processing %v, NAPI %+v; want a queue and IRQ, and an unknown NAPI thread", p.Queue, p.IRQ, p.Processing, p.NAPI)
	}
	res, err := Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	fp := res.Plan.Flow
	if why, ok := fp.napiUnknown(); !ok || why != napiWhy {
		t.Errorf("plan's NAPI thread %v, unknown %q; want unknown for flow's %q", fp.NAPIPID, why, napiWhy)
	}
	t.Logf("flow cells refused: %s", napiWhy)
	want := fmt.Sprintf("queue %d's receive work runs in a NAPI kthread: %s; pinning IRQ %d alone would not place it (threaded NAPI off: echo 0 > /sys/class/net/eth0/threaded)", p.Queue.Or(0), napiWhy, pi.IRQ)
	cells := res.Plan.Cells
	if !cells[0].Applicable {
		t.Errorf("local: %s", cellLine(cells[0]))
	}
	for _, c := range cells[1:] {
		if c.Applicable || c.Reason != want || len(c.PinIRQs) != 0 {
			t.Errorf("%s: applicable %v, pins %v, reason\n%q\nwant\n%q", c.Name, c.Applicable, c.PinIRQs, c.Reason, want)
		}
	}
}
