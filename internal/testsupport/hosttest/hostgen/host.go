package hostgen

import (
	"github.com/irqnuma/irqnuma/cpuset"
)

// Host is the model of one machine: what its kernel would show under /proc
// and /sys.
type Host struct {
	Name   string
	Readme string // text of the tree's README

	Arch   Arch
	Format Format

	// CPUs holds every possible CPU, indexed by id.
	CPUs      []CPU
	KernelMax int        // NR_CPUS-1, /sys/devices/system/cpu/kernel_max
	Isolated  cpuset.Set // isolcpus= domain CPUs
	// NohzFull is the text of /sys/devices/system/cpu/nohz_full; "" means
	// the file does not exist (kernel built without CONFIG_NO_HZ_FULL).
	NohzFull string
	// Clusters adds cluster_id and cluster_cpus{,_list} to the topology
	// folders (arm64, and x86 since Linux 5.16).
	Clusters bool
	// Governor is the cpufreq scaling governor; "" means no cpufreq folder.
	Governor string

	Nodes   []Node
	Cmdline string

	PCI  []*PCIDev
	NICs []*NIC
	IRQs []*IRQ
	// NrIRQs is the kernel's nr_irqs: it sets the width of the IRQ number
	// column of /proc/interrupts and the length of the intr line of /proc/stat.
	NrIRQs int
	// X86Rows lists the named rows of an x86 /proc/interrupts when they
	// differ from a bare-metal server's (a VM has HYP and no MCE).
	X86Rows []string
}

// Arch picks the architecture-specific rows of /proc/interrupts and the
// sysfs differences.
type Arch int

const (
	ArchX86 Arch = iota
	ArchARM64
)

// Format picks between the layouts different kernels give
// /proc/interrupts and /proc/net/softnet_stat.
type Format struct {
	// NewCounts: Linux 6.12 and later print " %10u" per CPU after "%*d:"
	// (no space after the colon and no trailing space); older kernels
	// print "%*d: " and then "%10u " per CPU.
	NewCounts bool
	// SoftnetCols is the number of columns of /proc/net/softnet_stat
	// (13 from Linux 5.10, 15 on 6.18).
	SoftnetCols int
}

// CPU is one possible CPU.
type CPU struct {
	ID      int
	Node    int
	Package int
	Core    int // core_id; repeats across packages as on real hosts
	Die     int // die_id; -1 on arm64
	Cluster int // cluster_id when Host.Clusters
	L3      int // L3 cache id; -1 when the CPU has no known L3
	// NoL3ID leaves out cache/index3/id (arm64 firmware without PPTT cache ids).
	NoL3ID bool
	Online bool
}

// Node is one NUMA node.
type Node struct {
	ID         int
	Distance   []int // one entry per node, in node order
	MemTotalKB int
	MemFreeKB  int
	HasMemory  bool
}

// PCIDev is one PCI function.
type PCIDev struct {
	// Path is the function's path under sys/devices, e.g.
	// "pci0000:97/0000:97:01.0/0000:98:00.0"; its last element is the BDF.
	Path      string
	Vendor    string // "0x15b3"
	Device    string // "0x101d"
	Class     string // "0x020000"
	Driver    string // pci driver name, e.g. "mlx5_core"
	NumaNode  int
	LocalCPUs cpuset.Set
	MSI       []int  // IRQ numbers listed in msi_irqs/
	MSIKind   string // "msix" or "msi"
	// Virtio is the name of the virtio device under the function
	// ("virtio2"), and VirtioDriver its virtio driver ("virtio_net").
	Virtio       string
	VirtioDriver string
}

// BDF returns the function's PCI address.
func (d *PCIDev) BDF() string {
	p := d.Path
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// NIC is one network interface. A NIC with a nil Dev is virtual (lo).
type NIC struct {
	Name      string
	Dev       *PCIDev
	Ifindex   int
	Address   string
	MTU       int
	Operstate string
	Speed     int // Mb/s; -1 prints as the kernel's -1 (unknown)
	NoSpeed   bool
	Rx, Tx    int
	RPS       []cpuset.Set // per rx queue; nil means all empty
	XPS       []cpuset.Set // per tx queue; nil means all empty
	// NoXPS leaves out xps_cpus: reading it on a single-queue device fails
	// with ENOENT, which a file in a tree cannot show.
	NoXPS bool
}

// IRQ is one interrupt line with its /proc/irq/N folder.
type IRQ struct {
	N       int
	Chip    string // "IR-PCI-MSIX-0000:98:00.0", "GICv3", "IO-APIC"
	HWIRQ   int
	Trigger string   // x86: "edge"/"fasteoi" (printed as -name); arm64: "Edge"/"Level"
	Actions []string // action names; their folders appear under /proc/irq/N
	// Affinity is smp_affinity; Effective is effective_affinity; Hint is
	// affinity_hint (empty when the driver set none).
	Affinity, Effective, Hint cpuset.Set
	Node                      int
	// Managed marks a kernel-managed IRQ (spread by the kernel, e.g. NVMe
	// queues); NoBalance marks a per-CPU or IRQF_NOBALANCING one (timer,
	// arch_timer). The kernel creates smp_affinity{,_list} without a write
	// bit for both.
	Managed   bool
	NoBalance bool
	// Count is the interrupt count on each CPU that took this IRQ; the
	// other online CPUs show 0.
	Count map[int]uint64
}

// Possible returns the set of possible CPUs.
func (h *Host) Possible() cpuset.Set {
	return cpuset.Range(0, len(h.CPUs)-1)
}

// Online returns the set of online CPUs.
func (h *Host) Online() cpuset.Set {
	var ids []int
	for _, c := range h.CPUs {
		if c.Online {
			ids = append(ids, c.ID)
		}
	}
	return cpuset.New(ids...)
}

// onlineIDs returns the online CPU ids in order.
func (h *Host) onlineIDs() []int {
	var ids []int
	for _, c := range h.CPUs {
		if c.Online {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// NodeCPUs returns the online CPUs of node n: on x86 and arm64 a CPU
// leaves its node's cpumap when it goes offline.
func (h *Host) NodeCPUs(n int) cpuset.Set {
	var ids []int
	for _, c := range h.CPUs {
		if c.Online && c.Node == n {
			ids = append(ids, c.ID)
		}
	}
	return cpuset.New(ids...)
}

// nbits is nr_cpu_ids, the width of every CPU mask the kernel prints.
func (h *Host) nbits() int { return len(h.CPUs) }

func (h *Host) mask(s cpuset.Set) string { return s.Mask(h.nbits()) }
