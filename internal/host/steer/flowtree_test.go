package steer

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

var update = flag.Bool("update", false, "rewrite the recorded steering under cmd/irqnuma/testdata/flow")

// flowOverlay is where the recorded steering irqnuma flow's golden tests
// lay over a copy of the seed tree lives.
var flowOverlay = hosttest.Path("cmd", "irqnuma", "testdata", "flow", "seed-steer")

// seedSteering is the steering recorded for the seed tree's eth0 (an
// mlx5 ConnectX-6 Dx with 16 queues, IRQs 284-299 mlx5_comp0..15):
// Microsoft's verification key, a 128-entry table spreading the 16
// queues, udp4 hashed on addresses only (sd) and the rest on addresses
// and ports, one ntuple rule sending TCP to port 5201 to queue 7, NAPI
// threaded (sysfs threaded 1), each queue's NAPI on its comp IRQ with its
// kthread pid 4100+queue.
func seedSteering() *NIC {
	n := modelNIC(0, 16, 128)
	n.Driver = &DriverInfo{Driver: "mlx5_core", Version: "6.8.0", Firmware: "22.39.1002 (MT_0000000359)", BusInfo: "0000:98:00.0"}
	n.Index = 2
	n.RSS.Key = []byte{
		0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
		0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
		0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	}
	n.Contexts = []RSS{}
	n.Rules = &Rules{TableSize: 1024, Count: 1, Rules: []Rule{
		{Location: 3, FlowType: "tcp4", DstPort: new(uint16(5201)), DstPortMask: 0xffff, Action: RuleActionQueue, Queue: 7},
	}}
	n.Sysfs.Threaded = new(1)
	for i := range n.NAPIs {
		n.NAPIs[i].IRQ = unknown.Of(284 + i)
		n.NAPIs[i].PID = 4100 + i
	}
	return n
}

// TestFlowOverlay holds the committed overlay to seedSteering: read back
// over the seed tree it is that model (-update writes it again).
// exportValues lets cmp see inside an unknown.Value.
var exportValues = cmp.Exporter(func(t reflect.Type) bool { return strings.HasPrefix(t.String(), "unknown.Value[") })

func TestFlowOverlay(t *testing.T) {
	want := seedSteering()
	if *update {
		if err := os.RemoveAll(flowOverlay); err != nil {
			t.Fatal(err)
		}
		writeRecorded(t, flowOverlay, []*NIC{want})
	}
	got, err := Read(openTree(t, flowOverlay), []string{"eth0"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.NIC("eth0"), exportValues); diff != "" {
		t.Errorf("%s read (-model +read):\n%s", filepath.Clean(flowOverlay), diff)
	}
}
