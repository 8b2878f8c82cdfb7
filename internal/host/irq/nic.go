package irq

import (
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/unknown"
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
	Queue unknown.Value[int] // queue index; not applicable for a non-queue vector
	Dir   interrupts.Dir     // DirRX or DirTX for a vector that serves one direction, "" otherwise
	Kind  Kind               // KindQueue or KindOther
	By    string             // how it was matched: "msi_irqs", "name", "pci"
}

// classify says whether an IRQ with the given action name(s) and chip
// belongs to nic (topology's NIC.MatchIRQ, the one rule), and as which
// vector. The words are read with the grammar of internal/interrupts,
// for the NIC's driver (tg3 numbers its names by vector).
func classify(name, chip string, nic *topology.NIC) (Owner, bool) {
	switch m, tail := nic.MatchIRQ(name, chip); m {
	case topology.IRQByVirtio:
		return owned(nic, "name", interrupts.ParseVirtioTail(tail)), true
	case topology.IRQByIfName:
		return owned(nic, "name", interrupts.ParseTailFor(nic.Driver, tail)), true
	case topology.IRQByPCIName:
		return owned(nic, "pci", interrupts.ParsePCIName(name, nic.PCI)), true
	case topology.IRQByPCIChip:
		return owned(nic, "pci", interrupts.ParseNameFor(nic.Driver, name)), true
	}
	return Owner{}, false
}

// Owners decides which NIC each IRQ of a host serves, and as what: an
// IRQ in a NIC's msi_irqs is that NIC's, else the first NIC Classify
// gives it. It is the one owner of the decision: the IRQ table and the
// sampler both ask it.
type Owners struct {
	nics []topology.NIC
	msi  map[int]*topology.NIC
}

// NewOwners returns the Owners of h's IRQs.
func NewOwners(h *topology.Host) *Owners {
	w := &Owners{nics: h.NICs, msi: map[int]*topology.NIC{}}
	for i := range h.NICs {
		for _, n := range h.NICs[i].MSIIRQs.Or(nil) {
			w.msi[n] = &h.NICs[i]
		}
	}
	return w
}

// Of returns the owner of IRQ n with the given action name(s) and chip.
func (w *Owners) Of(n int, name, chip string) (Owner, bool) {
	if nic, ok := w.msi[n]; ok {
		o := Owner{NIC: nic.Name, By: "msi_irqs"}
		classifyName(name, nic.Driver, &o)
		return o, true
	}
	for i := range w.nics {
		if o, ok := classify(name, chip, &w.nics[i]); ok {
			return o, true
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
	o.Queue, o.Dir, o.Kind = interrupts.NotQueue, "", KindOther
	if v.IsQueue() {
		o.Queue, o.Dir, o.Kind = v.Queue, v.Dir, KindQueue
	}
}

// classifyName fills in the queue of an IRQ already known to belong to a
// NIC with the given driver (from msi_irqs), from its name alone.
func classifyName(name, driver string, o *Owner) {
	setVector(o, interrupts.ParseNameFor(driver, name))
}
