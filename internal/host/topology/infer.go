package topology

import (
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// inferNICs adds the NICs the IRQ names of /proc/interrupts reveal, for
// trees without /sys/class/net (captures such as sosreports and
// must-gathers keep /proc/interrupts but not the network class); see
// interrupts.Device for what a name gives. An inferred NIC keeps the PCI
// address its IRQs carry, as that is what matches them to it
// ("mlx5_comp3@pci:<bdf>", "i40e-<bdf>:misc", the chip
// "IR-PCI-MSIX-<bdf>"); its locality and ids are read from the PCI
// function when the tree has it, and PCIAbsent says when it does not.
// Without /proc/interrupts nothing is inferred.
func (h *Host) inferNICs() error {
	// irq.Load reads the file next: it takes this reading (TakeInterrupts).
	p := h.Path("proc/interrupts")
	b, _, err := h.readKeep(p, true)
	if err != nil {
		if kfile.IsNotExist(err) {
			h.note("no /sys/class/net and no /proc/interrupts: no NIC is known")
			return nil
		}
		return err
	}
	in, err := interrupts.Parse(b)
	if err != nil {
		return &kfile.ParseError{Op: "parse", Path: p, Err: err}
	}
	byName := map[string]*NIC{}
	var order []string
	noNet := h.absent(h.Path("sys/class/net"))
	for _, r := range in.Rows {
		name, bdf := interrupts.Device(r)
		if name == "" {
			continue
		}
		n, ok := byName[name]
		if !ok {
			n = &NIC{Name: name, Node: unknown.Not[int](noNet), LocalCPUs: unknown.Not[cpuset.Set](noNet),
				SpeedMbps: unknown.Not[int](noNet), RxQueues: unknown.Not[int](noNet), TxQueues: unknown.Not[int](noNet),
				MSIIRQs: unknown.Not[[]int](noNet), OperState: unknown.Not[OperState](noNet), Inferred: true}
			if interrupts.IsVirtioDevice(name) {
				n.Virtio = name
			}
			byName[name] = n
			order = append(order, name)
		}
		if n.PCI == "" && bdf != "" {
			n.PCI = bdf
		}
	}
	var absent []string
	nics := make([]*NIC, len(order))
	for i, name := range order {
		n := byName[name]
		if err := h.readInferredPCI(n); err != nil {
			return err
		}
		if n.PCIAbsent {
			absent = append(absent, fmt.Sprintf("%s (%s)", n.PCI, n.Name))
		}
		nics[i] = n
	}
	if err := h.readIRQNodes(in, nics); err != nil {
		return err
	}
	for _, n := range nics {
		h.NICs = append(h.NICs, *n)
	}
	slices.SortFunc(h.NICs, func(a, b NIC) int { return strings.Compare(a.Name, b.Name) })
	switch len(order) {
	case 0:
		h.note("no /sys/class/net, and no IRQ name names a NIC: no NIC is known")
	default:
		h.note("no /sys/class/net: %d %s inferred from IRQ names", len(order), units.Choose(len(order), "NIC", "NICs"))
	}
	if len(absent) > 0 {
		slices.Sort(absent)
		h.note("IRQ names give PCI functions this tree lacks (no sys/bus/pci/devices entry): %s; their IRQs are matched by address, their numa_node and ids are unknown",
			strings.Join(absent, ", "))
	}
	return nil
}

// readInferredPCI reads what the PCI function of an inferred NIC says of
// it: its locality, vendor and device ids, and its driver. A function the
// tree lacks makes the NIC PCIAbsent; it keeps the address. So does an
// entry that cannot be followed (a link loop, a link out of the root),
// and a note says why.
func (h *Host) readInferredPCI(n *NIC) error {
	if n.PCI == "" {
		return nil
	}
	dir := "sys/bus/pci/devices/" + n.PCI
	dev, err := h.resolve(dir)
	if err != nil {
		n.PCIAbsent = true
		why := h.absent(h.Path(dir))
		if !kfile.IsNotExist(err) {
			why = unknown.Because(unknown.KindFailed, err.Error())
		}
		n.Node, n.LocalCPUs = unknown.Not[int](why), unknown.Not[cpuset.Set](why)
		if !kfile.IsNotExist(err) {
			h.note("NIC %s: its PCI function is taken as absent: %v", n.Name, err)
		}
		return nil
	}
	if err := h.readLocality(n, dir); err != nil {
		return err
	}
	n.VendorID, _ = h.fs.String(h.Path(dir, "vendor"))
	n.DeviceID, _ = h.fs.String(h.Path(dir, "device"))
	// The function's driver is the NIC's, except for a virtio NIC, whose
	// function is bound to the transport (virtio-pci), not to virtio_net.
	if n.Virtio == "" {
		if n.Driver, err = h.pciDriverAt(n.PCI, dev); err != nil {
			return fmt.Errorf("NIC %s: %w", n.Name, err)
		}
	}
	return nil
}

// readLocality reads what the kernel says of a NIC's place from its
// device folder dir (relative to the root; the PCI function's for a PCI
// NIC): numa_node (-1 or absent: unknown) and local_cpulist.
func (h *Host) readLocality(n *NIC, dir string) error {
	var err error
	if n.Node, err = h.readNumaNode(h.Path(dir, "numa_node")); err != nil {
		return fmt.Errorf("NIC %s: %w", n.Name, err)
	}
	p := h.Path(dir, "local_cpulist")
	if set, err := h.fs.List(p); err == nil {
		n.LocalCPUs = unknown.Of(set)
	} else if kfile.IsNotExist(err) {
		n.LocalCPUs = unknown.Not[cpuset.Set](h.absent(p))
	} else {
		return fmt.Errorf("NIC %s: %w", n.Name, err)
	}
	return nil
}

// readNumaNode reads a device's numa_node file, path: unknown when the
// file is absent or says -1 (the kernel does not know); an error when it
// cannot be read or names no node.
func (h *Host) readNumaNode(path string) (unknown.Value[int], error) {
	v, err := h.fs.Int(path)
	switch {
	case kfile.IsNotExist(err):
		return unknown.Not[int](h.absent(path)), nil
	case err != nil:
		return unknown.Value[int]{}, err
	case v == -1:
		return unknown.NotAs[int](unknown.KindNotReported, h.rel(path)+" is -1"), nil
	case v < -1:
		return unknown.Value[int]{}, fmt.Errorf("%s %d is not a node", path, v)
	}
	return unknown.Of(v), nil
}
