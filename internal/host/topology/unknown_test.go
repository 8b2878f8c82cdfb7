package topology

import (
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestUnknownReasons: what the tree does not say is unknown with the
// reason that is true of it: an offline CPU's topology is not reported,
// a numa_node or speed of -1 is the host saying it does not know, a file
// a capture lacks is not captured, and a fact with no meaning for the
// thing (the IRQ node of a NIC read from /sys/class/net) is not
// applicable.
func TestUnknownReasons(t *testing.T) {
	off, err := Read(hosttest.Open(t, hosttest.Root("offline-2node")))
	if err != nil {
		t.Fatal(err)
	}
	virtio, err := Read(hosttest.Open(t, hosttest.Root("vm-virtio")))
	if err != nil {
		t.Fatal(err)
	}
	c1, _ := off.CPU(1)
	eth0, ok := virtio.NICByName("eth0")
	if !ok {
		t.Fatal("vm-virtio: no eth0")
	}
	noCPU, _ := off.CPU(4000)
	tests := []struct {
		name string
		give unknown.Reason
		want unknown.Kind
	}{
		{"offline CPU 1 core", c1.Core.Why(), unknown.KindNotReported},
		{"offline CPU 1 package", c1.Package.Why(), unknown.KindNotReported},
		{"offline CPU 1 siblings", c1.Siblings.Why(), unknown.KindNotReported},
		{"no CPU 4000", noCPU.Node.Why(), unknown.KindNotApplicable},
		{"virtio numa_node -1", eth0.Node.Why(), unknown.KindNotReported},
		{"virtio speed -1", eth0.SpeedMbps.Why(), unknown.KindNotReported},
		{"no xps_cpus in the tree", eth0.Queues[len(eth0.Queues)-1].CPUs.Why(), unknown.KindNotCaptured},
		{"IRQ node of a sysfs NIC", eth0.IRQNode.Why(), unknown.KindNotApplicable},
	}
	for _, tt := range tests {
		if tt.give.Kind != tt.want || tt.give.Detail == "" {
			t.Errorf("%s: reason %q, want %q with a detail", tt.name, tt.give, tt.want)
		}
	}
	if c2, _ := off.CPU(2); !c2.Core.Known() || c2.Core.Why() != (unknown.Reason{}) {
		t.Errorf("online CPU 2: core %v (%v), want known", c2.Core, c2.Core.Why())
	}
}
