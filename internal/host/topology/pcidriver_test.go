package topology

import (
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

func TestPCIDriver(t *testing.T) {
	tests := []struct {
		host, give, want string
	}{
		{host: "seed", give: "0000:98:00.0", want: "mlx5_core"},
		{host: "seed", give: "0000:17:00.0", want: "nvme"},
		{host: "seed", give: "0000:99:00.0", want: ""},
		{host: "vm-virtio", give: "0000:00:03.0", want: "virtio-pci"},
	}
	for _, tt := range tests {
		h, err := Read(hosttest.Open(t, hosttest.Root(tt.host)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := h.PCIDriver(tt.give)
		if err != nil || got != tt.want {
			t.Errorf("%s: PCIDriver(%q) = %q, %v, want %q", tt.host, tt.give, got, err, tt.want)
		}
	}
	h, err := Read(hosttest.Open(t, hosttest.Root("seed")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.PCIDriver("eth0"); err == nil {
		t.Error("PCIDriver(eth0): no error")
	}
}
