package tune

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/zc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// labVirtio is eth2 as the lab's 6.18 guest reads it: virtio_net rss=on,
// 4 combined channels at most, one in use, a 128-entry default table,
// no ntuple and no tcp-data-split.
func labVirtio() *steer.NIC {
	t := make([]uint32, 128)
	return &steer.NIC{Name: "eth2", Driver: &steer.DriverInfo{Driver: "virtio_net"},
		Channels: &steer.Channels{MaxCombined: 4, Combined: 1},
		RSS:      &steer.RSS{Rings: 1, Table: t},
		Rings:    &steer.Rings{RX: 256, TX: 256},
		Unknown:  map[steer.Part]unknown.Reason{steer.PartRules: {Kind: unknown.KindDriver, Detail: "EOPNOTSUPP"}},
	}
}

func stepNames(steps []SteerStep) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Name())
	}
	return out
}

func TestPlanZCSteps(t *testing.T) {
	p, err := planZCSteps(labVirtio(), 1, 9000)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"eth2 channels combined 2", "eth2 rss table over 0 (128 entries)"}
	if diff := cmp.Diff(want, stepNames(p.Steps)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	var skipped []string
	for _, s := range p.Skipped {
		skipped = append(skipped, s.Step)
	}
	if diff := cmp.Diff([]string{"ntuple rule", "tcp-data-split on", "hds-thresh 0"}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	p, err = planZCSteps(labVirtio(), 3, 9000)
	if err != nil || len(p.Steps) != 2 || *p.Steps[0].Channels.Combined != 4 || slices3(p.Steps[1].RSS.Table) != "0,1,2" {
		t.Errorf("queue 3: %v, %v", err, stepNames(p.Steps))
	}
	if p, err := planZCSteps(labVirtio(), 4, 9000); err != nil || len(p.Steps) != 0 || len(p.Skipped) == 0 ||
		p.Skipped[0].Because != "queue 4 needs 5 rx queues: eth2 has at most 4 combined channels" {
		t.Errorf("queue 4 of 4 channels: %v, %+v; want it blocked, nothing planned", err, p)
	}
	bn := labVirtio()
	off, hds := unknown.Of(steer.TCPDataSplitDisabled), uint32(256)
	bn.Channels.Combined, bn.RSS.Rings = 8, 8
	bn.Channels.MaxCombined = 8
	bn.Rings.TCPDataSplit, bn.Rings.HDSThresh = off, &hds
	bn.Rules, bn.Unknown = &steer.Rules{TableSize: 8}, nil
	p, err = planZCSteps(bn, 1, 9000)
	want = []string{"eth2 rss table over 0,2,3,4,5,6,7 (128 entries)", "eth2 ntuple flow-type tcp4 dst-port 9000 action 1",
		"eth2 ntuple flow-type tcp6 dst-port 9000 action 1", "eth2 rings tcp-data-split on hds-thresh 0"}
	if diff := cmp.Diff(want, stepNames(p.Steps)); err != nil || diff != "" {
		t.Errorf("a NIC with every part: %v (-want +got):\n%s", err, diff)
	}
}

// slices3 shows a table's distinct queues.
func slices3(t []uint32) string {
	seen := map[uint32]bool{}
	var out []string
	for _, q := range t {
		if !seen[q] {
			seen[q] = true
			out = append(out, string(rune('0'+q)))
		}
	}
	return strings.Join(out, ",")
}

// TestPlanZC plans on seed, whose eth0 is on node 1 (CPUs 16-31,48-63),
// with eth0 read as labVirtio reads eth2, and CPUs 16 and 17 made one
// core's threads (as hosts that number siblings next to each other
// have them): the IRQ goes to CPU 16, the application to 18, not to 16's
// sibling 17 though it is the lowest thread of its own core once 16 is
// taken; the blockers are zc check's but the channels the plan adds.
func TestPlanZC(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	cpu := filepath.Join(root, "sys/devices/system/cpu")
	for c, sib := range map[int]string{16: "16-17", 17: "16-17", 48: "48", 49: "49"} {
		p := filepath.Join(cpu, "cpu"+strconv.Itoa(c), "topology/thread_siblings_list")
		if err := os.WriteFile(p, []byte(sib+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys := hosttest.Open(t, root)
	h, err := topology.Read(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.SiblingsOf(cpuset.New(16)); got.String() != "16-17" {
		t.Fatalf("SiblingsOf(16) = %s, want 16-17: the tree was not changed as the test needs", got)
	}
	n := labVirtio()
	n.Name = "eth0"
	q, port := 1, 9000
	check, err := zc.Check(fsys, h, "eth0", zc.Options{Queue: &q, Port: &port, Steer: n})
	if err != nil {
		t.Fatal(err)
	}
	p, err := planZC(h, n, check, ZCOptions{Queue: q, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	if p.IRQCPU != 16 || p.AppCPUs != "18" || p.App == nil || p.App.CPUs.String() != "18" {
		t.Errorf("IRQ CPU %d, application CPUs %s; want 16 and 18", p.IRQCPU, p.AppCPUs)
	}
	// zc check finds the channels short (one, queue 1 wants two) and
	// the driver without the queue API; the plan adds the channel.
	var ids []zc.ID
	for _, b := range check.Blockers() {
		ids = append(ids, b.ID)
	}
	if diff := cmp.Diff([]zc.ID{zc.IDQueueAPI, zc.IDChannels}, ids); diff != "" {
		t.Fatalf("zc check's blockers (-want +got):\n%s", diff)
	}
	want := []string{"driver with the queue-management API (netdev_queue_mgmt_ops): virtio_net does not implement netdev_queue_mgmt_ops (mainline kernel source as of 6.18)"}
	if diff := cmp.Diff(want, p.Blockers); diff != "" {
		t.Errorf("blockers (-want +got):\n%s", diff)
	}
}

// TestQueueIRQs: a queue's combined vector, or its rx and tx vectors
// (virtio_net's input.N and output.N); none for a queue without IRQs.
func TestQueueIRQs(t *testing.T) {
	tests := []struct {
		host, nic string
		q         int
		want      []int
	}{
		{"vm-virtio", "eth0", 0, []int{38, 39}},
		{"vm-virtio", "eth0", 1, nil},
		{"sos-ice", "em1", 2, []int{159}},
	}
	for _, tt := range tests {
		got, err := queueIRQs(hosttest.Open(t, hosttest.Root(tt.host)), tt.nic, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("queueIRQs(%s %s, %d) (-want +got):\n%s", tt.host, tt.nic, tt.q, diff)
		}
	}
}

// TestZCPinRequest: the pin of a plan places the queue's IRQs on the
// plan's IRQ CPU after its steering steps; a queue without IRQs yet pins
// no NIC and says so.
func TestZCPinRequest(t *testing.T) {
	fsys := hosttest.FS(t, "vm-virtio")
	two := uint32(2)
	steps := []SteerStep{{NIC: "eth0", Channels: &nicset.ChannelCounts{Combined: &two}}}
	for _, tt := range []struct {
		queue    int
		wantNICs []string
		wantIRQs []int
		noIRQ    bool
	}{
		{0, []string{"eth0"}, []int{38, 39}, false},
		{1, nil, nil, true},
	} {
		p := &ZCPlan{NIC: "eth0", Queue: tt.queue, IRQCPU: 1, Steps: steps}
		req, noIRQ, err := p.PinRequest(fsys, nil)
		if err != nil {
			t.Fatal(err)
		}
		if noIRQ != tt.noIRQ || !cmp.Equal(req.NICs, tt.wantNICs) || !cmp.Equal(req.Options.IRQs, tt.wantIRQs) ||
			req.Options.CPUs.String() != "1" || req.Steer == nil || len(req.Steer.Steps) != 1 || req.Root != fsys {
			t.Errorf("queue %d: PinRequest = %+v, noIRQ %v; want NICs %v, IRQs %v on CPU 1 after the steering", tt.queue, req, noIRQ, tt.wantNICs, tt.wantIRQs)
		}
	}
}
