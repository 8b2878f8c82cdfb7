package irq

import (
	"strings"

	"github.com/irqnuma/irqnuma/internal/interrupts"
	"github.com/irqnuma/irqnuma/topology"
)

// Kind is the kind of a NIC's IRQ vector.
type Kind string

// Vector kinds.
const (
	KindQueue Kind = "queue" // a queue vector: Queue holds its index
	KindOther Kind = "other" // async, misc, ctrl, config, mailbox...
)

// Owner says which NIC an IRQ serves and as what.
type Owner struct {
	NIC   string
	Queue int    // queue index; -1 for a non-queue vector
	Dir   string // "rx" or "tx" for a vector that serves one direction, "" otherwise
	Kind  Kind   // KindQueue or KindOther
	By    string // how it was matched: "msi_irqs", "name", "pci"
}

// Classify says whether an IRQ with the given action name(s) and chip
// belongs to nic, and as which vector. It matches, in order: the virtio
// device name ("virtio2-input.0"), the interface name at the head of the
// IRQ name ("eth0-TxRx-3", "ice-eth0-TxRx-3", "eth0-rx-1"; "eth1" never
// matches "eth10-..."), the PCI address inside the
// name ("mlx5_comp3@pci:0000:98:00.0", "ice-0000:3b:00.0:misc") and the
// PCI address in the chip name ("IR-PCI-MSIX-0000:98:00.0"). The words
// are read with the grammar of internal/interrupts, for the NIC's driver
// (tg3 numbers its names by vector).
func Classify(name, chip string, nic *topology.NIC) (Owner, bool) {
	// The virtio device first: a NIC inferred from virtio_net's IRQ names
	// is named by it ("virtio1").
	if nic.Virtio != "" {
		if tail, ok := strings.CutPrefix(name, nic.Virtio+"-"); ok {
			return owned(nic, "name", interrupts.ParseVirtioTail(tail)), true
		}
	}
	if tail, ok := interrupts.CutIfName(name, nic.Name); ok {
		return owned(nic, "name", interrupts.ParseTailFor(nic.Driver, tail)), true
	}
	if nic.PCI != "" {
		if strings.Contains(name, nic.PCI) {
			return owned(nic, "pci", interrupts.ParsePCIName(name, nic.PCI)), true
		}
		if strings.HasSuffix(chip, "-"+nic.PCI) {
			return owned(nic, "pci", interrupts.ParseNameFor(nic.Driver, name)), true
		}
	}
	return Owner{}, false
}

// owned is the Owner of an IRQ of nic whose name reads as v.
func owned(nic *topology.NIC, by string, v interrupts.Vector) Owner {
	o := Owner{NIC: nic.Name, By: by}
	setVector(&o, v)
	return o
}

// setVector fills in the queue, direction and kind o's name says.
func setVector(o *Owner, v interrupts.Vector) {
	o.Queue, o.Dir, o.Kind = -1, "", KindOther
	if v.IsQueue() {
		o.Queue, o.Dir, o.Kind = v.Queue, v.Dir, KindQueue
	}
}

// classifyName fills in the queue of an IRQ already known to belong to a
// NIC with the given driver (from msi_irqs), from its name alone.
func classifyName(name, driver string, o *Owner) {
	setVector(o, interrupts.ParseNameFor(driver, name))
}
