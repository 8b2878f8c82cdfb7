package report

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestWriteZCPlan: the steps without the NIC's name, the IRQ's move,
// what is skipped and why, the blockers, and the application's CPUs in
// each form that can say them (none that needs the node when it is
// unknown).
func TestWriteZCPlan(t *testing.T) {
	two := uint32(2)
	rule := nicset.RuleSpec{FlowType: "tcp4", DstPort: 9000, Queue: 1}
	p := &tune.ZCPlan{NIC: "eth2", Queue: 1, Port: 9000,
		Steps: []tune.SteerStep{
			{NIC: "eth2", Channels: &nicset.ChannelCounts{Combined: &two}},
			{NIC: "eth2", Rule: &rule},
		},
		Skipped:  []tune.ZCSkip{{Step: "rings", Because: "unknown: not captured"}},
		Blockers: []string{"driver with the queue-management API: virtio_net does not implement it"},
		IRQCPU:   2, AppCPUs: "4",
	}
	tests := []struct {
		name string
		give tune.Pick
		want string
	}{
		{"nodes known", tune.Pick{CPUs: cpuset.New(4), Nodes: unknown.Of(cpuset.New(0)), Width: 8}, `zc prepare eth2 queue 1 port 9000
  change  channels combined 2
  change  ntuple flow-type tcp4 dst-port 9000 action 1
  change  queue 1's IRQ and NAPI thread to CPU 2
  skip    rings: unknown: not captured
  blocker driver with the queue-management API: virtio_net does not implement it
application CPUs (another core of eth2's node than CPU 2 and its siblings):
  list     4
  taskset  0x10
  mask     10
  numactl  --physcpubind=4 --membind=0
  docker   --cpuset-cpus=4 --cpuset-mems=0
  systemd  CPUAffinity=4
  cgroup   4
`},
		{"node unknown", tune.Pick{CPUs: cpuset.New(4), Width: 8}, `zc prepare eth2 queue 1 port 9000
  change  channels combined 2
  change  ntuple flow-type tcp4 dst-port 9000 action 1
  change  queue 1's IRQ and NAPI thread to CPU 2
  skip    rings: unknown: not captured
  blocker driver with the queue-management API: virtio_net does not implement it
application CPUs (another core of eth2's node than CPU 2 and its siblings):
  list     4
  taskset  0x10
  mask     10
  systemd  CPUAffinity=4
  cgroup   4
`},
	}
	for _, tt := range tests {
		p.App = &tt.give
		var b bytes.Buffer
		WriteZCPlan(&b, p)
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("%s: WriteZCPlan (-want +got):\n%s", tt.name, diff)
		}
	}
}
