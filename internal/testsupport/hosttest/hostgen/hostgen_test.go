package hostgen

import (
	"strings"
	"testing"
)

func TestLegacyMSIHWIRQ(t *testing.T) {
	// Values from the dell-2numa capture (nvme0q0, nvme0q1 at 0000:89:00.0)
	// and the nodeexporter aarch64 capture (ENA at 0000:00:05.0).
	tests := []struct {
		bus, dev, fn, idx int
		want              int
	}{
		{0x89, 0, 0, 0, 71827456},
		{0x89, 0, 0, 1, 71827457},
		{0x00, 5, 0, 1, 81921},
	}
	for _, tt := range tests {
		if got := legacyMSIHWIRQ(tt.bus, tt.dev, tt.fn, tt.idx); got != tt.want {
			t.Errorf("legacyMSIHWIRQ(%#x, %d, %d, %d) = %d, want %d", tt.bus, tt.dev, tt.fn, tt.idx, got, tt.want)
		}
	}
}

func TestRelTo(t *testing.T) {
	tests := []struct{ from, target, want string }{
		{"sys/class/net", "sys/devices/virtual/net/lo", "../../devices/virtual/net/lo"},
		{"sys/devices/pci0000:00/0000:00:03.0", "sys/bus/pci/drivers/virtio-pci", "../../../bus/pci/drivers/virtio-pci"},
		{"sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0", "sys/bus/pci/drivers/mlx5_core", "../../../../bus/pci/drivers/mlx5_core"},
	}
	for _, tt := range tests {
		if got := relTo(tt.from, tt.target); got != tt.want {
			t.Errorf("relTo(%q, %q) = %q, want %q", tt.from, tt.target, got, tt.want)
		}
	}
}

// TestInterruptsRows checks rows against lines of real captures, counts
// included where the model copies them.
func TestInterruptsRows(t *testing.T) {
	tests := []struct {
		host *Host
		want []string
	}{
		{VMVirtio(), []string{ // live 6.18 VM
			"           CPU0       CPU1       \n",
			"\n 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n",
			"\n 38:          0        814 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n",
			"\nERR:          0\n",
		}},
		{ARM64Host(), []string{ // nodeexporter interrupts_aarch64
			"\n 14:       7815          0          0          0          0          0          0          0     GICv3  37 Level     ttyS0\n",
			"\n 53:  129969327          0          0          0          0          0          0          0   ITS-MSI 65537 Edge      nvme0q1\n",
			"\n 50:          0          0          0          0          0          0          0          0  ARMH0061:00   3 Edge      ACPI:Event\n",
		}},
	}
	for _, tt := range tests {
		got := string(tt.host.Interrupts())
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s /proc/interrupts lacks %q", tt.host.Name, w)
			}
		}
	}
}
