package audit

import (
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestPlaceManagedNode: /proc/irq/N/node of a managed IRQ is the node of
// its CPUs, not its device's, so it decides nothing; that of an IRQ known
// not to be managed is the device's. seed's nvme0q0 (IRQ 40) is not
// managed, nvme0q2 (IRQ 42) is.
func TestPlaceManagedNode(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := irq.Load(h, irq.Options{All: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		give      int
		wantKnown bool
	}{{40, true}, {42, false}}
	for _, tt := range tests {
		q, ok := tab.Get(tt.give)
		if !ok {
			t.Fatalf("no IRQ %d", tt.give)
		}
		if p := Place(h, q); p.LocalCPUs.Known() != tt.wantKnown {
			t.Errorf("Place(IRQ %d, managed %s, node %s).LocalCPUs known = %v, want %v", tt.give, q.Managed, q.Node, p.LocalCPUs.Known(), tt.wantKnown)
		}
	}
}
