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
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// NIC is a network interface backed by a device (loopback, bridges and
// other virtual interfaces have none and are not listed).
type NIC struct {
	Name      string
	Device    string                    // sysfs path of its device, relative to the root
	PCI       string                    // PCI function, "0000:98:00.0"; "" when not on PCI
	Virtio    string                    // "virtio2" when the netdev sits on a virtio device
	Driver    string                    // driver of the netdev's device ("mlx5_core", "virtio_net")
	Node      unknown.Value[int]        // numa_node as the kernel reports it
	LocalCPUs unknown.Value[cpuset.Set] // local_cpulist
	RxQueues  unknown.Value[int]        // rx-N folders under queues/
	TxQueues  unknown.Value[int]        // tx-N folders under queues/
	Queues    []Queue                   // rx queues by index, then tx queues by index
	SpeedMbps unknown.Value[int]        // unknown when the link is down, or virtual
	OperState unknown.Value[OperState]

	VendorID, DeviceID string // "0x15b3"; "" when not on PCI
	Vendor, Product    string // names from pci.ids; "" when unknown

	// MSIIRQs lists the IRQs in the PCI function's msi_irqs folder,
	// ascending; unknown when the tree has no such folder (captures).
	MSIIRQs unknown.Value[[]int]

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
	// IRQNode is the node /proc/irq/N/node gives every IRQ of an
	// inferred NIC: the node the kernel allocated them on, which is the
	// device's for vectors allocated without an affinity (see irqNode).
	// It is unknown when they disagree, say -1, some are kernel-managed,
	// or none has the file, and for a NIC that is not inferred. Locality
	// uses it only when nothing better is known.
	IRQNode unknown.Value[int]
}

// OperState is a netdev's operational state, as its operstate file
// names it (RFC 2863's, include/uapi/linux/if.h).
type OperState string

// The operational states. OperStateUnknown is the kernel's own word
// (IF_OPER_UNKNOWN: the driver does not track it, as for many virtual
// devices), not irqnuma's: it is a state the host reports.
const (
	OperStateUnknown        OperState = "unknown"
	OperStateNotPresent     OperState = "notpresent"
	OperStateDown           OperState = "down"
	OperStateLowerLayerDown OperState = "lowerlayerdown"
	OperStateTesting        OperState = "testing"
	OperStateDormant        OperState = "dormant"
	OperStateUp             OperState = "up"
)

// String is the state as the kernel names it.
func (s OperState) String() string { return string(s) }

// QueueKind is whether a queue receives or transmits.
type QueueKind string

// The kinds of queue, as the kernel names their folders (rx-0, tx-3).
const (
	QueueKindRx QueueKind = "rx"
	QueueKindTx QueueKind = "tx"
)

// Queue is one rx or tx queue of a NIC with its steering CPUs:
// rps_cpus for rx, xps_cpus for tx.
type Queue struct {
	Kind  QueueKind
	Index int
	// CPUs is the steering file's mask; unknown when the file is absent
	// or unreadable.
	CPUs unknown.Value[cpuset.Set]
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
	n := NIC{Name: name, Device: dev, IRQNode: notInferred}
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
	if drv, err := h.fs.Readlink(h.Path(dev, "driver")); err == nil || kfile.IsNotExist(err) {
		if err == nil {
			n.Driver = path.Base(drv)
		}
		if dev == pciDir {
			h.keepDriver(n.PCI, n.Driver) // the function's driver: PCIDriver's answer
		}
	}
	// Locality lives on the PCI function; a non-PCI device may carry its own.
	locDir := dev
	if pciDir != "" {
		locDir = pciDir
	}
	if err := h.readLocality(&n, locDir); err != nil {
		return NIC{}, false, err
	}
	n.MSIIRQs = unknown.NotAs[[]int](unknown.KindNotApplicable, "not a PCI device")
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
	n.SpeedMbps = h.readSpeed(h.Path(netdev, "speed"))
	switch s, err := h.fs.String(h.Path(netdev, "operstate")); {
	case err == nil:
		n.OperState = unknown.Of(OperState(strings.TrimSpace(s)))
	case kfile.IsNotExist(err):
		n.OperState = unknown.Not[OperState](h.absent(h.Path(netdev, "operstate")))
	default:
		n.OperState = unknown.Not[OperState](readFailed(err))
	}
	return n, true, nil
}

func (n *NIC) readMSI(fsys kfile.FS, dir string) error {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		if kfile.IsNotExist(err) {
			n.MSIIRQs = unknown.Not[[]int](absent(fsys, dir))
			return nil
		}
		return err
	}
	var irqs []int
	for _, e := range ents {
		v, err := strconv.Atoi(e.Name())
		if err != nil || v < 0 {
			return fmt.Errorf("%s: unexpected entry %q", dir, e.Name())
		}
		irqs = append(irqs, v)
	}
	slices.Sort(irqs)
	n.MSIIRQs = unknown.Of(irqs)
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
func (n *NIC) QueuesKnown() bool { return n.RxQueues.Known() && n.TxQueues.Known() }

