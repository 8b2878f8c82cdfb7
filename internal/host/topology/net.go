package topology

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/pci"
)

// NIC is a network interface backed by a device (loopback, bridges and
// other virtual interfaces have none and are not listed).
type NIC struct {
	Name      string
	Device    string // sysfs path of its device, relative to the root
	PCI       string // PCI function, "0000:98:00.0"; "" when not on PCI
	Virtio    string // "virtio2" when the netdev sits on a virtio device
	Driver    string // driver of the netdev's device ("mlx5_core", "virtio_net")
	Node      int    // numa_node as the kernel reports it; -1 is unknown
	LocalCPUs cpuset.Set
	HasLocal  bool    // local_cpulist was read
	RxQueues  int     // rx-N folders under queues/; -1 when the tree has no queues folder
	TxQueues  int     // tx-N folders under queues/; -1 likewise
	Queues    []Queue // rx queues by index, then tx queues by index
	SpeedMbps int     // -1 when unknown (link down, virtual)
	OperState string

	VendorID, DeviceID string // "0x15b3"; "" when not on PCI
	Vendor, Product    string // names from pci.ids; "" when unknown

	// MSIIRQs lists the IRQs in the PCI function's msi_irqs folder;
	// HasMSI is false when the tree has no such folder (captures).
	MSIIRQs []int
	HasMSI  bool

	// Inferred is true for a NIC known only from IRQ names, in a tree
	// without /sys/class/net: no queues or speed are known, and its
	// driver only from its PCI function's driver link.
	Inferred bool
	// PCIAbsent is true for an inferred NIC whose PCI address comes from
	// its IRQ names or MSI chip while the tree has no such PCI function
	// (no sys/bus/pci/devices/<PCI>, or a link to nothing): the address
	// still matches its IRQs, but nothing the function would say
	// (numa_node, local_cpulist, ids, driver) is known.
	PCIAbsent bool
	// IRQNode is, when IRQNodeKnown, the node /proc/irq/N/node gives
	// every IRQ of an inferred NIC: the node the kernel allocated them on,
	// which is the device's for vectors allocated without an affinity
	// (see irqNode). It is not known when they disagree, say -1, some are
	// kernel-managed, or none has the file. Locality uses it only when
	// nothing better is known.
	IRQNode      int
	IRQNodeKnown bool
}

// Queue is one rx or tx queue of a NIC with its steering CPUs:
// rps_cpus for rx, xps_cpus for tx.
type Queue struct {
	Kind  string // "rx" or "tx"
	Index int
	CPUs  cpuset.Set
	Known bool // the steering file exists and was read
}

func (h *Host) readNICs() error {
	dir := h.Path("sys/class/net")
	ents, err := h.fs.ReadDir(dir)
	if err != nil {
		if kfile.IsNotExist(err) {
			return h.inferNICs()
		}
		return fmt.Errorf("read NICs: %w", err)
	}
	for _, e := range ents {
		nic, ok, err := h.readNIC(e.Name())
		if err != nil {
			return err
		}
		if ok {
			h.NICs = append(h.NICs, nic)
		}
	}
	slices.SortFunc(h.NICs, func(a, b NIC) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

func (h *Host) readNIC(name string) (NIC, bool, error) {
	netdev, err := h.resolve("sys/class/net/" + name)
	if err != nil {
		if kfile.IsNotExist(err) {
			// Gone while we read (live), or a capture that kept the link
			// but not its target.
			h.note("NIC %s: its /sys/class/net entry points nowhere; skipped", name)
			return NIC{}, false, nil
		}
		return NIC{}, false, fmt.Errorf("NIC %s: %w", name, err)
	}
	dev, err := h.resolve(netdev + "/device")
	if err != nil {
		if kfile.IsNotExist(err) {
			return NIC{}, false, nil // virtual interface
		}
		return NIC{}, false, fmt.Errorf("NIC %s: %w", name, err)
	}
	n := NIC{Name: name, Device: dev, Node: -1, SpeedMbps: -1}
	if base := path.Base(dev); interrupts.IsVirtioDevice(base) {
		n.Virtio = base
	}
	pciDir := ""
	for p := dev; p != "." && p != "/" && strings.HasPrefix(p, "sys/devices/"); p = path.Dir(p) {
		if pci.IsAddress(path.Base(p)) {
			pciDir, n.PCI = p, path.Base(p)
			break
		}
	}
	if drv, err := h.fs.Readlink(h.Path(dev, "driver")); err == nil {
		n.Driver = path.Base(drv)
	}
	// Locality lives on the PCI function; a non-PCI device may carry its own.
	locDir := dev
	if pciDir != "" {
		locDir = pciDir
	}
	if err := h.readLocality(&n, locDir); err != nil {
		return NIC{}, false, err
	}
	if pciDir != "" {
		n.VendorID, _ = h.fs.String(h.Path(pciDir, "vendor"))
		n.DeviceID, _ = h.fs.String(h.Path(pciDir, "device"))
		if err := n.readMSI(h.fs, h.Path(pciDir, "msi_irqs")); err != nil {
			return NIC{}, false, fmt.Errorf("NIC %s: %w", name, err)
		}
	}
	if err := n.readQueues(h.fs, h.Path(netdev, "queues")); err != nil {
		return NIC{}, false, fmt.Errorf("NIC %s: %w", name, err)
	}
	if s, err := h.fs.String(h.Path(netdev, "speed")); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && v > 0 {
			n.SpeedMbps = v
		}
	}
	if s, err := h.fs.String(h.Path(netdev, "operstate")); err == nil {
		n.OperState = strings.TrimSpace(s)
	}
	return n, true, nil
}

func (n *NIC) readMSI(fsys kfile.FS, dir string) error {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		if kfile.IsNotExist(err) {
			return nil
		}
		return err
	}
	n.HasMSI = true
	for _, e := range ents {
		v, err := strconv.Atoi(e.Name())
		if err != nil || v < 0 {
			return fmt.Errorf("%s: unexpected entry %q", dir, e.Name())
		}
		n.MSIIRQs = append(n.MSIIRQs, v)
	}
	slices.Sort(n.MSIIRQs)
	return nil
}

