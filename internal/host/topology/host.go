// Package topology reads a host's hardware layout from a root folder: NUMA
// nodes with their CPUs, memory and distances; CPUs with their package,
// core, SMT siblings and L3 group; and network interfaces with the PCI
// function behind them, its NUMA node and its queues.
//
// Every reader takes the root explicitly ("/" for the live host, or a
// captured tree), never a hidden /proc or /sys. What the tree does not say
// stays unknown (an unknown.Value with the reason), never a guess.
package topology

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/safetext"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// Host is what topology knows of one machine.
type Host struct {
	Root string

	Nodes []Node // by ascending id; ids may be sparse
	// NodesOnline is node/online: the nodes the kernel has, each with a
	// nodeN folder on a live host; empty when the tree lacks the file.
	NodesOnline cpuset.Set
	CPUs        []CPU // every possible CPU, by ascending id
	Possible    cpuset.Set
	Online      cpuset.Set
	// Isolated is isolcpus= with the domain flag (or none): CPUs out of
	// scheduler load balancing, from cpu/isolated, else /proc/cmdline.
	Isolated cpuset.Set
	// NohzFull is nohz_full= (or isolcpus=nohz): CPUs without the
	// scheduler tick, from cpu/nohz_full, else /proc/cmdline.
	NohzFull cpuset.Set
	// ManagedIRQ is isolcpus=managed_irq, which only /proc/cmdline
	// says: the kernel keeps managed IRQs off these CPUs while their mask
	// holds an online CPU outside them; other IRQs it leaves alone.
	ManagedIRQ cpuset.Set
	// IRQAffinity is irqaffinity=, the default affinity of IRQs (the
	// kernel adds its boot CPU); empty when not given.
	IRQAffinity cpuset.Set
	// IsolationFrom says where each of the four sets was read; see
	// CmdlineIsolation for how the command line is read.
	IsolationFrom IsolationSources
	// Cmdline is /proc/cmdline; unknown when the tree lacks it or it
	// cannot be read (never a known nil).
	Cmdline unknown.Value[*Cmdline]
	// IOMMU is what /sys says of the IOMMUs; IOMMUMode combines it with
	// the command line.
	IOMMU *IOMMU
	NICs  []NIC // every /sys/class/net entry with a device, by name

	// Notes says what the tree lacks that limits the answers, one line
	// each, e.g. "no /sys/class/net: NICs unknown".
	Notes []string

	cpuIndex map[int]int
	nodeOf   map[int]int // CPU id -> node id
	fs       kfile.FS    // every file of the host is read through it
	kept     *kept       // what topology read for the readers after it
	cpuDirs  *cpuDirs    // the cpuN folders, listed once (listCPUDirs)
}

// FS returns the host's root as a kfile.FS: reads through it keep links
// inside the tree.
func (h *Host) FS() kfile.FS { return h.fs }

// Read reads the topology under root.
func Read(fsys kfile.FS) (*Host, error) {
	root := fsys.Root()
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("root: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("root %s: not a directory", root)
	}
	h := &Host{Root: root, fs: fsys, kept: &kept{}}
	if err := h.readCPUs(); err != nil {
		return nil, err
	}
	if err := h.readNodes(); err != nil {
		return nil, err
	}
	if err := h.readNICs(); err != nil {
		return nil, err
	}
	h.readIOMMU()
	return h, nil
}

// Path joins root and a path inside the host tree.
func (h *Host) Path(elem ...string) string {
	return filepath.Join(append([]string{h.Root}, elem...)...)
}

// CPU returns the CPU with the given id.
func (h *Host) CPU(id int) (CPU, bool) {
	i, ok := h.cpuIndex[id]
	if !ok {
		return newCPU(id, unknown.Because(unknown.KindNotApplicable, fmt.Sprintf("this host has no CPU %d", id))), false
	}
	return h.CPUs[i], true
}

// Node returns the node with the given id.
func (h *Host) Node(id int) (Node, bool) {
	for _, n := range h.Nodes {
		if n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}

// NodeOf returns the node a CPU belongs to, unknown (with the reason)
// when no node folder lists it or the host has no such CPU.
func (h *Host) NodeOf(cpu int) unknown.Value[int] {
	if n, ok := h.nodeOf[cpu]; ok {
		return unknown.Of(n)
	}
	if c, _ := h.CPU(cpu); !c.Node.Known() {
		return c.Node
	}
	return unknown.NotAs[int](unknown.KindNotReported, fmt.Sprintf("no node folder lists CPU %d", cpu))
}

// NodesOf returns the set of nodes the CPUs belong to, and the CPUs
// whose node is unknown.
func (h *Host) NodesOf(cpus cpuset.Set) (nodes, unknown cpuset.Set) {
	var ids, unk []int
	for c := range cpus.All() {
		if n, ok := h.NodeOf(c).Get(); ok {
			ids = append(ids, n)
		} else {
			unk = append(unk, c)
		}
	}
	return cpuset.New(ids...), cpuset.New(unk...)
}

// NodeCPUs returns the CPUs of a node (all of them, online or not), and
// false when the node does not exist.
func (h *Host) NodeCPUs(id int) (cpuset.Set, bool) {
	n, ok := h.Node(id)
	return n.CPUs, ok
}

// NodeIDs returns the ids of every node.
func (h *Host) NodeIDs() cpuset.Set {
	ids := make([]int, len(h.Nodes))
	for i, n := range h.Nodes {
		ids[i] = n.ID
	}
	return cpuset.New(ids...)
}

// ErrUnknownNIC is wrapped by the error for a NIC name the host lacks.
var ErrUnknownNIC = usage.New("unknown NIC")

// LookupNIC returns the named NIC, or an error wrapping ErrUnknownNIC
// that lists the NICs the host has.
func (h *Host) LookupNIC(name string) (*NIC, error) {
	if n, ok := h.NICByName(name); ok {
		return n, nil
	}
	names := "no NICs"
	if len(h.NICs) > 0 {
		s := make([]string, len(h.NICs))
		for i, n := range h.NICs {
			s[i] = safetext.Escape(n.Name) // a line break in a name must not split the message
		}
		names = strings.Join(s, ", ")
	}
	return nil, fmt.Errorf("%w %s (this host has: %s)", ErrUnknownNIC, quoteInput(name), names)
}

// quoteInput quotes a name the user gave for an error, cut at 64 bytes
// (an interface name has at most 15) with the bytes it left out said, so
// a 114 KB argument does not come back whole.
func quoteInput(s string) string {
	const keep = 64
	if len(s) <= keep {
		return strconv.Quote(s)
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d more bytes)", s[:cut], len(s)-cut)
}

// NICByName returns the named NIC.
func (h *Host) NICByName(name string) (*NIC, bool) {
	for i := range h.NICs {
		if h.NICs[i].Name == name {
			return &h.NICs[i], true
		}
	}
	return nil, false
}

// MaxCPUs is the width the kernel uses for CPU masks on this host
// (nr_cpu_ids: highest possible CPU + 1).
func (h *Host) MaxCPUs() int {
	if m, ok := h.Possible.Max(); ok {
		return m + 1
	}
	if m, ok := h.Online.Max(); ok {
		return m + 1
	}
	return 1
}

func (h *Host) note(format string, args ...any) {
	h.Notes = append(h.Notes, fmt.Sprintf(format, args...))
}
