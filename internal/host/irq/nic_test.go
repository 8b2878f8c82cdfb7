package irq

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func TestClassify(t *testing.T) {
	mlx := &topology.NIC{Name: "eth0", PCI: "0000:98:00.0"}
	eth1 := &topology.NIC{Name: "eth1", PCI: "0000:3b:00.1"}
	virtio := &topology.NIC{Name: "eth0", PCI: "0000:00:03.0", Virtio: "virtio2"}
	ice := &topology.NIC{Name: "ens1f0", PCI: "0000:3b:00.0"}
	mana := &topology.NIC{Name: "eth0", PCI: "7870:00:00.0"}
	tg3 := &topology.NIC{Name: "eno1", PCI: "0000:04:00.0", Driver: "tg3"}
	tests := []struct {
		name  string
		nic   *topology.NIC
		give  string
		chip  string
		want  Owner
		match bool
	}{
		{"mlx5 comp by PCI", mlx, "mlx5_comp3@pci:0000:98:00.0", "", Owner{NIC: "eth0", Queue: unknown.Of(3), Kind: KindQueue, By: "pci"}, true},
		{"mlx5 async", mlx, "mlx5_async0@pci:0000:98:00.0", "", Owner{NIC: "eth0", Queue: interrupts.NotQueue, Kind: KindOther, By: "pci"}, true},
		{"mlx5 other function", mlx, "mlx5_comp3@pci:0000:98:00.1", "", Owner{}, false},
		{"TxRx", eth1, "eth1-TxRx-7", "", Owner{NIC: "eth1", Queue: unknown.Of(7), Kind: KindQueue, By: "name"}, true},
		{"eth1 is not eth10", eth1, "eth10-TxRx-0", "", Owner{}, false},
		{"eth1 misc", eth1, "eth1", "", Owner{NIC: "eth1", Queue: interrupts.NotQueue, Kind: KindOther, By: "name"}, true},
		{"ice prefixed", ice, "ice-ens1f0-TxRx-12", "", Owner{NIC: "ens1f0", Queue: unknown.Of(12), Kind: KindQueue, By: "name"}, true},
		{"ice misc by PCI", ice, "ice-0000:3b:00.0:misc", "", Owner{NIC: "ens1f0", Queue: interrupts.NotQueue, Kind: KindOther, By: "pci"}, true},
		{"i40e prefixed", ice, "i40e-ens1f0-TxRx-1", "", Owner{NIC: "ens1f0", Queue: unknown.Of(1), Kind: KindQueue, By: "name"}, true},
		{"rx only", eth1, "eth1-rx-2", "", Owner{NIC: "eth1", Queue: unknown.Of(2), Dir: interrupts.DirRX, Kind: KindQueue, By: "name"}, true},
		{"tx only", eth1, "eth1-tx-2", "", Owner{NIC: "eth1", Queue: unknown.Of(2), Dir: interrupts.DirTX, Kind: KindQueue, By: "name"}, true},
		{"bnx2x fp", eth1, "eth1-fp-5", "", Owner{NIC: "eth1", Queue: unknown.Of(5), Kind: KindQueue, By: "name"}, true},
		{"ENA Tx-Rx", eth1, "eth1-Tx-Rx-3", "", Owner{NIC: "eth1", Queue: unknown.Of(3), Kind: KindQueue, By: "name"}, true},
		{"sfc bare index", eth1, "eth1-4", "", Owner{NIC: "eth1", Queue: unknown.Of(4), Kind: KindQueue, By: "name"}, true},
		{"fdir is not a queue", eth1, "i40e-eth1-fdir-TxRx-0", "", Owner{NIC: "eth1", Queue: interrupts.NotQueue, Kind: KindOther, By: "name"}, true},
		{"mana queue", mana, "mana_q5@pci:7870:00:00.0", "", Owner{NIC: "eth0", Queue: unknown.Of(5), Kind: KindQueue, By: "pci"}, true},
		{"mana hwc", mana, "mana_hwc@pci:7870:00:00.0", "", Owner{NIC: "eth0", Queue: interrupts.NotQueue, Kind: KindOther, By: "pci"}, true},
		{"virtio input", virtio, "virtio2-input.0", "", Owner{NIC: "eth0", Queue: unknown.Of(0), Dir: interrupts.DirRX, Kind: KindQueue, By: "name"}, true},
		{"virtio output", virtio, "virtio2-output.3", "", Owner{NIC: "eth0", Queue: unknown.Of(3), Dir: interrupts.DirTX, Kind: KindQueue, By: "name"}, true},
		{"virtio config", virtio, "virtio2-config", "", Owner{NIC: "eth0", Queue: interrupts.NotQueue, Kind: KindOther, By: "name"}, true},
		{"virtio20 is not virtio2", virtio, "virtio20-input.0", "", Owner{}, false},
		{"chip carries the PCI address", mlx, "mlx5_pages_eq", "IR-PCI-MSIX-0000:98:00.0", Owner{NIC: "eth0", Queue: interrupts.NotQueue, Kind: KindOther, By: "pci"}, true},
		{"chip of another function", mlx, "nvme0q1", "PCI-MSIX-0000:99:00.0", Owner{}, false},
		{"tg3 rx by vector", tg3, "eno1-rx-1", "", Owner{NIC: "eno1", Queue: unknown.Of(0), Dir: interrupts.DirRX, Kind: KindQueue, By: "name"}, true},
		{"tg3 vector 0 tx", tg3, "eno1-tx-0", "", Owner{NIC: "eno1", Queue: unknown.Of(0), Dir: interrupts.DirTX, Kind: KindQueue, By: "name"}, true},
		{"tg3 txrx", tg3, "eno1-txrx-2", "", Owner{NIC: "eno1", Queue: unknown.Of(1), Kind: KindQueue, By: "name"}, true},
		{"tg3 link vector", tg3, "eno1-0", "", Owner{NIC: "eno1", Queue: interrupts.NotQueue, Kind: KindOther, By: "name"}, true},
		{"unrelated", eth1, "ttyS0", "IO-APIC", Owner{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := classify(tt.give, tt.chip, tt.nic)
			if ok != tt.match {
				t.Fatalf("classify(%q, %q, %s) matched = %v, want %v", tt.give, tt.chip, tt.nic.Name, ok, tt.match)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(unknown.Value[int]{})); diff != "" {
				t.Errorf("classify(%q) mismatch (-want +got):\n%s", tt.give, diff)
			}
		})
	}
}

func TestClassifyName(t *testing.T) {
	tests := []struct {
		give      string
		wantQueue int
		wantDir   string
	}{
		{"mlx5_comp7@pci:0000:98:00.0", 7, ""},
		{"mlx5_async0@pci:0000:98:00.0", -1, ""},
		{"ens1f0-TxRx-3", 3, ""},
		{"oldname-rx-1", 1, "rx"},
		{"virtio2-input.4", 4, "rx"},
		{"virtio2-output.4", 4, "tx"},
		{"virtio2-config", -1, ""},
		{"hns3-0000:7d:00.0-TxRx-2", 2, ""},
		{"", -1, ""},
	}
	for _, tt := range tests {
		o := Owner{NIC: "x", Queue: unknown.Of(99)}
		classifyName(tt.give, "", &o)
		if o.Queue.Or(-1) != tt.wantQueue || string(o.Dir) != tt.wantDir {
			t.Errorf("ClassifyName(%q) = queue %s dir %q, want %d %q", tt.give, o.Queue, o.Dir, tt.wantQueue, tt.wantDir)
		}
	}
}
