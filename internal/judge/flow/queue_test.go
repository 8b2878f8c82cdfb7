package flow

import (
	"errors"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestPlaceQueue: a queue found by other means is placed as Predict
// places a predicted one: on the seed, eth0's queue 3 is served by
// IRQ 287 (mlx5_comp3, matched by its name), on node 1, and keeps how
// it was found; an unknown NIC is refused.
func TestPlaceQueue(t *testing.T) {
	fsys := hosttest.Open(t, hosttest.Shared(t, "seed"))
	p, err := PlaceQueue(fsys, "eth0", 3, "observed: test")
	if err != nil {
		t.Fatal(err)
	}
	if !unknown.Is(p.Queue, 3) || p.QueueBy != "observed: test" || p.NIC != "eth0" || !unknown.Is(p.Node, 1) {
		t.Errorf("path %+v: want queue 3 of eth0 on node 1, by observation", p)
	}
	if q, ok := p.IRQ.Get(); !ok || q.IRQ != 287 || q.Name != "mlx5_comp3@pci:0000:98:00.0" || !unknown.Is(p.Processing, ProcessingIRQ) {
		t.Errorf("IRQ %+v, processing %q: want IRQ 287 (mlx5_comp3), processed in its IRQ", p.IRQ, p.Processing)
	}
	if _, err := PlaceQueue(fsys, "eth9", 0, "observed"); !errors.Is(err, topology.ErrUnknownNIC) {
		t.Errorf("PlaceQueue(eth9) = %v, want ErrUnknownNIC", err)
	}
}
