package topology

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"syscall"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/pci"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// ErrNoIfindex is wrapped by IfaceByIndex's error when no interface of
// the root's /sys/class/net has the index.
var ErrNoIfindex = errors.New("no interface has that index")

// IfaceByIndex returns the interface of the root's /sys/class/net (the
// namespace sysfs was mounted in: the host's) whose ifindex file holds i.
func (h *Host) IfaceByIndex(i int) (string, error) {
	dir := h.Path("sys/class/net")
	ents, err := h.fs.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("interface index %d: %w", i, err)
	}
	for _, e := range ents {
		v, err := h.fs.Int(h.Path("sys/class/net", e.Name(), "ifindex"))
		if err != nil {
			if kfile.IsNotExist(err) || errors.Is(err, syscall.ENOTDIR) {
				continue
			}
			return "", fmt.Errorf("interface index %d: %w", i, err)
		}
		if v == i {
			return e.Name(), nil
		}
	}
	return "", fmt.Errorf("interface index %d: %w in %s", i, ErrNoIfindex, dir)
}

// PCIFunction is what sysfs says of a PCI function a netdev belongs to
// (an SR-IOV VF in a container's namespace, say).
type PCIFunction struct {
	Address string
	// Node is its own numa_node.
	Node unknown.Value[int]
	// PF is the physical function a VF's physfn link names; "" when the
	// function is no VF.
	PF string
	// NICs are the NICs of this host on PF (or, for a function that is
	// no VF, on the function itself), by name.
	NICs []string
}

// ErrNoPCIFunction is wrapped by Function's error for an address the
// root's /sys/bus/pci/devices does not hold.
var ErrNoPCIFunction = errors.New("no such PCI function")

// Function reads /sys/bus/pci/devices/ADDR: its numa_node, and for a VF
// the PF its physfn link names and that PF's NICs.
func (h *Host) Function(addr string) (PCIFunction, error) {
	if !pci.IsAddress(addr) {
		return PCIFunction{}, fmt.Errorf("PCI function %q: not a PCI address", clipName(addr))
	}
	f := PCIFunction{Address: addr}
	dir := h.Path("sys/bus/pci/devices", addr)
	if _, err := h.fs.Stat(dir); err != nil {
		if kfile.IsNotExist(err) {
			return f, fmt.Errorf("PCI function %s: %w", addr, ErrNoPCIFunction)
		}
		return f, fmt.Errorf("PCI function %s: %w", addr, err)
	}
	v, err := h.fs.Int(path.Join(dir, "numa_node"))
	switch {
	case err == nil && v >= 0:
		f.Node = unknown.Of(v)
	case err == nil && v == -1:
		f.Node = unknown.NotAs[int](unknown.KindNotReported, h.rel(path.Join(dir, "numa_node"))+" is -1")
	case err == nil:
		return f, kfile.Malformedf(path.Join(dir, "numa_node"), "%d is not a node", v)
	case kfile.IsNotExist(err):
		f.Node = unknown.Not[int](h.absent(path.Join(dir, "numa_node")))
	default:
		return f, err
	}
	target, err := h.fs.Readlink(path.Join(dir, "physfn"))
	switch {
	case err == nil && pci.IsAddress(path.Base(target)):
		f.PF = path.Base(target)
	case err == nil:
		return f, kfile.Malformedf(path.Join(dir, "physfn"), "links to %q, not a PCI function", clipName(target))
	case !kfile.IsNotExist(err):
		return f, err
	}
	on := f.PF
	if on == "" {
		on = addr
	}
	for _, n := range h.NICs {
		if n.PCI == on {
			f.NICs = append(f.NICs, n.Name)
		}
	}
	return f, nil
}

func clipName(s string) string {
	if len(s) > 40 {
		return strconv.Quote(s[:40]) + "…"
	}
	return s
}
