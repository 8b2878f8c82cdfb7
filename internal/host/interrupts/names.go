package interrupts

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/pci"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Dir is the one direction a NIC vector serves.
type Dir string

// The directions; the zero Dir is a vector that serves both, or none.
const (
	DirRX Dir = "rx"
	DirTX Dir = "tx"
)

// Vector is what an IRQ's action name says of a NIC vector.
type Vector struct {
	Queue unknown.Value[int] // queue index; not applicable for a non-queue vector
	Dir   Dir                // DirRX or DirTX for a vector that serves one direction, "" otherwise
}

// IsQueue reports whether the vector serves a queue.
func (v Vector) IsQueue() bool { return v.Queue.Known() }

// NotQueue is the Queue of a vector that serves no queue.
var NotQueue = unknown.NotAs[int](unknown.KindNotApplicable, "not a queue vector")

var notQueue = Vector{Queue: NotQueue}

// parseName reads the vector of an IRQ already known to belong to a NIC
// (from msi_irqs), from its name alone: "mlx5_comp7@pci:<bdf>",
// "ens1f0-TxRx-3", "oldname-rx-1", "virtio2-input.4",
// "hns3-<bdf>-TxRx-2".
func parseName(name string) Vector { return ParseNameFor("", name) }

// ParseNameFor is ParseName for a NIC whose driver is known, as some
// number their names by vector rather than by ring (see ParseTailFor).
func ParseNameFor(driver, name string) Vector {
	if at := strings.Index(name, "@pci:"); at >= 0 {
		return ParsePCIName(name, name[at+len("@pci:"):])
	}
	if i := strings.LastIndex(name, "-TxRx-"); i >= 0 {
		return ParseTailFor(driver, name[i+1:])
	}
	for _, sep := range []string{"-Tx-Rx-", "-txrx-", "-rx-", "-tx-", "-fp-", "-rxtx-"} {
		if i := strings.LastIndex(name, sep); i >= 0 {
			return ParseTailFor(driver, name[i+1:])
		}
	}
	if i := strings.LastIndex(name, "-input."); i >= 0 {
		return ParseVirtioTail(name[i+1:])
	}
	if i := strings.LastIndex(name, "-output."); i >= 0 {
		return ParseVirtioTail(name[i+1:])
	}
	return notQueue
}

// CutIfName returns what follows "<if>-" or "<driver>-<if>-" at the head
// of name, or "" when name is ifname exactly (igb's "other causes"
// vector); false when name does not start with the interface.
// "eth1" never matches "eth10-...".
func CutIfName(name, ifname string) (string, bool) {
	if name == ifname {
		return "", true
	}
	if tail, ok := CutDashed(name, ifname); ok {
		return tail, true
	}
	if i := strings.IndexByte(name, '-'); i > 0 && !strings.ContainsAny(name[:i], "@:. ") {
		if tail, ok := CutDashed(name[i+1:], ifname); ok {
			return tail, true
		}
	}
	return "", false
}

// CutDashed is strings.CutPrefix(s, prefix+"-") without making the
// string prefix+"-": it runs for every IRQ name and NIC of a host.
func CutDashed(s, prefix string) (string, bool) {
	if len(s) > len(prefix) && s[len(prefix)] == '-' && s[:len(prefix)] == prefix {
		return s[len(prefix)+1:], true
	}
	return "", false
}

// parseTail reads what follows the interface name: "TxRx-3", "Tx-Rx-3",
// "txrx-3", "rx-3", "tx-3", "fp-3", "rxtx-3", "3"; anything else ("misc",
// "fdir", "ctrl") is a non-queue vector.
func parseTail(tail string) Vector {
	kind, idx := "", tail
	if i := strings.LastIndexByte(tail, '-'); i >= 0 {
		kind, idx = tail[:i], tail[i+1:]
	}
	n, ok := queueIndex(idx)
	if !ok {
		return notQueue
	}
	v := Vector{Queue: unknown.Of(n)}
	switch kind {
	case "TxRx", "Tx-Rx", "txrx", "fp", "rxtx", "":
	case "rx":
		v.Dir = DirRX
	case "tx":
		v.Dir = DirTX
	default:
		return notQueue
	}
	return v
}

// ParseTailFor is ParseTail for a NIC whose driver is known ("" when
// not). tg3 names each IRQ after its vector, not its ring
// (tg3_request_irq: "%s-txrx-%d", "%s-tx-%d", "%s-rx-%d" or "%s-%d" with
// the vector's index, by which rings the vector has). With more than one
// vector RSS is on and vector 0 has no rx ring (tg3_enable_msix,
// tg3_mem_rx_acquire); with more than one tx ring TSS is on and vector 0
// has no tx ring either (tg3_mem_tx_acquire). So for tg3 "rx-N",
// "txrx-N" and "tx-N" with N >= 1 serve ring N-1, "tx-0" serves tx ring
// 0 (vector 0 without TSS), and "<if>-N" serves no ring. Names tg3 never
// gives ("rx-0") are read as for other drivers.
func ParseTailFor(driver, tail string) Vector {
	v := parseTail(tail)
	if driver != "tg3" || !v.IsQueue() {
		return v
	}
	kind := ""
	if i := strings.LastIndexByte(tail, '-'); i >= 0 {
		kind = tail[:i]
	}
	q, _ := v.Queue.Get()
	switch {
	case kind == "":
		return notQueue
	case q == 0:
		return v
	}
	v.Queue = unknown.Of(q - 1)
	return v
}

