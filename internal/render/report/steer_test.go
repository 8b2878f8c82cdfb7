package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// seedTable reads the seed tree's IRQs (eth0: queue IRQs 284-299).
func seedTable(t *testing.T) (*topology.Host, *irq.Table) {
	t.Helper()
	h, err := topology.Read(hosttest.Open(t, hosttest.Root("seed")))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := irq.Load(h, irq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h, tab
}

// steerOf is a reading of the seed's eth0 after `ethtool -X eth0 equal 2`
// on 4 combined channels, a rule to queue 3, NAPI threaded with a
// kthread per queue (the first read from /proc).
func steerOf() (*steer.Host, map[int]*proc.Process) {
	one := 1
	n := &steer.NIC{Name: "eth0", Channels: &steer.Channels{MaxCombined: 16, Combined: 4},
		RSS:   &steer.RSS{Rings: 4, HashFunc: "toeplitz"},
		Rules: &steer.Rules{Count: 1, Rules: []steer.Rule{{Location: 7, FlowType: "udp4", Action: steer.RuleActionQueue, Queue: 3}}},
		Sysfs: steer.Sysfs{Threaded: &one}}
	for i := range 128 {
		n.RSS.Table = append(n.RSS.Table, uint32(i%2))
	}
	for q := range uint32(4) {
		n.Queues = append(n.Queues, steer.NetdevQueue{ID: q, Type: steer.QueueTypeRX, NAPI: 8193 + q})
		n.NAPIs = append(n.NAPIs, steer.NAPI{ID: 8193 + q, IRQ: unknown.Of(284 + int(q)), PID: 900 + int(q)})
	}
	virtio := &steer.NIC{Name: "eth1"}
	virtio.SetUnknown(steer.PartRSS, unknown.Reason{Kind: unknown.KindDriver, Detail: "EOPNOTSUPP"})
	virtio.SetUnknown(steer.PartRules, unknown.Reason{Kind: unknown.KindDriver, Detail: "EOPNOTSUPP"})
	virtio.SetUnknown(steer.PartChannels, unknown.Reason{Kind: unknown.KindNotCaptured})
	threads := map[int]*proc.Process{900: {PID: 900, Comm: "napi/eth0-8193", Allowed: cpuset.New(17),
		Threads: []proc.Thread{{TID: 900, LastCPU: unknown.Of(17)}}}}
	return &steer.Host{Source: "netlink", NICs: []*steer.NIC{n, virtio}, Sysctls: map[string]int64{"busy_poll": 0}}, threads
}

func TestWriteSteering(t *testing.T) {
	_, tab := seedTable(t)
	sh, threads := steerOf()
	var b bytes.Buffer
	if err := writeSteering(&b, Steering(tab, sh, threads)); err != nil {
		t.Fatal(err)
	}
	want := `
eth0 steering (netlink): 4 combined channels (max 16); RSS table of 128 entries
  over 4 rings, toeplitz; 1 ntuple rule; NAPI threaded
RXQ  IRQ  NAPI  KTHREAD  ON            RSS               RULES
0    284  8193  900      17 (last 17)  64/128            -
1    285  8194  901      unread        64/128            -
2    286  8195  902      unread        0/128 no traffic  -
3    287  8196  903      unread        0/128 no traffic  7

eth1 steering unknown: channels: not captured; ntuple, rss: not supported by the
  driver (EOPNOTSUPP)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if len(line) > 80 {
			t.Errorf("line wider than 80 columns: %q", line)
		}
	}
}

// TestSteeringMissingQueues: a table naming queues past the rings lists
// them, marked.
func TestSteeringMissingQueues(t *testing.T) {
	n := &steer.NIC{Name: "enp0s29f2", Channels: &steer.Channels{MaxRX: 8, RX: 3}, RSS: &steer.RSS{Rings: 3}}
	for i := range 16 {
		n.RSS.Table = append(n.RSS.Table, uint32(i%8))
	}
	doc := Steering(nil, &steer.Host{Source: "recorded", NICs: []*steer.NIC{n}}, nil)
	var got []string
	for _, q := range doc.NICs[0].Queues.Or(nil) {
		if !q.Exists {
			got = append(got, strings.Join(queueRows([]QueueSteerJSON{q})[0], " "))
		}
	}
	want := []string{"3 - - - - 2/16 no such queue -", "4 - - - - 2/16 no such queue -", "5 - - - - 2/16 no such queue -",
		"6 - - - - 2/16 no such queue -", "7 - - - - 2/16 no such queue -"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queues past the rings (-want +got):\n%s", diff)
	}
}

// TestWriteIRQsJSONSteer: with the steering, the streamed document is
// still what encoding/json makes of the document.
func TestWriteIRQsJSONSteer(t *testing.T) {
	h, tab := seedTable(t)
	sh, threads := steerOf()
	doc := IRQs(h, tab)
	doc.Steer = Steering(tab, sh, threads)
	var want, got bytes.Buffer
	if err := jsondoc.Write(&want, jsondoc.SchemaIRQList, doc, true); err != nil {
		t.Fatal(err)
	}
	if err := WriteIRQsJSON(&got, h, tab, doc.Steer); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), got.String()); diff != "" {
		t.Errorf("WriteIRQsJSON differs from jsondoc.Write (-want +got):\n%s", diff)
	}
	if !strings.Contains(got.String(), `"table": [`) || !strings.Contains(got.String(), `"kthread_cpus": "17"`) {
		t.Errorf("the JSON lacks the reading or the kthread: %s", got.String())
	}
}

// TestSteerSummaryTableUnknown: a NIC whose RSS reply has a hash function
// but no table (virtio_net without RSS, as 6.18 answers) says why the
// table is unknown, not a bare "unknown".
func TestSteerSummaryTableUnknown(t *testing.T) {
	n := &steer.NIC{Name: "eth0", RSS: &steer.RSS{Rings: 1, HashFunc: "toeplitz"}}
	n.SetUnknown(steer.PartRSSTable, unknown.Reason{Kind: unknown.KindDriver, Detail: "the driver reports no indirection table"})
	n.SetUnknown(steer.PartRules, unknown.Reason{Kind: unknown.KindDriver, Detail: "EOPNOTSUPP"})
	got := steerSummary(n)
	want := "channels unknown; RSS table unknown: not supported by the driver; ntuple rules unknown: not supported by the driver; NAPI ids unknown"
	if got != want {
		t.Errorf("steerSummary = %q, want %q", got, want)
	}
}
