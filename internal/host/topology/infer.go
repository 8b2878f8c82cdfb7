package topology

import (
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/units"
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
	in, err := interrupts.Read(h.fs)
	if err != nil {
		if kfile.IsNotExist(err) {
			h.note("no /sys/class/net and no /proc/interrupts: no NIC is known")
			return nil
		}
		return err
	}
	byName := map[string]*NIC{}
	var order []string
	for _, r := range in.Rows {
		name, bdf := interrupts.Device(r)
		if name == "" {
			continue
		}
		n, ok := byName[name]
		if !ok {
			n = &NIC{Name: name, Node: -1, SpeedMbps: -1, RxQueues: -1, TxQueues: -1, Inferred: true}
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
	if _, err := h.fs.Stat(h.Path(dir)); err != nil {
		n.PCIAbsent = true
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
		var err error
		if n.Driver, err = h.PCIDriver(n.PCI); err != nil {
			return fmt.Errorf("NIC %s: %w", n.Name, err)
		}
	}
	return nil
}

// readLocality reads what the kernel says of a NIC's place from its
// device folder dir (relative to the root; the PCI function's for a PCI
// NIC): numa_node (-1 or absent: unknown) and local_cpulist.
func (h *Host) readLocality(n *NIC, dir string) error {
	if v, err := h.fs.Int(h.Path(dir, "numa_node")); err == nil {
		if v < -1 {
			return fmt.Errorf("NIC %s: %s %d is not a node", n.Name, h.Path(dir, "numa_node"), v)
		}
		n.Node = v
	} else if !kfile.IsNotExist(err) {
		return fmt.Errorf("NIC %s: %w", n.Name, err)
	}
	if set, err := h.fs.List(h.Path(dir, "local_cpulist")); err == nil {
		n.LocalCPUs, n.HasLocal = set, true
	} else if !kfile.IsNotExist(err) {
		return fmt.Errorf("NIC %s: %w", n.Name, err)
	}
	return nil
}