// ParseVirtioTail reads what follows a virtio device's name: "input.0",
// "output.0" are queues; "config", "control" are not.
func ParseVirtioTail(tail string) Vector {
	kind, idx, ok := strings.Cut(tail, ".")
	if !ok {
		return notQueue
	}
	n, ok := queueIndex(idx)
	if !ok {
		return notQueue
	}
	switch kind {
	case "input":
		return Vector{Queue: unknown.Of(n), Dir: DirRX}
	case "output":
		return Vector{Queue: unknown.Of(n), Dir: DirTX}
	}
	return notQueue
}

// ParsePCIName reads names that carry the PCI address bdf:
// "mlx5_comp3@pci:<bdf>", "mana_q3@pci:<bdf>" are queues;
// "mlx5_async0@pci:<bdf>" is not; "ice-<bdf>:misc", "hns3-<bdf>-TxRx-3"
// are read for their queue words like the others.
func ParsePCIName(name, bdf string) Vector {
	if head, _, ok := strings.Cut(name, "@pci:"); ok {
		for _, p := range []string{"mlx5_comp", "mana_q"} {
			if idx, ok := strings.CutPrefix(head, p); ok {
				if n, ok := queueIndex(idx); ok {
					return Vector{Queue: unknown.Of(n)}
				}
				return notQueue
			}
		}
		return notQueue
	}
	if i := strings.Index(name, bdf); i >= 0 {
		if tail, ok := strings.CutPrefix(name[i+len(bdf):], "-"); ok {
			return parseTail(tail)
		}
	}
	return notQueue
}

func queueIndex(s string) (int, bool) {
	if s == "" || len(s) > 6 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// driverPrefixes are the drivers that put their own name before the
// interface name in IRQ names ("i40e-ens3f0-TxRx-0").
var driverPrefixes = []string{"i40e", "ice", "iavf", "idpf", "igc", "ixgbevf"}

// Device returns the NIC a numbered row's name reveals and its PCI
// function, for captures without /sys/class/net: the interface in its
// queue IRQ names ("ens3f0" from "i40e-ens3f0-TxRx-0"), or, when the
// names carry none, the PCI address ("0000:98:00.0" from
// "mlx5_comp0@pci:0000:98:00.0") or the virtio device ("virtio1" from
// virtio_net's "virtio1-input.0"). The PCI function comes from the MSI
// chip name ("IR-PCI-MSIX-0000:98:00.0"), the IRQ name, or the PCI
// requester id older kernels encode in the hwirq of "IR-PCI-MSI". name is
// "" for a row that is no NIC's queue or control vector.
func Device(r Row) (name, bdf string) {
	if !r.IRQ.Known() || r.Name == "" {
		return "", ""
	}
	bdf = chipPCI(r)
	if head, addr, ok := strings.Cut(r.Name, "@pci:"); ok && pci.IsAddress(addr) {
		if strings.HasPrefix(head, "mlx5_") || strings.HasPrefix(head, "mana_") {
			return addr, addr
		}
		return "", ""
	}
	// virtio_net names its queues "input.N" and "output.N" after the
	// virtio device ("virtio1-input.0"); other virtio drivers use other
	// words ("req.N", "control", a bare "input").
	if dev, tail, ok := strings.Cut(r.Name, "-"); ok && IsVirtioDevice(dev) {
		if ParseVirtioTail(tail).IsQueue() {
			return dev, bdf
		}
		return "", ""
	}
	if !parseName(r.Name).IsQueue() {
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
	if pci.IsAddress(name) {
		bdf = name
	}
	return name, bdf
}

// IsVirtioDevice reports whether s names a virtio bus device ("virtio2").
func IsVirtioDevice(s string) bool {
	rest, ok := strings.CutPrefix(s, "virtio")
	if !ok || rest == "" || len(rest) > 6 {
		return false
	}
	_, ok = queueIndex(rest)
	return ok
}

// queueWord returns the queue part of a queue IRQ name: "TxRx-3",
// "Tx-Rx-3", "txrx-3", "rx-3", "tx-3", "fp-3", "rxtx-3".
func queueWord(name string) string {
	for _, sep := range []string{"-TxRx-", "-Tx-Rx-", "-txrx-", "-rxtx-", "-rx-", "-tx-", "-fp-"} {
		if i := strings.LastIndex(name, sep); i >= 0 {
			return name[i+1:]
		}
	}
	return "\x00" // matches nothing
}

// chipPCI returns the PCI function an MSI row belongs to: from the chip
// name of the per-device MSI domains of kernels since 6.2, whatever the
// parent's prefix ("IR-PCI-MSIX-0000:98:00.0" on x86 with interrupt
// remapping, "PCI-MSIX-0000:00:03.0" without, "ITS-PCI-MSIX-0002:01:00.0"
// on arm64's GICv3 ITS), or from the hwirq older kernels print for the
// global PCI/MSI domain ("IR-PCI-MSI", "PCI-MSI", arm64's "ITS-MSI"),
// which pci_msi_domain_calc_hwirq makes domain << 27 | bus << 19 |
// devfn << 11 | vector; "" when it says none.
func chipPCI(r Row) string {
	for _, w := range []string{"PCI-MSIX-", "PCI-MSI-"} {
		i := strings.Index(r.Chip, w)
		if i < 0 || (i > 0 && r.Chip[i-1] != '-') {
			continue
		}
		if bdf := r.Chip[i+len(w):]; pci.IsAddress(bdf) {
			return bdf
		}
	}
	switch r.Chip {
	case "IR-PCI-MSI", "PCI-MSI", "ITS-MSI":
	default:
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
