package topology

import (
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/internal/interrupts"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// inferNICs adds the NICs the IRQ names of /proc/interrupts reveal, for
// trees without /sys/class/net (captures such as sosreports and
// must-gathers keep /proc/interrupts but not the network class); see
// interrupts.Device for what a name gives. An inferred NIC's PCI function
// is kept only when the tree has it, and its locality is read from there.
// Without /proc/interrupts nothing is inferred.
func (h *Host) inferNICs() error {
	in, err := interrupts.Read(h.Root)
	if err != nil {
		if kfile.IsNotExist(err) {
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
			n = &NIC{Name: name, Node: -1, SpeedMbps: -1, Inferred: true}
			byName[name] = n
			order = append(order, name)
		}
		if n.PCI == "" && bdf != "" {
			n.PCI = bdf
		}
	}
	for _, name := range order {
		n := byName[name]
		if n.PCI != "" {
			dir := "sys/bus/pci/devices/" + n.PCI
			if _, err := h.fs.Stat(h.Path(dir)); err != nil {
				n.PCI = "" // not a function this tree knows: do not claim it
			} else {
				if err := h.readLocality(n, dir); err != nil {
					return err
				}
				n.VendorID, _ = h.fs.String(h.Path(dir, "vendor"))
				n.DeviceID, _ = h.fs.String(h.Path(dir, "device"))
			}
		}
		h.NICs = append(h.NICs, *n)
	}
	slices.SortFunc(h.NICs, func(a, b NIC) int { return strings.Compare(a.Name, b.Name) })
	if len(order) > 0 {
		h.note("no /sys/class/net: %d NICs inferred from IRQ names", len(order))
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
