package topology

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// An IRQ's /proc/irq/N/node is the node its descriptor was allocated on.
// For an MSI vector allocated without an affinity that is the device's
// node (dev_to_node); for one allocated with an affinity descriptor it is
// the node of the first CPU of that affinity (kernel/irq/irqdesc.c,
// alloc_descs: "node = cpu_to_node(cpumask_first(mask))"). Drivers that
// ask the kernel to spread their vectors (PCI_IRQ_AFFINITY) get such
// descriptors for every vector, the managed queue vectors and the
// unmanaged pre/post vectors (irq_default_affinity) alike, so one managed
// vector makes all of a device's nodes say nothing of the device. The NIC
// drivers whose names irqnuma infers NICs from request no such spreading;
// where they set affinity hints at allocation (newer mlx5), the vectors
// spread over several nodes disagree and so say nothing either.

// readIRQNodes sets IRQNode of every inferred NIC: the node the node files
// of all its IRQs agree on (see irqNode). The IRQs of a NIC are those
// NIC.MatchIRQ gives it, as irq.Classify does.
func (h *Host) readIRQNodes(in *interrupts.Interrupts, nics []*NIC) error {
	irqs := make([][]int, len(nics))
	for _, r := range in.Rows {
		irq, ok := r.IRQ.Get()
		if !ok {
			continue
		}
		for i, n := range nics {
			if m, _ := n.MatchIRQ(r.Name, r.Chip); m != IRQNoMatch {
				irqs[i] = append(irqs[i], irq)
			}
		}
	}
	for i, n := range nics {
		node, ok, why, err := h.irqNode(irqs[i])
		if err != nil {
			return fmt.Errorf("NIC %s: %w", n.Name, err)
		}
		if ok {
			n.IRQNode = unknown.Of(node)
		} else {
			n.IRQNode = unknown.NotAs[int](unknown.KindNotReported, why)
		}
		// Where nothing better is known, say where the answer came from.
		switch loc := h.Locality(n); {
		case unknown.Is(loc.Source, LocalitySourceIRQNode):
			h.note("NIC %s: node %d from /proc/irq/N/node of its %d IRQs (the tree gives no numa_node)", n.Name, node, len(irqs[i]))
		case !loc.Known() && len(h.Nodes) > 1:
			h.note("NIC %s: locality unknown: the tree gives no numa_node, and %s", n.Name, why)
		}
	}
	return nil
}

// IRQMatch is how an IRQ's name or chip ties it to a NIC (NIC.MatchIRQ).
type IRQMatch int

// How an IRQ is tied to a NIC.
const (
	IRQNoMatch   IRQMatch = iota
	IRQByVirtio           // the name begins with the virtio device: "virtio2-input.0"
	IRQByIfName           // the name carries the interface: "eth0-TxRx-3", "ice-eth0-TxRx-3"
	IRQByPCIName          // the name holds the PCI address: "mlx5_comp3@pci:0000:98:00.0"
	IRQByPCIChip          // the chip is named by the PCI address: "IR-PCI-MSIX-0000:98:00.0"
)

// MatchIRQ says whether an IRQ with the given action name(s) and chip
// belongs to n by its name or chip, and how; tail is what follows the
// virtio device or the interface name (IRQByVirtio, IRQByIfName). It
// tries, in order: the virtio device (a NIC inferred from virtio_net's
// IRQ names is named by it), the interface name at the head of the name
// ("eth1" never matches "eth10-..."), the PCI address inside the name,
// the PCI address at the end of the chip name. An IRQ without a name
// (no action) is no NIC's by its chip alone. This is the one rule tying
// an IRQ to a NIC by name: irq.Classify reads the vector from what it
// returns, and readIRQNodes counts the IRQs it gives each NIC.
func (n *NIC) MatchIRQ(name, chip string) (m IRQMatch, tail string) {
	if name == "" {
		return IRQNoMatch, ""
	}
	if n.Virtio != "" {
		if tail, ok := interrupts.CutDashed(name, n.Virtio); ok {
			return IRQByVirtio, tail
		}
	}
	if tail, ok := interrupts.CutIfName(name, n.Name); ok {
		return IRQByIfName, tail
	}
	if n.PCI != "" {
		if strings.Contains(name, n.PCI) {
			return IRQByPCIName, ""
		}
		if c, ok := strings.CutSuffix(chip, n.PCI); ok && strings.HasSuffix(c, "-") {
			return IRQByPCIChip, ""
		}
	}
	return IRQNoMatch, ""
}

// irqNode returns the node every IRQ of irqs was allocated on, and
// whether there is one: not when their node files disagree or say -1,
// when none has a node file, or when some are kernel-managed (IRQModes,
// over these IRQs: a read-only smp_affinity_list beside a writable one,
// as kernels since 6.12 make them); in a tree where all are read-only
// (captures that lost the kernel's modes) or all writable (kernels before
// 6.12), that cannot be told, and the agreement of the nodes is what is
// relied on. why says, when there
// is no node, why not.
func (h *Host) irqNode(irqs []int) (node int, ok bool, why string, err error) {
	var nodes []int
	var modes IRQModes // of these IRQs alone, lost modes not looked for
	for _, n := range irqs {
		dir := h.Path("proc/irq", strconv.Itoa(n))
		v, err := h.readIRQNode(dir + "/node")
		if err != nil {
			if kfile.IsNotExist(err) {
				continue
			}
			return -1, false, "", err
		}
		nodes = append(nodes, v)
		if mode, err := h.readAffinityMode(dir); err == nil {
			modes.Add(mode)
		}
	}
	seen := map[int]bool{}
	var known []int
	for _, v := range nodes {
		if !seen[v] && v >= 0 {
			known = append(known, v)
		}
		seen[v] = true
	}
	switch {
	case len(nodes) == 0:
		return -1, false, "none of its IRQs has /proc/irq/N/node", nil
	case modes.SomeManaged():
		return -1, false, "some of its IRQs are kernel-managed, so their /proc/irq/N/node follows their CPUs", nil
	case seen[-1]:
		return -1, false, "its IRQs' /proc/irq/N/node say -1", nil
	case len(known) > 1:
		return -1, false, fmt.Sprintf("its IRQs' /proc/irq/N/node disagree (nodes %s)", cpuset.New(known...)), nil
	}
	return known[0], true, "", nil
}

// readIRQNode reads an IRQ's node file at p: a node, or -1. The reading
// is kept for irq.Load (TakeRead), which reads the same file.
func (h *Host) readIRQNode(p string) (int, error) {
	b, _, err := h.readKeep(p, false)
	if err != nil {
		return 0, err
	}
	s := strings.TrimSpace(string(kfile.TrimAttr(b)))
	v, err := strconv.Atoi(s)
	if err != nil {
		if len(s) > 60 {
			s = s[:60] + "..."
		}
		return 0, kfile.Malformedf(p, "not an integer: %q", s)
	}
	if v < -1 {
		return 0, fmt.Errorf("%s: %d is not a node", p, v)
	}
	return v, nil
}

// readAffinityMode returns the mode of the affinity file of the
// /proc/irq/N folder dir, as StatAffinity does, by reading it: irq.Load
// reads the file next and takes this reading (TakeRead), so the file is
// opened once.
func (h *Host) readAffinityMode(dir string) (fs.FileMode, error) {
	_, mode, err := h.readKeep(dir+"/smp_affinity_list", false)
	if kfile.IsNotExist(err) {
		_, mode, err = h.readKeep(dir+"/smp_affinity", false)
	}
	return mode, err
}
