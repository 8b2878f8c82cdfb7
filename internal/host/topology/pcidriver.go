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
	dev, err := h.resolve("sys/bus/pci/devices/" + bdf)
	if err != nil {
		if kfile.IsNotExist(err) {
			return "", nil
		}
		return "", fmt.Errorf("PCI driver of %s: %w", bdf, err)
	}
	// The link's own name is enough; its target need not be in the tree.
	target, err := h.fs.Readlink(h.Path(dev, "driver"))
	if err != nil {
		if kfile.IsNotExist(err) {
			return "", nil
		}
		return "", fmt.Errorf("PCI driver of %s: %w", bdf, err)
	}
	return path.Base(target), nil
}
