package interrupts

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/unknown"
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
		{Row{Chip: "ITS-PCI-MSIX-0002:01:00.0", HWIRQ: "0"}, "0002:01:00.0"},
		{Row{Chip: "ITS-PCI-MSI-0002:00:00.0", HWIRQ: "0"}, "0002:00:00.0"},
		// arm64's global ITS PCI/MSI domain encodes the hwirq the same
		// way; nodeexporter-interrupts/interrupts_aarch64 (an AWS
		// Graviton): nvme0q0 65536 and nvme1q0 507904 are the EBS
		// disks at 00:04.0 and 00:1f.0, and both ena-mgmnt@pci:0000:00:05.0
		// (81920) and eth0-Tx-Rx-7 (81928) are 00:05.0.
		{Row{Chip: "ITS-MSI", HWIRQ: "65536"}, "0000:00:04.0"},
		{Row{Chip: "ITS-MSI", HWIRQ: "507904"}, "0000:00:1f.0"},
		{Row{Chip: "ITS-MSI", HWIRQ: "81920"}, "0000:00:05.0"},
		{Row{Chip: "ITS-MSI", HWIRQ: "81928"}, "0000:00:05.0"},
		{Row{Chip: "ITS-pMSI", HWIRQ: "81928"}, ""},
		{Row{Chip: "XPCI-MSIX-0000:00:03.0", HWIRQ: "1"}, ""},
		{Row{Chip: "IO-APIC", HWIRQ: "2-edge"}, ""},
		{Row{Chip: "IR-PCI-MSI", HWIRQ: "junk"}, ""},
	}
	for _, tt := range tests {
		if got := chipPCI(tt.give); got != tt.want {
			t.Errorf("chipPCI(%q %q) = %q, want %q", tt.give.Chip, tt.give.HWIRQ, got, tt.want)
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
		{"eno1-txrx-1", "eno1"},
		{"eno8303-rx-1", "eno8303"},
		{"virtio2-input.0", "virtio2"},
		{"virtio2-output.3", "virtio2"},
		{"virtio2-config", ""},
		{"virtio5-input", ""},     // virtio_console
		{"virtio0-control", ""},   // virtio_gpu (virtio_net's control queue says nothing alone)
		{"virtio3-req.0", ""},     // virtio_blk
		{"virtiofoo-input.0", ""}, // no virtio device
	}
	for _, tt := range tests {
		if got, _ := Device(Row{IRQ: unknown.Of(1), Name: tt.give}); got != tt.wantName {
			t.Errorf("Device(%q) = %q, want %q", tt.give, got, tt.wantName)
		}
	}
}

// TestDeviceENAAarch64: on the AWS Graviton capture the ENA queues
// "eth0-Tx-Rx-0".."7" (IRQs 58-65) reveal eth0 on 0000:00:05.0, the
// function their ITS-MSI hwirqs and the management vector's name
// "ena-mgmnt@pci:0000:00:05.0" (IRQ 57) both give; the management vector
// names no NIC of its own (its NIC is eth0, found by the address).
func TestDeviceENAAarch64(t *testing.T) {
	dir := realhosts.Require(t)
	b, err := os.ReadFile(filepath.Join(dir, "nodeexporter-interrupts", "interrupts_aarch64"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	type dev struct{ name, bdf, chip string }
	got := map[int]dev{}
	for _, r := range in.Rows {
		if n := r.IRQ.Or(-1); n >= 57 && n <= 65 {
			name, bdf := Device(r)
			got[r.IRQ.Or(-1)] = dev{name, bdf, chipPCI(r)}
		}
	}
	want := map[int]dev{57: {"", "", "0000:00:05.0"}}
	for n := 58; n <= 65; n++ {
		want[n] = dev{"eth0", "0000:00:05.0", "0000:00:05.0"}
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(dev{})); diff != "" {
		t.Errorf("Device and ChipPCI of IRQs 57-65 (-want +got):\n%s", diff)
	}
}

// TestParseTailFor: tg3 names its IRQs by vector; with RSS vector 0 has
// no rx ring and with TSS no tx ring, so its rings are one below the
// names' numbers, but for tx-0 (vector 0 without TSS).
func TestParseTailFor(t *testing.T) {
	tests := []struct {
		driver, give string
		want         Vector
	}{
		{"tg3", "rx-1", Vector{Queue: unknown.Of(0), Dir: DirRX}},
		{"tg3", "rx-4", Vector{Queue: unknown.Of(3), Dir: DirRX}},
		{"tg3", "tx-0", Vector{Queue: unknown.Of(0), Dir: DirTX}},
		{"tg3", "tx-2", Vector{Queue: unknown.Of(1), Dir: DirTX}},
		{"tg3", "txrx-1", Vector{Queue: unknown.Of(0)}},
		{"tg3", "txrx-3", Vector{Queue: unknown.Of(2)}},
		{"tg3", "0", notQueue}, // vector 0 with TSS: the link only
		{"tg3", "2", notQueue},
		{"tg3", "misc", notQueue},
		{"", "txrx-2", Vector{Queue: unknown.Of(2)}},
		{"", "3", Vector{Queue: unknown.Of(3)}}, // sfc's bare index is its channel
		{"ixgbe", "rx-1", Vector{Queue: unknown.Of(1), Dir: DirRX}},
	}
	for _, tt := range tests {
		if got := ParseTailFor(tt.driver, tt.give); got != tt.want {
			t.Errorf("ParseTailFor(%q, %q) = %+v, want %+v", tt.driver, tt.give, got, tt.want)
		}
	}
}
