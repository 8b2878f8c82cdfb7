package irq

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/topology"
)

// driverPrefixes are the drivers that put their own name before the
// interface name in IRQ names ("i40e-ens3f0-TxRx-0").
var driverPrefixes = []string{"i40e", "ice", "iavf", "idpf", "igc", "ixgbevf"}

// InferNICs adds to h the NICs its IRQ names reveal, for trees without
// /sys/class/net (captures such as sosreports and must-gathers keep
// /proc/interrupts but not the network class). An inferred NIC is named
// after the interface in its queue IRQ names ("ens3f0" from
// "i40e-ens3f0-TxRx-0"), or after its PCI address when the names carry
// none ("0000:98:00.0" from "mlx5_comp0@pci:0000:98:00.0"). Its PCI
// function comes from the MSI chip name ("IR-PCI-MSIX-0000:98:00.0"), the
// IRQ name, or the PCI requester id older kernels encode in the hwirq of
// "IR-PCI-MSI", and is kept only when the tree has that function; its
// numa_node and local_cpulist are read from there. Nothing is added when
// the tree has /sys/class/net.
func InferNICs(h *topology.Host, in *Interrupts) error {
	if len(h.NICs) > 0 {
		return nil
	}
	fsys := h.FS()
	if _, err := fsys.Stat(h.Path("sys/class/net")); err == nil {
		return nil
	}
	byName := map[string]*topology.NIC{}
	var order []string
	for _, r := range in.Rows {
		if r.IRQ < 0 || r.Name == "" {
			continue
		}
		name, pci := inferIdentity(r)
		if name == "" {
			continue
		}
		n, ok := byName[name]
		if !ok {
			n = &topology.NIC{Name: name, Node: -1, SpeedMbps: -1, Inferred: true}
			byName[name] = n
			order = append(order, name)
		}
		if n.PCI == "" && pci != "" {
			n.PCI = pci
		}
	}
	for _, name := range order {
		n := byName[name]
		if n.PCI != "" {
			dir := h.Path("sys/bus/pci/devices", n.PCI)
			if _, err := fsys.Stat(dir); err != nil {
				n.PCI = "" // not a function this tree knows: do not claim it
			} else if err := readInferredLocality(fsys, n, dir); err != nil {
				return err
			}
		}
		h.NICs = append(h.NICs, *n)
	}
	slices.SortFunc(h.NICs, func(a, b topology.NIC) int { return strings.Compare(a.Name, b.Name) })
	if len(order) > 0 {
		h.Notes = append(h.Notes, fmt.Sprintf("no /sys/class/net: %d NICs inferred from IRQ names", len(order)))
	}
	return nil
}

// inferIdentity returns the NIC an IRQ row names and its PCI function, or
// "" when the row is no NIC's queue or control vector.
func inferIdentity(r Row) (name, pci string) {
	pci = chipPCI(r)
	if head, bdf, ok := strings.Cut(r.Name, "@pci:"); ok && topology.IsPCIAddress(bdf) {
		if strings.HasPrefix(head, "mlx5_") || strings.HasPrefix(head, "mana_") {
			return bdf, bdf
		}
		return "", ""
	}
	var o Owner
	ClassifyName(r.Name, &o)
	if o.Kind != KindQueue {
		return "", ""
	}
	// What precedes the queue words is "[driver-]<interface>".
	i := strings.LastIndex(r.Name, "-"+queueWord(r.Name))
	if i <= 0 {
		return "", ""
	}
	name = r.Name[:i]
	for _, d := range driverPrefixes {
		if rest, ok := strings.CutPrefix(name, d+"-"); ok {
			name = rest
			break
		}
	}
	// The kernel refuses ':', '/' and whitespace in interface names, so
	// "0000:d8:00.0:fdir" (i40e's flow director) names no interface.
	if name == "" || strings.ContainsAny(name, " ,@:/") || strings.HasPrefix(name, "virtio") {
		return "", ""
	}
	if topology.IsPCIAddress(name) {
		pci = name
	}
	return name, pci
}

// queueWord returns the queue part of a queue IRQ name: "TxRx-3",
// "Tx-Rx-3", "rx-3", "tx-3", "fp-3", "rxtx-3".
func queueWord(name string) string {
	for _, sep := range []string{"-TxRx-", "-Tx-Rx-", "-rxtx-", "-rx-", "-tx-", "-fp-"} {
		if i := strings.LastIndex(name, sep); i >= 0 {
			return name[i+1:]
		}
	}
	return "\x00" // matches nothing
}

// chipPCI returns the PCI function an MSI row belongs to: from the chip
// name on kernels since 6.2 ("IR-PCI-MSIX-0000:98:00.0"), or from the
// hwirq older kernels print for "IR-PCI-MSI"/"PCI-MSI", which encodes
// domain << 27 | bus << 19 | devfn << 11 | vector.
func chipPCI(r Row) string {
	for _, p := range []string{"IR-PCI-MSIX-", "IR-PCI-MSI-", "PCI-MSIX-", "PCI-MSI-"} {
		if bdf, ok := strings.CutPrefix(r.Chip, p); ok && topology.IsPCIAddress(bdf) {
			return bdf
		}
	}
	if r.Chip != "IR-PCI-MSI" && r.Chip != "PCI-MSI" {
		return ""
	}
	num, _, _ := strings.Cut(r.HWIRQ, "-")
	v, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return ""
	}
	domain, bus, devfn := v>>27, (v>>19)&0xff, (v>>11)&0xff
	return fmt.Sprintf("%04x:%02x:%02x.%d", domain, bus, devfn>>3, devfn&7)
}

func readInferredLocality(fsys kfile.FS, n *topology.NIC, dir string) error {
	if v, err := fsys.Int(filepath.Join(dir, "numa_node")); err == nil {
		if v < -1 {
			return fmt.Errorf("NIC %s: %s/numa_node %d is not a node", n.Name, dir, v)
		}
		n.Node = v
	} else if !kfile.IsNotExist(err) {
		return fmt.Errorf("NIC %s: %w", n.Name, err)
	}
	if set, err := fsys.List(filepath.Join(dir, "local_cpulist")); err == nil {
		n.LocalCPUs, n.HasLocal = set, true
	} else if !kfile.IsNotExist(err) {
		return fmt.Errorf("NIC %s: %w", n.Name, err)
	}
	if s, err := fsys.String(filepath.Join(dir, "vendor")); err == nil {
		n.VendorID = s
	}
	if s, err := fsys.String(filepath.Join(dir, "device")); err == nil {
		n.DeviceID = s
	}
	return nil
}
