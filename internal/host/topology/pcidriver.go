package topology

import (
	"fmt"
	"path"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/pci"
)

// PCIDriver returns the driver bound to a PCI function ("0000:98:00.0"),
// the name its driver link points at: "mlx5_core", or "virtio-pci" for a
// virtio NIC whose netdev driver is virtio_net. This is the name
// irqbalance matches --banmod against. "" when no driver is bound or the
// tree has no such link.
func (h *Host) PCIDriver(bdf string) (string, error) {
	if !pci.IsAddress(bdf) {
		return "", fmt.Errorf("PCI driver: %q is not a PCI address", bdf)
	}
	if drv, ok := h.keptDriver(bdf); ok {
		return drv, nil
	}
	dev, err := h.resolve("sys/bus/pci/devices/" + bdf)
	if err != nil {
		if kfile.IsNotExist(err) {
			return "", nil
		}
		return "", fmt.Errorf("PCI driver of %s: %w", bdf, err)
	}
	return h.pciDriverAt(bdf, dev)
}

// pciDriverAt reads the driver link of the PCI function bdf, whose
// folder (relative to the root) is dev, as PCIDriver does, and keeps
// the answer so that PCIDriver asks the tree no second time.
func (h *Host) pciDriverAt(bdf, dev string) (string, error) {
	// The link's own name is enough; its target need not be in the tree.
	target, err := h.fs.Readlink(h.Path(dev, "driver"))
	switch {
	case kfile.IsNotExist(err):
		target = ""
	case err != nil:
		return "", fmt.Errorf("PCI driver of %s: %w", bdf, err)
	default:
		target = path.Base(target)
	}
	h.keepDriver(bdf, target)
	return target, nil
}