func (n *NIC) readQueues(fsys kfile.FS, dir string) error {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		if kfile.IsNotExist(err) {
			// Not 0: the tree does not say.
			n.RxQueues, n.TxQueues = unknown.Not[int](absent(fsys, dir)), unknown.Not[int](absent(fsys, dir))
			return nil
		}
		return err
	}
	rx, tx := 0, 0
	for _, e := range ents {
		kind, idx, ok := strings.Cut(e.Name(), "-")
		if !ok || (kind != string(QueueKindRx) && kind != string(QueueKindTx)) {
			continue
		}
		i, err := strconv.Atoi(idx)
		if err != nil || i < 0 {
			continue
		}
		q := Queue{Kind: QueueKind(kind), Index: i}
		file := "rps_cpus"
		if q.Kind == QueueKindTx {
			file = "xps_cpus"
			tx++
		} else {
			rx++
		}
		// xps_cpus is absent on single-queue devices and unreadable on
		// some drivers; that only makes the steering unknown.
		p := dir + "/" + e.Name() + "/" + file
		if set, err := fsys.Mask(p); err == nil {
			q.CPUs = unknown.Of(set)
		} else if kfile.IsNotExist(err) {
			q.CPUs = unknown.Not[cpuset.Set](absent(fsys, p))
		} else if isSyntax(err) {
			return err
		} else {
			q.CPUs = unknown.Not[cpuset.Set](readFailed(err))
		}
		n.Queues = append(n.Queues, q)
	}
	n.RxQueues, n.TxQueues = unknown.Of(rx), unknown.Of(tx)
	slices.SortFunc(n.Queues, func(a, b Queue) int {
		if a.Kind != b.Kind {
			return strings.Compare(string(a.Kind), string(b.Kind)) // "rx" < "tx"
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

// LocalitySource is how a NIC's local CPUs are known (Host.Locality).
type LocalitySource string

// How local CPUs are known.
const (
	// LocalitySourceNumaNode: the NIC's numa_node names a node the tree has.
	LocalitySourceNumaNode LocalitySource = "numa_node"
	// LocalitySourceSingleNode: the host has one node, local by definition.
	LocalitySourceSingleNode LocalitySource = "single node"
	// LocalitySourceLocalCPUList: local_cpulist, narrower than the host.
	LocalitySourceLocalCPUList LocalitySource = "local_cpulist"
	// LocalitySourceIRQNode: the node all of an inferred NIC's IRQs were
	// allocated on (NIC.IRQNode).
	LocalitySourceIRQNode LocalitySource = "irq node"
)

// String is the source as output prints it.
func (s LocalitySource) String() string { return string(s) }

// Locality says which CPUs are local to a NIC and how that is known.
type Locality struct {
	Node unknown.Value[int] // the NIC's node; unknown when no single node is known
	CPUs cpuset.Set         // the local CPUs; empty when Source is unknown
	// Source is how CPUs are known; unknown, with the reason, when they
	// are not.
	Source unknown.Value[LocalitySource]
}

// Known reports whether local CPUs are known.
func (l Locality) Known() bool { return l.Source.Known() }

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
	node, nodeKnown := n.Node.Get()
	if nodeKnown {
		if cpus, ok := h.NodeCPUs(node); ok {
			return Locality{Node: unknown.Of(node), CPUs: cpus, Source: unknown.Of(LocalitySourceNumaNode)}
		}
	}
	if !nodeKnown && h.singleNode() {
		return Locality{Node: unknown.Of(h.Nodes[0].ID), CPUs: h.Nodes[0].CPUs, Source: unknown.Of(LocalitySourceSingleNode)}
	}
	if local, ok := n.LocalCPUs.Get(); ok && !local.IsEmpty() && !h.Possible.IsSubsetOf(local) && !h.Online.IsSubsetOf(local) {
		loc := Locality{CPUs: local, Source: unknown.Of(LocalitySourceLocalCPUList), Node: h.LocalNode(local)}
		if !loc.Node.Known() && nodeKnown {
			loc.Node = unknown.Of(node) // the kernel's word, its folder missing from the tree
		}
		return loc
	}
	if id, ok := n.IRQNode.Get(); ok {
		if cpus, ok := h.NodeCPUs(id); ok {
			return Locality{Node: unknown.Of(id), CPUs: cpus, Source: unknown.Of(LocalitySourceIRQNode)}
		}
	}
	why := unknown.Because(unknown.KindNotReported, h.localityWhy(n))
	return Locality{Node: unknown.Not[int](why), Source: unknown.Not[LocalitySource](why)}
}

// localityWhy says why Locality found nothing local to n: what numa_node
// and local_cpulist said.
func (h *Host) localityWhy(n *NIC) string {
	var parts []string
	if node, ok := n.Node.Get(); ok {
		parts = append(parts, fmt.Sprintf("numa_node %d has no node folder", node))
	} else {
		parts = append(parts, "numa_node: "+n.Node.Why().String())
	}
	switch local, ok := n.LocalCPUs.Get(); {
	case !ok:
		parts = append(parts, "local_cpulist: "+n.LocalCPUs.Why().String())
	default:
		parts = append(parts, "local_cpulist "+listOrNone(local)+" names no narrower set than the host's")
	}
	if n.Inferred {
		parts = append(parts, "IRQ node: "+n.IRQNode.Why().String())
	}
	return strings.Join(parts, "; ")
}

// notInferred is the IRQNode of a NIC read from /sys/class/net.
var notInferred = unknown.NotAs[int](unknown.KindNotApplicable, "read only for a NIC inferred from IRQ names")

// readSpeed reads a netdev's speed file: the link's speed in Mb/s, unknown
// when the file is absent, unreadable (EINVAL with the link down) or says
// no speed (-1, or 0).
func (h *Host) readSpeed(path string) unknown.Value[int] {
	s, err := h.fs.String(path)
	switch {
	case kfile.IsNotExist(err):
		return unknown.Not[int](h.absent(path))
	case err != nil:
		return unknown.Not[int](readFailed(err))
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	switch {
	case err != nil:
		return unknown.NotAs[int](unknown.KindMalformed, fmt.Sprintf("%s: %q is not a number", h.rel(path), strings.TrimSpace(s)))
	case v <= 0:
		return unknown.NotAs[int](unknown.KindNotReported, fmt.Sprintf("%s is %d", h.rel(path), v))
	}
	return unknown.Of(v)
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
