package topology

import (
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// TestQueuesUnknownRealHosts: hwloc-32intel64-2p8co2t+8ve has
// /sys/class/net/enp96s0f0 and enp96s0f1 (i40e) without their queues
// folders, so their queue counts are unknown (-1), not 0;
// hwloc-32em64t-2n8c+dax+nvme+mic+dimms keeps eth0's 8 rx-N and 8 tx-N.
func TestQueuesUnknownRealHosts(t *testing.T) {
	realhosts.Require(t)
	tests := []struct {
		capture, nic string
		rx, tx       int
	}{
		{"hwloc-32intel64-2p8co2t+8ve", "enp96s0f0", -1, -1},
		{"hwloc-32intel64-2p8co2t+8ve", "enp96s0f1", -1, -1},
		{"hwloc-32em64t-2n8c+dax+nvme+mic+dimms", "eth0", 8, 8},
	}
	for _, tt := range tests {
		c := realhosts.MustLookup(t, tt.capture)
		h, err := Read(hosttest.Open(t, realhosts.Root(t, c)))
		if err != nil {
			t.Fatal(err)
		}
		n, ok := h.NICByName(tt.nic)
		if !ok {
			t.Fatalf("%s: no NIC %s", tt.capture, tt.nic)
		}
		if n.RxQueues.Or(-1) != tt.rx || n.TxQueues.Or(-1) != tt.tx || n.QueuesKnown() != (tt.rx >= 0) {
			t.Errorf("%s %s: %v rx/%v tx queues (known %v), want %d/%d", tt.capture, tt.nic, n.RxQueues, n.TxQueues, n.QueuesKnown(), tt.rx, tt.tx)
		}
	}
}