// HasIfName reports whether Name is the interface's name, the one
// ethtool and irqnuma take on the host. A NIC inferred from IRQ names
// that carry no interface is named by its PCI address ("0000:19:00.0",
// from mlx5's "mlx5_comp3@pci:<bdf>") or its virtio device ("virtio1",
// from virtio_net's "virtio1-input.0") instead.
func (n *NIC) HasIfName() bool {
	return !n.Inferred || !(pci.IsAddress(n.Name) || (n.Virtio != "" && n.Name == n.Virtio))
}

// QueuesKnown reports whether the NIC's queue counts are known: the tree
// has its queues folder.
func (n *NIC) QueuesKnown() bool { return n.RxQueues >= 0 && n.TxQueues >= 0 }

func (n *NIC) readQueues(fsys kfile.FS, dir string) error {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		if kfile.IsNotExist(err) {
			n.RxQueues, n.TxQueues = -1, -1 // not 0: the tree does not say
			return nil
		}
		return err
	}
	for _, e := range ents {
		kind, idx, ok := strings.Cut(e.Name(), "-")
		if !ok || (kind != "rx" && kind != "tx") {
			continue
		}
		i, err := strconv.Atoi(idx)
		if err != nil || i < 0 {
			continue
		}
		q := Queue{Kind: kind, Index: i}
		file := "rps_cpus"
		if kind == "tx" {
			file = "xps_cpus"
			n.TxQueues++
		} else {
			n.RxQueues++
		}
		// xps_cpus is absent on single-queue devices and unreadable on
		// some drivers; that only makes the steering unknown.
		if set, err := fsys.Mask(dir + "/" + e.Name() + "/" + file); err == nil {
			q.CPUs, q.Known = set, true
		} else if !kfile.IsNotExist(err) && isSyntax(err) {
			return err
		}
		n.Queues = append(n.Queues, q)
	}
	slices.SortFunc(n.Queues, func(a, b Queue) int {
		if a.Kind != b.Kind {
			return strings.Compare(a.Kind, b.Kind) // "rx" < "tx"
		}
		return a.Index - b.Index
	})
	return nil
}

// resolve follows the symlinks of a path inside the host tree, never
// leaving it: relative links are taken from their folder, absolute ones
// from the root. It returns the cleaned path relative to the root.
func (h *Host) resolve(rel string) (string, error) {
	return h.fs.Resolve(h.Path(rel))
}

// Locality says which CPUs are local to a NIC and how that is known.
type Locality struct {
	Node   int        // the NIC's node; -1 when no single node is known
	CPUs   cpuset.Set // the local CPUs; empty when unknown
	Source string     // "numa_node", "single node", "local_cpulist", "irq node" or "unknown"
}

// Known reports whether local CPUs are known.
func (l Locality) Known() bool { return l.Source != "unknown" }

// Locality returns where a NIC is local, never guessing node 0:
//   - numa_node is the kernel's word when it names a node the tree has;
//   - numa_node -1 on a host that truly has one node (one node folder,
//     and node/online, when the tree has it, naming no other) makes
//     that node local by definition;
//   - otherwise a local_cpulist narrower than the whole host (the kernel
//     reports every CPU when it does not know) says which CPUs are local,
//     with numa_node's node when it names one whose folder is missing;
//   - otherwise, for a NIC inferred from IRQ names, the node all of its
//     IRQs were allocated on (IRQNode), when the host has it;
//   - anything else is unknown.
func (h *Host) Locality(n *NIC) Locality {
	if n.Node >= 0 {
		if cpus, ok := h.NodeCPUs(n.Node); ok {
			return Locality{Node: n.Node, CPUs: cpus, Source: "numa_node"}
		}
	}
	if n.Node < 0 && h.singleNode() {
		return Locality{Node: h.Nodes[0].ID, CPUs: h.Nodes[0].CPUs, Source: "single node"}
	}
	if n.HasLocal && !n.LocalCPUs.IsEmpty() && !h.Possible.IsSubsetOf(n.LocalCPUs) && !h.Online.IsSubsetOf(n.LocalCPUs) {
		node := h.LocalNode(n.LocalCPUs)
		if node < 0 && n.Node >= 0 {
			node = n.Node // the kernel's word, its folder missing from the tree
		}
		return Locality{Node: node, CPUs: n.LocalCPUs, Source: "local_cpulist"}
	}
	if n.IRQNodeKnown {
		if cpus, ok := h.NodeCPUs(n.IRQNode); ok {
			return Locality{Node: n.IRQNode, CPUs: cpus, Source: "irq node"}
		}
	}
	return Locality{Node: -1, Source: "unknown"}
}

// singleNode reports whether the host has exactly one NUMA node: one
// node folder, and no other node named by node/online (a tree missing a
// node's folder is not a one-node host).
func (h *Host) singleNode() bool {
	if len(h.Nodes) != 1 {
		return false
	}
	if h.NodesOnline.IsEmpty() {
		return true
	}
	return h.NodesOnline.Len() == 1 && h.NodesOnline.Contains(h.Nodes[0].ID)
}
