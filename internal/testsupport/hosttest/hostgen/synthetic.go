package hostgen

import (
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
)

// Spec sizes a synthetic host.
type Spec struct {
	CPUs         int  // possible CPUs, all online
	Nodes        int  // NUMA nodes, one per package
	SMT          bool // two threads per core: siblings n and n+CPUs/2
	NICs         int  // mlx5 NICs, spread round-robin over the nodes
	QueuesPerNIC int  // completion IRQs and rx/tx queues per NIC
	ExtraIRQs    int  // NVMe queue IRQs (32 per device, managed but q0)
}

// IRQCount is the number of IRQs a host built from s has: per NIC one
// async IRQ and QueuesPerNIC completion IRQs, plus ExtraIRQs.
func (s Spec) IRQCount() int { return s.NICs*(s.QueuesPerNIC+1) + s.ExtraIRQs }

// Synthetic returns a large deterministic host for benchmarks and scale
// tests. CPUs of a node are contiguous (with SMT, the node's cores and
// their siblings in the upper half); NIC k sits on node k%Nodes and queue q
// is pinned to the q-th CPU of that node.
func Synthetic(s Spec) (*Host, error) {
	if s.CPUs < 1 || s.Nodes < 1 || s.Nodes > s.CPUs || s.NICs < 0 || s.QueuesPerNIC < 0 || s.ExtraIRQs < 0 {
		return nil, fmt.Errorf("synthetic host %+v: sizes out of range", s)
	}
	if s.SMT && (s.CPUs%2 != 0 || s.Nodes > s.CPUs/2) {
		return nil, fmt.Errorf("synthetic host %+v: SMT needs an even CPU count and a core per node", s)
	}
	if s.NICs > 200 {
		return nil, fmt.Errorf("synthetic host %+v: at most 200 NICs", s)
	}
	h := &Host{
		Name: fmt.Sprintf("synthetic-%dcpu-%dnode", s.CPUs, s.Nodes), Arch: ArchX86,
		Format:    Format{NewCounts: true, SoftnetCols: 13},
		KernelMax: 8191, NohzFull: "(null)", Governor: "performance",
		Cmdline: "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet",
	}
	cores := s.CPUs
	if s.SMT {
		cores = s.CPUs / 2
	}
	for c := range s.CPUs {
		core := c % cores
		node := core * s.Nodes / cores
		first := (node*cores + s.Nodes - 1) / s.Nodes // first core of the node
		h.CPUs = append(h.CPUs, CPU{ID: c, Node: node, Package: node, Core: core - first, L3: node, Online: true})
	}
	for i := range s.Nodes {
		h.Nodes = append(h.Nodes, Node{ID: i, Distance: distances(i, s.Nodes, 1, 0, 21),
			MemTotalKB: 65536000, MemFreeKB: 60000000, HasMemory: true})
	}
	nodeCPUs := make([]cpuset.Set, s.Nodes)
	nodeIDs := make([][]int, s.Nodes)
	for i := range s.Nodes {
		nodeCPUs[i] = h.NodeCPUs(i)
		nodeIDs[i] = nodeCPUs[i].IDs()
	}
	irq := 24
	for k := range s.NICs {
		node := k % s.Nodes
		bus := 0x10 + k
		d := &PCIDev{Path: fmt.Sprintf("pci%04x:%02x/%04x:%02x:01.0/%04x:%02x:00.0", k/200, bus-1, k/200, bus-1, k/200, bus),
			Vendor: "0x15b3", Device: "0x101d", Class: "0x020000", Driver: "mlx5_core",
			NumaNode: node, LocalCPUs: nodeCPUs[node]}
		bdf := d.BDF()
		h.PCI = append(h.PCI, d)
		async := msixIRQ(irq, "IR-PCI-MSIX", d, 0, "mlx5_async0@pci:"+bdf)
		async.Affinity, async.Effective, async.Node = nodeCPUs[node], cpuset.New(nodeIDs[node][0]), node
		async.Count = one(nodeIDs[node][0], uint64(1000+k))
		h.IRQs = append(h.IRQs, async)
		d.MSI = append(d.MSI, irq)
		irq++
		nic := &NIC{Name: fmt.Sprintf("eth%d", k), Dev: d, Ifindex: 2 + k, Address: mac("0c:42:a1", k),
			MTU: 1500, Operstate: "up", Speed: 100000, Rx: s.QueuesPerNIC, Tx: s.QueuesPerNIC}
		for q := range s.QueuesPerNIC {
			cpu := nodeIDs[node][q%len(nodeIDs[node])]
			set := cpuset.New(cpu)
			c := msixIRQ(irq, "IR-PCI-MSIX", d, q+1, fmt.Sprintf("mlx5_comp%d@pci:%s", q, bdf))
			c.Affinity, c.Effective, c.Hint, c.Node = set, set, set, node
			c.Count = one(cpu, uint64(100000+irq*31))
			h.IRQs = append(h.IRQs, c)
			d.MSI = append(d.MSI, irq)
			nic.XPS = append(nic.XPS, set)
			irq++
		}
		h.NICs = append(h.NICs, nic)
	}
	irq = h.addNVMe(s, nodeCPUs, irq)
	h.NICs = append([]*NIC{loopback()}, h.NICs...)
	h.NrIRQs = max(256, irq+32)
	return h, nil
}

// addNVMe adds s.ExtraIRQs vectors of NVMe devices with 32 vectors each,
// numbered from irq: q0 follows the default affinity, q1..q31 are managed
// and split the CPUs into 31 groups. It returns the next free number.
func (h *Host) addNVMe(s Spec, nodeCPUs []cpuset.Set, irq int) int {
	all := h.Possible()
	const perDev = 32
	var dev *PCIDev
	for e := range s.ExtraIRQs {
		n, idx := e/perDev, e%perDev
		if idx == 0 {
			bus := 0x10 + s.NICs + n
			dev = &PCIDev{Path: fmt.Sprintf("pci%04x:%02x/%04x:%02x:03.0/%04x:%02x:00.0", bus/256, bus%256, bus/256, bus%256, bus/256, (bus+1)%256),
				Vendor: "0x144d", Device: "0xa80a", Class: "0x010802", Driver: "nvme",
				NumaNode: n % s.Nodes, LocalCPUs: nodeCPUs[n%s.Nodes]}
			h.PCI = append(h.PCI, dev)
		}
		q := msixIRQ(irq, "IR-PCI-MSIX", dev, idx, fmt.Sprintf("nvme%dq%d", n, idx))
		if idx == 0 {
			q.Affinity, q.Effective, q.Node = all, cpuset.New(0), dev.NumaNode
		} else {
			lo := (idx - 1) * s.CPUs / (perDev - 1)
			hi := idx*s.CPUs/(perDev-1) - 1
			if hi < lo {
				hi = lo
			}
			q.Affinity, q.Effective, q.Managed = cpuset.Range(lo, min(hi, s.CPUs-1)), cpuset.New(lo%s.CPUs), true
			q.Node = h.CPUs[lo%s.CPUs].Node
		}
		m, _ := q.Effective.Min()
		q.Count = one(m, uint64(5000+irq))
		h.IRQs = append(h.IRQs, q)
		dev.MSI = append(dev.MSI, irq)
		irq++
	}
	return irq
}
