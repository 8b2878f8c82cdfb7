package watch

import (
	"bytes"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestReRegisteredIRQOwnedAsTheTableSays: an IRQ re-registered under a
// name that carries neither the interface nor the PCI address (on a chip
// that does not name it either) still serves the NIC whose msi_irqs hold
// it. The sampler asks irq.Owners, as irq.Load does, so both give it to
// eth0 as the same vector; before, the sampler matched names only and
// lost the IRQ.
func TestReRegisteredIRQOwnedAsTheTableSays(t *testing.T) {
	tr, s, clk := setup(t, "seed")
	prev := sample(t, s)
	b := tr.Read("proc/interrupts")
	old := []byte("IR-PCI-MSIX-0000:98:00.0    4-edge      mlx5_comp3@pci:0000:98:00.0")
	if !bytes.Contains(b, old) {
		t.Fatal("seed's IRQ 287 row is not as this test expects")
	}
	tr.Write("proc/interrupts", bytes.Replace(b, old, []byte("PCI-MSIX    4-edge      mlx5_comp9"), 1))
	clk.Advance(time.Second)
	cur := sample(t, s)
	iv := diff(t, s, prev, cur)
	got := irqStats(t, iv, 287)

	h, err := topology.Read(hosttest.Open(t, tr.Root))
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := irq.Load(h, irq.Options{NICs: []string{"eth0"}})
	if err != nil {
		t.Fatal(err)
	}
	q, ok := tbl.Get(287)
	if !ok || q.Owner == nil {
		t.Fatal("irq.Load: IRQ 287 has no owner")
	}
	if q.Owner.NIC != "eth0" || q.Owner.By != "msi_irqs" {
		t.Errorf("irq.Load: IRQ 287 owner = %+v, want eth0 by msi_irqs", *q.Owner)
	}
	if got.Queue != q.Owner.Queue || got.Kind != q.Owner.Kind {
		t.Errorf("sampler: IRQ 287 queue %s kind %s, irq.Load: queue %s kind %s", got.Queue, got.Kind, q.Owner.Queue, q.Owner.Kind)
	}
}
