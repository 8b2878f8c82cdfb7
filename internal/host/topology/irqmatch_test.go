package topology

import "testing"

// TestMatchIRQ holds the one rule tying an IRQ to a NIC by its name or
// chip, which irq.Classify and readIRQNodes both use.
func TestMatchIRQ(t *testing.T) {
	eth := &NIC{Name: "eth1", PCI: "0000:98:00.0"}
	virt := &NIC{Name: "virtio1", Virtio: "virtio1"}
	tests := []struct {
		nic        *NIC
		name, chip string
		want       IRQMatch
		wantTail   string
	}{
		{eth, "eth1-TxRx-3", "PCI-MSI", IRQByIfName, "TxRx-3"},
		{eth, "ice-eth1-TxRx-3", "PCI-MSI", IRQByIfName, "TxRx-3"},
		{eth, "eth10-TxRx-3", "PCI-MSI", IRQNoMatch, ""},
		{eth, "mlx5_comp3@pci:0000:98:00.0", "PCI-MSI", IRQByPCIName, ""},
		{eth, "mlx5_comp3", "IR-PCI-MSIX-0000:98:00.0", IRQByPCIChip, ""},
		{eth, "mlx5_comp3", "IR-PCI-MSIX-0000:99:00.0", IRQNoMatch, ""},
		// No action, no name: the chip alone ties it to no NIC, as the
		// IRQ table has always said (topology used to count it).
		{eth, "", "IR-PCI-MSIX-0000:98:00.0", IRQNoMatch, ""},
		{virt, "virtio1-input.0", "PCI-MSI", IRQByVirtio, "input.0"},
		{virt, "virtio10-input.0", "PCI-MSI", IRQNoMatch, ""},
	}
	for _, tt := range tests {
		got, tail := tt.nic.MatchIRQ(tt.name, tt.chip)
		if got != tt.want || tail != tt.wantTail {
			t.Errorf("%s.MatchIRQ(%q, %q) = %d, %q, want %d, %q", tt.nic.Name, tt.name, tt.chip, got, tail, tt.want, tt.wantTail)
		}
	}
}
