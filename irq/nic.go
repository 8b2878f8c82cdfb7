package irq

import (
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/topology"
)

// Kind is the kind of a NIC's IRQ vector.
type Kind string

// Vector kinds.
const (
	KindQueue Kind = "queue" // a queue vector: Queue holds its index
	KindOther Kind = "other" // async, misc, ctrl, config, mailbox...
)

// Owner says which NIC an IRQ serves and as what.
type Owner struct {
	NIC   string
	Queue int    // queue index; -1 for a non-queue vector
	Dir   string // "rx" or "tx" for a vector that serves one direction, "" otherwise
	Kind  Kind   // KindQueue or KindOther
	By    string // how it was matched: "msi_irqs", "name", "pci"
}

// Classify says whether an IRQ with the given action name(s) and chip
// belongs to nic, and as which vector. It matches, in order: the
// interface name at the head of the IRQ name ("eth0-TxRx-3",
// "ice-eth0-TxRx-3", "eth0-rx-1"; "eth1" never matches "eth10-..."), the
// virtio device name ("virtio2-input.0"), the PCI address inside the
// name ("mlx5_comp3@pci:0000:98:00.0", "ice-0000:3b:00.0:misc") and the
// PCI address in the chip name ("IR-PCI-MSIX-0000:98:00.0").
func Classify(name, chip string, nic *topology.NIC) (Owner, bool) {
	o := Owner{NIC: nic.Name, Queue: -1, Kind: KindOther}
	if tail, ok := cutIfName(name, nic.Name); ok {
		o.By = "name"
		classifyTail(tail, &o)
		return o, true
	}
	if nic.Virtio != "" {
		if tail, ok := strings.CutPrefix(name, nic.Virtio+"-"); ok {
			o.By = "name"
			classifyVirtio(tail, &o)
			return o, true
		}
	}
	if nic.PCI != "" {
		if strings.Contains(name, nic.PCI) {
			o.By = "pci"
			classifyPCIName(name, nic.PCI, &o)
			return o, true
		}
		if strings.HasSuffix(chip, "-"+nic.PCI) {
			o.By = "pci"
			classifyName(name, &o)
			return o, true
		}
	}
	return Owner{}, false
}

// classifyName fills in the queue of an IRQ already known to belong to a
// NIC (from msi_irqs), from its name alone.
func classifyName(name string, o *Owner) {
	o.Queue, o.Dir, o.Kind = -1, "", KindOther
	if at := strings.Index(name, "@pci:"); at >= 0 {
		classifyPCIName(name, name[at+len("@pci:"):], o)
		return
	}
	if i := strings.LastIndex(name, "-TxRx-"); i >= 0 {
		classifyTail(name[i+1:], o)
		return
	}
	for _, sep := range []string{"-Tx-Rx-", "-rx-", "-tx-", "-fp-", "-rxtx-"} {
		if i := strings.LastIndex(name, sep); i >= 0 {
			classifyTail(name[i+1:], o)
			return
		}
	}
	if i := strings.LastIndex(name, "-input."); i >= 0 {
		classifyVirtio(name[i+1:], o)
		return
	}
	if i := strings.LastIndex(name, "-output."); i >= 0 {
		classifyVirtio(name[i+1:], o)
		return
	}
}

// cutIfName returns what follows "<if>-" or "<driver>-<if>-" at the head
// of name, or name == ifname exactly (igb's "other causes" vector).
func cutIfName(name, ifname string) (string, bool) {
	if name == ifname {
		return "", true
	}
	if tail, ok := strings.CutPrefix(name, ifname+"-"); ok {
		return tail, true
	}
	if i := strings.IndexByte(name, '-'); i > 0 && !strings.ContainsAny(name[:i], "@:. ") {
		if tail, ok := strings.CutPrefix(name[i+1:], ifname+"-"); ok {
			return tail, true
		}
	}
	return "", false
}

// classifyTail reads what follows the interface name: "TxRx-3",
// "Tx-Rx-3", "rx-3", "tx-3", "fp-3", "rxtx-3", "3"; anything else
// ("misc", "fdir", "ctrl") is a non-queue vector.
func classifyTail(tail string, o *Owner) {
	kind, idx := "", tail
	if i := strings.LastIndexByte(tail, '-'); i >= 0 {
		kind, idx = tail[:i], tail[i+1:]
	}
	n, ok := queueIndex(idx)
	if !ok {
		return
	}
	switch kind {
	case "TxRx", "Tx-Rx", "fp", "rxtx", "":
	case "rx":
		o.Dir = "rx"
	case "tx":
		o.Dir = "tx"
	default:
		return
	}
	o.Queue, o.Kind = n, KindQueue
}

// classifyVirtio reads "input.0", "output.0", "config", "control".
func classifyVirtio(tail string, o *Owner) {
	kind, idx, ok := strings.Cut(tail, ".")
	if !ok {
		return
	}
	n, ok := queueIndex(idx)
	if !ok {
		return
	}
	switch kind {
	case "input":
		o.Dir = "rx"
	case "output":
		o.Dir = "tx"
	default:
		return
	}
	o.Queue, o.Kind = n, KindQueue
}

// classifyPCIName reads names that carry the PCI address:
// "mlx5_comp3@pci:<bdf>", "mana_q3@pci:<bdf>" are queues;
// "mlx5_async0@pci:<bdf>", "ice-<bdf>:misc", "hns3-<bdf>-TxRx-3" are
// read for their queue words like the others.
func classifyPCIName(name, bdf string, o *Owner) {
	if head, _, ok := strings.Cut(name, "@pci:"); ok {
		for _, p := range []string{"mlx5_comp", "mana_q"} {
			if idx, ok := strings.CutPrefix(head, p); ok {
				if n, ok := queueIndex(idx); ok {
					o.Queue, o.Kind = n, KindQueue
				}
				return
			}
		}
		return
	}
	if i := strings.Index(name, bdf); i >= 0 {
		if tail, ok := strings.CutPrefix(name[i+len(bdf):], "-"); ok {
			classifyTail(tail, o)
		}
	}
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
