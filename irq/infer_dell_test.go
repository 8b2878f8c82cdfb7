package irq

import (
	"fmt"
	"testing"

	"github.com/irqnuma/irqnuma/internal/realhosts"
	"github.com/irqnuma/irqnuma/topology"
)

// TestInferDell: dell-2numa has no /sys/class/net; topology.Read finds
// its i40e ports from IRQ names, placed by their PCI function's
// numa_node, and Load gives each its queues, leaving the host as read.
func TestInferDell(t *testing.T) {
	realhosts.Require(t)
	c, ok := realhosts.Lookup("dell-2numa")
	if !ok {
		t.Skip("dell-2numa capture absent")
	}
	root := realhosts.Root(t, c)
	h, err := topology.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	nics, notes := len(h.NICs), len(h.Notes)
	tab, err := Load(h, Options{NICs: []string{"ens3f0"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.NICs) != nics || len(h.Notes) != notes {
		t.Errorf("Load changed the host: %d NICs and %d notes, were %d and %d", len(h.NICs), len(h.Notes), nics, notes)
	}
	nic, _ := h.NICByName("ens3f0")
	if !nic.Inferred || nic.PCI != "0000:d8:00.0" || nic.Node != 1 {
		t.Errorf("ens3f0 = inferred %v PCI %q node %d, want inferred 0000:d8:00.0 node 1", nic.Inferred, nic.PCI, nic.Node)
	}
	irqs := tab.ForNIC("ens3f0")
	queues := 0
	for _, q := range irqs {
		if q.Owner.Kind == KindQueue {
			queues++
		}
	}
	// i40e has a misc vector and a flow-director vector besides its queues,
	// both named by PCI address: "i40e-0000:d8:00.0:misc",
	// "i40e-0000:d8:00.0:fdir-TxRx-0".
	if queues == 0 || len(irqs) != queues+2 {
		t.Errorf("ens3f0: %d IRQs with %d queues, want the queues plus misc and fdir", len(irqs), queues)
	}
	for _, q := range irqs {
		if q.Owner.Kind == KindQueue && q.Name != fmt.Sprintf("i40e-ens3f0-TxRx-%d", q.Owner.Queue) {
			t.Errorf("IRQ %d %q classified as queue %d", q.IRQ, q.Name, q.Owner.Queue)
		}
	}
}
