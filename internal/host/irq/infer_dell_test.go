package irq

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestInferDell: dell-2numa has no /sys/class/net; topology.Read finds
// its i40e ports from IRQ names, placed by their PCI function's
// numa_node, and Load gives each its queues, leaving the host as read.
func TestInferDell(t *testing.T) {
	realhosts.Require(t)
	c := realhosts.MustLookup(t, "dell-2numa")
	root := realhosts.Root(t, c)
	h, err := topology.Read(hosttest.Open(t, root))
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
	if !nic.Inferred || nic.PCI != "0000:d8:00.0" || nic.Node.Or(-1) != 1 {
		t.Errorf("ens3f0 = inferred %v PCI %q node %v, want inferred 0000:d8:00.0 node 1", nic.Inferred, nic.PCI, nic.Node)
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
		if q.Owner.Kind == KindQueue && q.Name != fmt.Sprintf("i40e-ens3f0-TxRx-%s", q.Owner.Queue) {
			t.Errorf("IRQ %d %q classified as queue %s", q.IRQ, q.Name, q.Owner.Queue)
		}
	}
}

// TestInferAbsentPCIFunction: no capture in testdata/realhosts names a
// PCI function in its IRQs that its tree lacks (every address in the
// cnto-* and dell-2numa IRQ names and chips has its sys/bus/pci/devices
// entry), so this takes dell-2numa and removes two, the way a capture
// that kept /proc but cut /sys short would lack them: the link of the
// ConnectX-4 port 0000:19:00.0 (a NIC known only by that address), and
// the folder behind the link of ens3f0's 0000:d8:00.0 (a link to
// nothing). Both keep the address their IRQ names carry, say the function
// is absent, and keep every IRQ.
func TestInferAbsentPCIFunction(t *testing.T) {
	realhosts.Require(t)
	c := realhosts.MustLookup(t, "dell-2numa")
	root := realhosts.Unpack(t, c)
	if err := os.Remove(filepath.Join(root, "sys/bus/pci/devices/0000:19:00.0")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "sys/devices/pci0000:d7/0000:d7:00.0/0000:d8:00.0")); err != nil {
		t.Fatal(err)
	}
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Load(h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		nic, pci    string
		first, last int // its IRQs are first-last
		queues      int
		otherIRQs   []int
		node        int // what /proc/irq/N/node of all its IRQs says
	}{
		// mlx5_async@pci:0000:19:00.0 (267), mlx5_comp0-62@pci (268-330).
		{"0000:19:00.0", "0000:19:00.0", 267, 330, 63, []int{267}, 0},
		// i40e-0000:d8:00.0:misc (626), i40e-ens3f0-TxRx-0-103 (627-730),
		// i40e-0000:d8:00.0:fdir-TxRx-0 (731).
		{"ens3f0", "0000:d8:00.0", 626, 731, 104, []int{626, 731}, 1},
	}
	for _, tt := range tests {
		nic, ok := h.NICByName(tt.nic)
		if !ok {
			t.Errorf("%s not inferred", tt.nic)
			continue
		}
		if !nic.Inferred || nic.PCI != tt.pci || !nic.PCIAbsent || nic.Node.Or(-1) != -1 || nic.VendorID != "" {
			t.Errorf("%s = inferred %v PCI %q absent %v node %v vendor %q, want inferred, %s absent, node -1, no vendor",
				tt.nic, nic.Inferred, nic.PCI, nic.PCIAbsent, nic.Node, nic.VendorID, tt.pci)
		}
		irqs := tab.ForNIC(tt.nic)
		var other []int
		queues := 0
		for _, q := range irqs {
			if q.Owner.Kind == KindQueue {
				queues++
			} else {
				other = append(other, q.IRQ)
			}
		}
		if n := tt.last - tt.first + 1; len(irqs) != n || irqs[0].IRQ != tt.first || irqs[len(irqs)-1].IRQ != tt.last {
			t.Errorf("%s: %d IRQs, want %d (%d-%d)", tt.nic, len(irqs), n, tt.first, tt.last)
		}
		if queues != tt.queues || !slices.Equal(other, tt.otherIRQs) {
			t.Errorf("%s: %d queue IRQs and others %v, want %d and %v", tt.nic, queues, other, tt.queues, tt.otherIRQs)
		}
		// Without numa_node, its locality is the node its IRQs were
		// allocated on, and a note says so.
		if loc := h.Locality(nic); loc.Node.Or(-1) != tt.node || !unknown.Is(loc.Source, topology.LocalitySourceIRQNode) {
			t.Errorf("%s locality = node %v from %q, want node %v from \"irq node\"", tt.nic, loc.Node, loc.Source, tt.node)
		}
		note := fmt.Sprintf("NIC %s: node %d from /proc/irq/N/node of its %d IRQs (the tree gives no numa_node)", tt.nic, tt.node, tt.last-tt.first+1)
		if !slices.Contains(h.Notes, note) {
			t.Errorf("notes %q lack %q", h.Notes, note)
		}
	}
	// The other port of each card keeps its function and its node.
	for name, node := range map[string]int{"0000:19:00.1": 0, "ens3f1": 1} {
		if nic, ok := h.NICByName(name); !ok || nic.PCIAbsent || nic.Node.Or(-1) != node {
			t.Errorf("%s = %+v, want its PCI function read, node %d", name, nic, node)
		}
	}
	if !slices.ContainsFunc(h.Notes, func(s string) bool {
		return strings.Contains(s, "0000:19:00.0 (0000:19:00.0), 0000:d8:00.0 (ens3f0)")
	}) {
		t.Errorf("notes %q do not name the absent functions", h.Notes)
	}
}
