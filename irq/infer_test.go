package irq

import (
	"fmt"
	"testing"

	"github.com/irqnuma/irqnuma/internal/realhosts"
	"github.com/irqnuma/irqnuma/topology"
)

func TestChipPCI(t *testing.T) {
	tests := []struct {
		give Row
		want string
	}{
		{Row{Chip: "IR-PCI-MSIX-0000:98:00.0", HWIRQ: "1-edge"}, "0000:98:00.0"},
		{Row{Chip: "PCI-MSIX-0000:00:03.0", HWIRQ: "1-edge"}, "0000:00:03.0"},
		// Before Linux 6.2 the hwirq carries domain, bus and devfn:
		// 113246209 = 0xd8 << 19 | 1 (dell-2numa's i40e-ens3f0-TxRx-0).
		{Row{Chip: "IR-PCI-MSI", HWIRQ: "113246209-edge"}, "0000:d8:00.0"},
		{Row{Chip: "PCI-MSI", HWIRQ: "524288-edge"}, "0000:01:00.0"},
		{Row{Chip: "PCI-MSI", HWIRQ: "" + "134742016-edge"}, "0001:01:00.0"},
		{Row{Chip: "IO-APIC", HWIRQ: "2-edge"}, ""},
		{Row{Chip: "IR-PCI-MSI", HWIRQ: "junk"}, ""},
	}
	for _, tt := range tests {
		if got := chipPCI(tt.give); got != tt.want {
			t.Errorf("chipPCI(%q %q) = %q, want %q", tt.give.Chip, tt.give.HWIRQ, got, tt.want)
		}
	}
}

func TestInferIdentity(t *testing.T) {
	tests := []struct {
		give     string
		wantName string
	}{
		{"i40e-ens3f0-TxRx-7", "ens3f0"},
		{"iavf-ens3f0v13-TxRx-0", "ens3f0v13"},
		{"ice-ens1f0-TxRx-0", "ens1f0"},
		{"eth0-TxRx-3", "eth0"},
		{"eth0-Tx-Rx-3", "eth0"},
		{"mlx5_comp2@pci:0000:98:00.0", "0000:98:00.0"},
		{"mlx5_async0@pci:0000:98:00.0", "0000:98:00.0"},
		{"i40e-0000:d8:00.0:misc", ""},
		{"i40e-0000:d8:00.0:fdir-TxRx-0", ""},
		{"nvme0q3", ""},
		{"virtio2-input.0", ""},
	}
	for _, tt := range tests {
		if got, _ := inferIdentity(Row{IRQ: 1, Name: tt.give}); got != tt.wantName {
			t.Errorf("inferIdentity(%q) = %q, want %q", tt.give, got, tt.wantName)
		}
	}
}

// TestInferDell: dell-2numa has no /sys/class/net; its i40e ports are
// found from IRQ names, placed by their PCI function's numa_node.
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
	tab, err := Load(h, Options{NICs: []string{"ens3f0"}})
	if err != nil {
		t.Fatal(err)
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
