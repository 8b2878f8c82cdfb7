package irq

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestInferENAWithoutFunction: the arm64 tree models the AWS Graviton
// of nodeexporter-interrupts/interrupts_aarch64 (ENA at 0000:00:05.0 on
// ITS-MSI, its management vector "ena-mgmnt@pci:0000:00:05.0" IRQ 57 and
// queues "eth0-Tx-Rx-0".."7" IRQs 58-65). Captured without
// /sys/class/net and without the ENA's PCI function, eth0 is inferred
// from its queue names, its address from their ITS-MSI hwirqs, so the
// management vector is still its, and its node from the IRQs' node files.
func TestInferENAWithoutFunction(t *testing.T) {
	root := hosttest.Copy(t, "arm64")
	for _, p := range []string{"sys/class/net", "sys/bus/pci/devices/0000:00:05.0"} {
		if err := os.RemoveAll(filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	nic, ok := h.NICByName("eth0")
	if !ok {
		t.Fatalf("eth0 not inferred; NICs %+v", h.NICs)
	}
	if !nic.Inferred || nic.PCI != "0000:00:05.0" || !nic.PCIAbsent {
		t.Errorf("eth0 = inferred %v PCI %q absent %v, want inferred on absent 0000:00:05.0", nic.Inferred, nic.PCI, nic.PCIAbsent)
	}
	if loc := h.Locality(nic); loc.Node.Or(-1) != 0 || !unknown.Is(loc.Source, topology.LocalitySourceIRQNode) {
		t.Errorf("eth0 locality = node %v from %q, want node 0 from \"irq node\"", loc.Node, loc.Source)
	}
	tab, err := Load(h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var queues, other []int
	for _, q := range tab.ForNIC("eth0") {
		if q.Owner.Kind == KindQueue {
			queues = append(queues, q.Owner.Queue.Or(-1))
		} else {
			other = append(other, q.IRQ)
		}
	}
	if !slices.Equal(other, []int{57}) || !slices.Equal(queues, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("eth0: other IRQs %v and queues %v, want [57] (ena-mgmnt) and 0-7", other, queues)
	}
}

// TestInferPCILinkLoop: a PCI entry that cannot be followed (a link to
// itself) is taken as absent, with a note, not as a reason to refuse the
// whole tree.
func TestInferPCILinkLoop(t *testing.T) {
	root := hosttest.Copy(t, "arm64")
	link := filepath.Join(root, "sys/bus/pci/devices/0000:00:05.0")
	if err := os.RemoveAll(filepath.Join(root, "sys/class/net")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("0000:00:05.0", link); err != nil {
		t.Fatal(err)
	}
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	nic, ok := h.NICByName("eth0")
	if !ok || nic.PCI != "0000:00:05.0" || !nic.PCIAbsent {
		t.Fatalf("eth0 = %+v, want 0000:00:05.0 taken as absent", nic)
	}
	if !slices.ContainsFunc(h.Notes, func(s string) bool {
		return strings.HasPrefix(s, "NIC eth0: its PCI function is taken as absent: ")
	}) {
		t.Errorf("notes %q do not say why", h.Notes)
	}
}
