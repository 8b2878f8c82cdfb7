package interrupts

import "testing"

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
		if got := ChipPCI(tt.give); got != tt.want {
			t.Errorf("ChipPCI(%q %q) = %q, want %q", tt.give.Chip, tt.give.HWIRQ, got, tt.want)
		}
	}
}

func TestDevice(t *testing.T) {
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
		{"virtio2-input.0", "virtio2"},
		{"virtio2-output.3", "virtio2"},
		{"virtio2-config", ""},
		{"virtio5-input", ""},     // virtio_console
		{"virtio0-control", ""},   // virtio_gpu (virtio_net's control queue says nothing alone)
		{"virtio3-req.0", ""},     // virtio_blk
		{"virtiofoo-input.0", ""}, // no virtio device
	}
	for _, tt := range tests {
		if got, _ := Device(Row{IRQ: 1, Name: tt.give}); got != tt.wantName {
			t.Errorf("Device(%q) = %q, want %q", tt.give, got, tt.wantName)
		}
	}
}
