package hostgen

import (
	"fmt"
	"slices"

	"github.com/irqnuma/irqnuma/cpuset"
)

// Names lists the committed host trees, in the order they are generated.
var Names = []string{"seed", "vm-virtio", "offline-2node", "arm64", "nps2"}

// ByName returns the model of a committed tree.
func ByName(name string) (*Host, error) {
	switch name {
	case "seed":
		return Seed(), nil
	case "vm-virtio":
		return VMVirtio(), nil
	case "offline-2node":
		return Offline2Node(), nil
	case "arm64":
		return ARM64Host(), nil
	case "nps2":
		return NPS2(), nil
	}
	return nil, fmt.Errorf("host tree %q: unknown (have %v)", name, Names)
}

// SeedMasks are the smp_affinity masks of mlx5_comp0..15 on the seed host,
// in queue order, as published with the iperf3 test.
var SeedMasks = []string{
	"00040000,00000000", "00000000,00020000", "00200000,00000000", "00080000,00000000",
	"04000000,00000000", "00800000,00000000", "00200000,00000000", "00000000,40000000",
	"10000000,00000000", "00000000,00100000", "00000000,00200000", "20000000,00000000",
	"00000000,04000000", "00000000,00800000", "00000000,01000000", "80000000,00000000",
}

func mustMask(s string) cpuset.Set {
	v, err := cpuset.ParseMask(s)
	if err != nil {
		panic(err)
	}
	return v
}

// Seed is the receiving machine of the iperf3 100 Gbit/s test: two Xeon
// packages, 64 CPUs, a ConnectX-6 Dx on node 1.
func Seed() *Host {
	h := &Host{
		Name: "seed", Arch: ArchX86, Format: Format{SoftnetCols: 13},
		KernelMax: 8191, NohzFull: "(null)", Governor: "performance", NrIRQs: 1224,
		Cmdline: "BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=UUID=3f1c2a9e-7b4d-4e21-9c5a-2d8e6f0b1a47 ro quiet splash vt.handoff=7",
	}
	for n := range 64 {
		pkg := (n % 32) / 16
		h.CPUs = append(h.CPUs, CPU{ID: n, Node: pkg, Package: pkg, Core: n % 16, L3: pkg, Online: true})
	}
	h.Nodes = []Node{
		{ID: 0, Distance: []int{10, 21}, MemTotalKB: 131780720, MemFreeKB: 118342716, HasMemory: true},
		{ID: 1, Distance: []int{21, 10}, MemTotalKB: 131899412, MemFreeKB: 121467120, HasMemory: true},
	}
	all := h.Possible()
	node0, node1 := h.NodeCPUs(0), h.NodeCPUs(1)

	nvme := &PCIDev{Path: "pci0000:16/0000:16:02.0/0000:17:00.0", Vendor: "0x144d", Device: "0xa80a",
		Class: "0x010802", Driver: "nvme", NumaNode: 0, LocalCPUs: node0}
	mlx := &PCIDev{Path: "pci0000:97/0000:97:01.0/0000:98:00.0", Vendor: "0x15b3", Device: "0x101d",
		Class: "0x020000", Driver: "mlx5_core", NumaNode: 1, LocalCPUs: node1}
	h.PCI = []*PCIDev{nvme, mlx}

	h.IRQs = append(h.IRQs,
		&IRQ{N: 0, Chip: "IR-IO-APIC", HWIRQ: 2, Trigger: "edge", Actions: []string{"timer"},
			Affinity: all, Effective: cpuset.New(0), Node: 0, NoBalance: true, Count: one(0, 36)},
		&IRQ{N: 8, Chip: "IR-IO-APIC", HWIRQ: 8, Trigger: "edge", Actions: []string{"rtc0"},
			Affinity: all, Effective: cpuset.New(0), Node: 0, Count: map[int]uint64{}},
		&IRQ{N: 9, Chip: "IR-IO-APIC", HWIRQ: 9, Trigger: "fasteoi", Actions: []string{"acpi"},
			Affinity: all, Effective: cpuset.New(0), Node: 0, Count: map[int]uint64{}},
		&IRQ{N: 16, Chip: "IR-IO-APIC", HWIRQ: 16, Trigger: "fasteoi", Actions: []string{"i801_smbus"},
			Affinity: all, Effective: cpuset.New(5), Node: 0, Count: map[int]uint64{}},
		&IRQ{N: 24, Chip: "DMAR-MSI", HWIRQ: 0, Trigger: "edge", Actions: []string{"dmar0"},
			Affinity: cpuset.New(0), Effective: cpuset.New(0), Node: 0, Count: map[int]uint64{}},
		&IRQ{N: 26, Chip: "IR-PCI-MSI-0000:00:1c.0", HWIRQ: 0, Trigger: "edge", Actions: []string{"PCIe PME", "pciehp"},
			Affinity: all, Effective: cpuset.New(7), Node: 0, Count: map[int]uint64{}},
	)
	// NVMe: the admin queue follows the default affinity; the I/O queues
	// are kernel-managed, spread over whole cores, node by node.
	q0 := msixIRQ(40, "IR-PCI-MSIX", nvme, 0, "nvme0q0")
	q0.Affinity, q0.Effective, q0.Node, q0.Count = all, cpuset.New(33), 0, one(33, 61)
	h.IRQs = append(h.IRQs, q0)
	nvme.MSI = append(nvme.MSI, 40)
	for i := range 8 {
		lo := (i % 4) * 4
		base := (i / 4) * 16
		mask := cpuset.Range(base+lo, base+lo+3).Union(cpuset.Range(base+lo+32, base+lo+35))
		q := msixIRQ(41+i, "IR-PCI-MSIX", nvme, i+1, fmt.Sprintf("nvme0q%d", i+1))
		first, _ := mask.Min()
		q.Affinity, q.Effective, q.Node, q.Managed = mask, cpuset.New(first), i/4, true
		q.Count = one(first, uint64(20417+i*3311))
		h.IRQs = append(h.IRQs, q)
		nvme.MSI = append(nvme.MSI, 41+i)
	}

	async := msixIRQ(283, "IR-PCI-MSIX", mlx, 0, "mlx5_async0@pci:0000:98:00.0")
	async.Affinity, async.Effective, async.Node, async.Count = node1, cpuset.New(16), 1, one(16, 4012)
	h.IRQs = append(h.IRQs, async)
	mlx.MSI = append(mlx.MSI, 283)
	eth0 := &NIC{Name: "eth0", Dev: mlx, Ifindex: 2, Address: "b8:ce:f6:5a:10:3c", MTU: 9000,
		Operstate: "up", Speed: 100000, Rx: 16, Tx: 16, XPS: make([]cpuset.Set, 16)}
	for i, m := range SeedMasks {
		s := mustMask(m)
		cpu, _ := s.Min()
		q := msixIRQ(284+i, "IR-PCI-MSIX", mlx, i+1, fmt.Sprintf("mlx5_comp%d@pci:0000:98:00.0", i))
		q.Affinity, q.Effective, q.Hint, q.Node = s, s, s, 1
		q.Count = one(cpu, uint64(18734512+i*977413))
		h.IRQs = append(h.IRQs, q)
		mlx.MSI = append(mlx.MSI, 284+i)
		eth0.XPS[i] = s
	}
	h.NICs = []*NIC{loopback(), eth0}
	h.sortIRQs()
	h.Readme = seedReadme
	return h
}

// VMVirtio is a 2-CPU single-node virtual machine with virtio devices,
// shaped like the VM these trees were generated on (Linux 6.18).
func VMVirtio() *Host {
	h := &Host{
		Name: "vm-virtio", Arch: ArchX86, Format: Format{NewCounts: true, SoftnetCols: 15},
		KernelMax: 255, Clusters: true, NrIRQs: 56,
		Cmdline: "console=ttyS0 reboot=k panic=1 root=/dev/vda rw quiet",
		X86Rows: []string{"NMI", "LOC", "SPU", "PMI", "IWI", "RTR", "RES", "CAL", "TLB", "TRM", "HYP", "ERR", "MIS", "PIN", "NPI", "PIW"},
	}
	for n := range 2 {
		h.CPUs = append(h.CPUs, CPU{ID: n, Node: 0, Package: 0, Core: n, L3: 0, Online: true})
	}
	h.Nodes = []Node{{ID: 0, Distance: []int{10}, MemTotalKB: 4286668, MemFreeKB: 3138024, HasMemory: true}}
	all := h.Possible()
	type vdev struct {
		slot           int
		device, class  string
		virtio, driver string
	}
	devs := []vdev{
		{1, "0x1045", "0xffff00", "virtio0", "virtio_balloon"},
		{2, "0x1042", "0x018000", "virtio1", "virtio_blk"},
		{3, "0x1041", "0x020000", "virtio2", "virtio_net"},
		{4, "0x1053", "0xffff00", "virtio3", "vmw_vsock_virtio_transport"},
		{5, "0x1044", "0xffff00", "virtio4", "virtio_rng"},
	}
	pci := map[string]*PCIDev{}
	for _, d := range devs {
		p := &PCIDev{Path: fmt.Sprintf("pci0000:00/0000:00:%02x.0", d.slot), Vendor: "0x1af4", Device: d.device,
			Class: d.class, Driver: "virtio-pci", NumaNode: -1, LocalCPUs: all, Virtio: d.virtio, VirtioDriver: d.driver}
		pci[d.virtio] = p
		h.PCI = append(h.PCI, p)
	}
	ioapic := func(n, hw int, name string, eff int, cnt map[int]uint64) *IRQ {
		return &IRQ{N: n, Chip: "IO-APIC", HWIRQ: hw, Trigger: "edge", Actions: []string{name},
			Affinity: all, Effective: cpuset.New(eff), Node: -1, Count: cnt}
	}
	h.IRQs = append(h.IRQs,
		ioapic(24, 5, "ACPI:Ged", 0, one(0, 1)),
		ioapic(25, 6, "ACPI:Ged", 1, one(1, 1)),
		ioapic(26, 4, "ttyS0", 1, one(1, 16)))
	// Live values: IRQ number, device, MSI-X index, name, effective CPU,
	// hint, node, managed, count.
	rows := []struct {
		n      int
		dev    string
		idx    int
		name   string
		eff    int
		hint   bool
		node   int
		manage bool
		count  uint64
	}{
		{28, "virtio0", 0, "virtio0-config", 0, false, -1, false, 0},
		{29, "virtio0", 1, "virtio0-inflate", 1, false, -1, false, 0},
		{30, "virtio0", 2, "virtio0-deflate", 0, false, -1, false, 0},
		{31, "virtio0", 3, "virtio0-stats", 1, false, -1, false, 38},
		{32, "virtio0", 4, "virtio0-reporting_vq", 0, false, -1, false, 15},
		{33, "virtio4", 0, "virtio4-config", 1, false, -1, false, 0},
		{34, "virtio4", 1, "virtio4-input", 0, false, -1, false, 15},
		{35, "virtio1", 0, "virtio1-config", 1, false, 0, false, 1},
		{36, "virtio1", 1, "virtio1-req.0", 1, false, 0, true, 9455},
		{37, "virtio2", 0, "virtio2-config", 0, false, -1, false, 0},
		{38, "virtio2", 1, "virtio2-input.0", 1, true, -1, false, 814},
		{39, "virtio2", 2, "virtio2-output.0", 0, true, -1, false, 883},
		{40, "virtio3", 0, "virtio3-config", 1, false, -1, false, 0},
		{41, "virtio3", 1, "virtio3-rx", 0, false, -1, false, 1426},
		{42, "virtio3", 2, "virtio3-tx", 1, false, -1, false, 2689},
		{43, "virtio3", 3, "virtio3-event", 0, false, -1, false, 1},
	}
	for _, r := range rows {
		d := pci[r.dev]
		q := msixIRQ(r.n, "PCI-MSIX", d, r.idx, r.name)
		q.Affinity, q.Effective, q.Node, q.Managed = all, cpuset.New(r.eff), r.node, r.manage
		if r.hint {
			q.Hint = all
		}
		q.Count = one(r.eff, r.count)
		h.IRQs = append(h.IRQs, q)
		d.MSI = append(d.MSI, r.n)
	}
	eth0 := &NIC{Name: "eth0", Dev: pci["virtio2"], Ifindex: 2, Address: "02:fc:00:00:00:01", MTU: 1400,
		Operstate: "up", Speed: -1, Rx: 1, Tx: 1, NoXPS: true}
	h.NICs = []*NIC{loopback(), eth0}
	h.sortIRQs()
	h.Readme = vmReadme
	return h
}

// Offline2Node is a 16-CPU, 2-node Xeon host with CPUs 1, 5 and 9 offline
// and four NICs, on a Linux 4.18 (RHEL 8) style kernel.
func Offline2Node() *Host {
	h := &Host{
		Name: "offline-2node", Arch: ArchX86, Format: Format{SoftnetCols: 13},
		KernelMax: 8191, Governor: "powersave", NrIRQs: 552,
		Isolated: cpuset.Range(10, 11), NohzFull: "10-11",
		Cmdline: "BOOT_IMAGE=(hd0,gpt2)/vmlinuz-4.18.0-513.5.1.el8_9.x86_64 root=/dev/mapper/rhel-root ro crashkernel=auto rd.lvm.lv=rhel/root isolcpus=managed_irq,domain,10-11 nohz_full=10-11 rcu_nocbs=10-11",
	}
	offline := cpuset.New(1, 5, 9)
	for n := range 16 {
		node := n / 8
		h.CPUs = append(h.CPUs, CPU{ID: n, Node: node, Package: node, Core: n % 4, L3: node, Online: !offline.Contains(n)})
	}
	h.Nodes = []Node{
		{ID: 0, Distance: []int{10, 21}, MemTotalKB: 65617444, MemFreeKB: 58120384, HasMemory: true},
		{ID: 1, Distance: []int{21, 10}, MemTotalKB: 66044244, MemFreeKB: 60011872, HasMemory: true},
	}
	all := h.Possible()
	online := h.Online()
	node0, node1 := h.NodeCPUs(0), h.NodeCPUs(1)

	// Before per-device MSI domains every MSI and MSI-X vector showed chip
	// "IR-PCI-MSI" and a hwirq built from the requester id.
	var msi msiFunc = func(n int, d *PCIDev, bus, dev, fn, idx int, name string, aff, eff, hint cpuset.Set, node int) *IRQ {
		c, _ := eff.Min()
		q := &IRQ{N: n, Chip: "IR-PCI-MSI", HWIRQ: legacyMSIHWIRQ(bus, dev, fn, idx), Trigger: "edge",
			Actions: []string{name}, Affinity: aff, Effective: eff, Hint: hint, Node: node,
			Count: one(c, uint64(1000+n*7919))}
		d.MSI = append(d.MSI, n)
		h.IRQs = append(h.IRQs, q)
		return q
	}
	h.IRQs = append(h.IRQs,
		&IRQ{N: 0, Chip: "IR-IO-APIC", HWIRQ: 2, Trigger: "edge", Actions: []string{"timer"},
			Affinity: all, Effective: cpuset.New(0), Node: 0, NoBalance: true, Count: one(0, 29)},
		&IRQ{N: 9, Chip: "IR-IO-APIC", HWIRQ: 9, Trigger: "fasteoi", Actions: []string{"acpi"},
			Affinity: all, Effective: cpuset.New(0), Node: 0, Count: map[int]uint64{}},
		&IRQ{N: 24, Chip: "DMAR-MSI", HWIRQ: 0, Trigger: "edge", Actions: []string{"dmar0"},
			Affinity: cpuset.New(0), Effective: cpuset.New(0), Node: 0, Count: map[int]uint64{}})

	nvme := &PCIDev{Path: "pci0000:17/0000:17:00.0/0000:18:00.0", Vendor: "0x8086", Device: "0x0a54",
		Class: "0x010802", Driver: "nvme", NumaNode: 0, LocalCPUs: node0}
	ice := &PCIDev{Path: "pci0000:3a/0000:3a:00.0/0000:3b:00.0", Vendor: "0x8086", Device: "0x159b",
		Class: "0x020000", Driver: "ice", NumaNode: 1, LocalCPUs: node1}
	// numa_node -1 with node 1's CPUs in local_cpulist, as the brief for
	// this tree asks; see README.
	i40e := &PCIDev{Path: "pci0000:5d/0000:5d:00.0/0000:5e:00.0", Vendor: "0x8086", Device: "0x1572",
		Class: "0x020000", Driver: "i40e", NumaNode: -1, LocalCPUs: node1}
	ixA := &PCIDev{Path: "pci0000:85/0000:85:02.0/0000:86:00.0", Vendor: "0x8086", Device: "0x10fb",
		Class: "0x020000", Driver: "ixgbe", NumaNode: 0, LocalCPUs: node0}
	ixB := &PCIDev{Path: "pci0000:85/0000:85:02.0/0000:86:00.1", Vendor: "0x8086", Device: "0x10fb",
		Class: "0x020000", Driver: "ixgbe", NumaNode: 0, LocalCPUs: node0}
	h.PCI = []*PCIDev{nvme, ice, i40e, ixA, ixB}

	// NVMe managed queues: the masks keep the offline CPUs; the effective
	// CPU is an online one.
	msi(60, nvme, 0x18, 0, 0, 0, "nvme0q0", all, cpuset.New(2), cpuset.Set{}, 0)
	for i := range 4 {
		mask := cpuset.Range(i*4, i*4+3)
		eff := mask.Intersection(online).First(1)
		q := msi(61+i, nvme, 0x18, 0, 0, i+1, fmt.Sprintf("nvme0q%d", i+1), mask, eff, cpuset.Set{}, i/2)
		q.Managed = true
	}

	// ice: hints follow cpumask_local_spread from node 1; queues 5-7 were
	// moved by hand to node 0 CPUs, queue 0 asks for 8-9 with 9 offline.
	spread := node1.Union(node0)
	ids := spread.IDs()
	msi(120, ice, 0x3b, 0, 0, 0, "ice-0000:3b:00.0:misc", all, cpuset.New(8), cpuset.Set{}, 1)
	iceReq := []cpuset.Set{cpuset.New(8, 9), cpuset.New(10), cpuset.New(11), cpuset.New(12),
		cpuset.New(13), cpuset.New(0), cpuset.New(2), cpuset.New(3)}
	ens1f0 := &NIC{Name: "ens1f0", Dev: ice, Ifindex: 2, Address: "b4:96:91:a2:3c:10", MTU: 1500,
		Operstate: "up", Speed: 25000, Rx: 8, Tx: 8}
	for i, req := range iceReq {
		hint := cpuset.New(ids[i])
		msi(121+i, ice, 0x3b, 0, 0, i+1, fmt.Sprintf("ice-ens1f0-TxRx-%d", i), req, req.Intersection(online).First(1), hint, 1)
		ens1f0.XPS = append(ens1f0.XPS, hint)
	}

	msi(140, i40e, 0x5e, 0, 0, 0, "i40e-0000:5e:00.0:misc", all, cpuset.New(0), cpuset.Set{}, -1)
	i40eReq := []int{14, 15, 4, 6}
	ens2f0 := &NIC{Name: "ens2f0", Dev: i40e, Ifindex: 3, Address: "3c:fd:fe:b1:07:40", MTU: 1500,
		Operstate: "up", Speed: 10000, Rx: 4, Tx: 4}
	for i, c := range i40eReq {
		s := cpuset.New(c)
		msi(141+i, i40e, 0x5e, 0, 0, i+1, fmt.Sprintf("i40e-ens2f0-TxRx-%d", i), s, s, s, -1)
		ens2f0.XPS = append(ens2f0.XPS, s)
	}

	ixNICs := ixgbePair(msi, all, ixA, ixB)
	h.NICs = append([]*NIC{loopback(), ens1f0, ens2f0}, ixNICs...)
	h.sortIRQs()
	h.Readme = offlineReadme
	return h
}

// msiFunc adds an MSI vector of a device to a host being built.
type msiFunc func(n int, d *PCIDev, bus, dev, fn, idx int, name string, aff, eff, hint cpuset.Set, node int) *IRQ

// ixgbePair is offline-2node's two ixgbe ports, eth1 and eth10 (the
// names that tell "eth1-" from "eth10-"). ixgbe names its queue vectors
// <if>-TxRx-N and its link vector <if>.
func ixgbePair(msi msiFunc, all cpuset.Set, ixA, ixB *PCIDev) []*NIC {
	var ixNICs []*NIC
	for k, x := range []struct {
		name string
		dev  *PCIDev
		fn   int
		cpus []int
	}{{"eth1", ixA, 0, []int{0, 2}}, {"eth10", ixB, 1, []int{3, 4}}} {
		base := 150 + k*3
		nic := &NIC{Name: x.name, Dev: x.dev, Ifindex: 4 + k, Address: mac("a0:36:9f", 0x1a2b00+k), MTU: 1500,
			Operstate: "up", Speed: 10000, Rx: 2, Tx: 2}
		for i, c := range x.cpus {
			s := cpuset.New(c)
			msi(base+i, x.dev, 0x86, 0, x.fn, i, fmt.Sprintf("%s-TxRx-%d", x.name, i), s, s, s, 0)
			nic.XPS = append(nic.XPS, s)
		}
		msi(base+2, x.dev, 0x86, 0, x.fn, 2, x.name, all, cpuset.New(0), cpuset.Set{}, 0)
		ixNICs = append(ixNICs, nic)
	}
	return ixNICs
}

// ARM64Host is an 8-CPU, 2-node arm64 server with an AWS ENA NIC and GICv3
// with ITS, on a Linux 5.10 style kernel.
func ARM64Host() *Host {
	h := &Host{
		Name: "arm64", Arch: ArchARM64, Format: Format{SoftnetCols: 13},
		KernelMax: 4095, NohzFull: "(null)", Governor: "schedutil", Clusters: true, NrIRQs: 128,
		Cmdline: "BOOT_IMAGE=/boot/vmlinuz-5.10.0-28-arm64 root=UUID=9b2e61d4-0c3f-4a8e-b5d7-61f0e2c4a913 ro console=tty0 console=ttyS0,115200n8 nvme_core.io_timeout=4294967295",
	}
	for n := range 8 {
		node := n / 4
		h.CPUs = append(h.CPUs, CPU{ID: n, Node: node, Package: node, Core: n, Die: -1, Cluster: n / 2,
			L3: node, NoL3ID: true, Online: true})
	}
	h.Nodes = []Node{
		{ID: 0, Distance: []int{10, 20}, MemTotalKB: 32349120, MemFreeKB: 29811204, HasMemory: true},
		{ID: 1, Distance: []int{20, 10}, MemTotalKB: 32479624, MemFreeKB: 30101876, HasMemory: true},
	}
	all := h.Possible()
	node0 := h.NodeCPUs(0)
	gic := func(n, hw int, trig, name string, aff cpuset.Set, eff int, cnt map[int]uint64) *IRQ {
		return &IRQ{N: n, Chip: "GICv3", HWIRQ: hw, Trigger: trig, Actions: []string{name},
			Affinity: aff, Effective: cpuset.New(eff), Node: 0, Count: cnt}
	}
	timer := gic(11, 30, "Level", "arch_timer", all, 0, counts(all, 0))
	timer.Effective, timer.NoBalance = all, true
	for c := range 8 {
		timer.Count[c] = uint64(328700866 + c*4117)
	}
	pmu := gic(49, 23, "Level", "arm-pmu", all, 0, map[int]uint64{})
	pmu.Effective, pmu.NoBalance = all, true
	h.IRQs = append(h.IRQs, timer,
		gic(14, 37, "Level", "ttyS0", all, 0, one(0, 7815)),
		gic(17, 48, "Edge", "ACPI:Ged", all, 0, map[int]uint64{}),
		pmu,
		&IRQ{N: 50, Chip: "ARMH0061:00", HWIRQ: 3, Trigger: "Edge", Actions: []string{"ACPI:Event"},
			Affinity: all, Effective: cpuset.New(0), Node: 0, Count: map[int]uint64{}})

	nvme := &PCIDev{Path: "pci0000:00/0000:00:04.0", Vendor: "0x1d0f", Device: "0x8061",
		Class: "0x010802", Driver: "nvme", NumaNode: 0, LocalCPUs: node0}
	ena := &PCIDev{Path: "pci0000:00/0000:00:05.0", Vendor: "0x1d0f", Device: "0xec20",
		Class: "0x020000", Driver: "ena", NumaNode: 0, LocalCPUs: node0}
	h.PCI = []*PCIDev{nvme, ena}
	its := func(n int, d *PCIDev, devfn, idx int, name string, aff, eff, hint cpuset.Set, node int, cnt uint64) *IRQ {
		c, _ := eff.Min()
		q := &IRQ{N: n, Chip: "ITS-MSI", HWIRQ: devfn<<11 | idx, Trigger: "Edge", Actions: []string{name},
			Affinity: aff, Effective: eff, Hint: hint, Node: node, Count: one(c, cnt)}
		d.MSI = append(d.MSI, n)
		h.IRQs = append(h.IRQs, q)
		return q
	}
	its(51, nvme, 4<<3, 0, "nvme0q0", all, cpuset.New(3), cpuset.Set{}, 0, 13)
	its(53, nvme, 4<<3, 1, "nvme0q1", node0, cpuset.New(0), cpuset.Set{}, 0, 129969327).Managed = true
	its(54, nvme, 4<<3, 2, "nvme0q2", h.NodeCPUs(1), cpuset.New(4), cpuset.Set{}, 1, 126913956).Managed = true
	its(57, ena, 5<<3, 0, "ena-mgmnt@pci:0000:00:05.0", all, cpuset.New(5), cpuset.Set{}, 0, 32479308)
	eth0 := &NIC{Name: "eth0", Dev: ena, Ifindex: 2, Address: "0a:1b:2c:3d:4e:5f", MTU: 9001,
		Operstate: "up", Speed: 25000, Rx: 8, Tx: 8}
	for i := range 8 {
		s := cpuset.New(i)
		its(58+i, ena, 5<<3, i+1, fmt.Sprintf("eth0-Tx-Rx-%d", i), s, s, s, 0, uint64(1195697946+i*13))
	}
	h.NICs = []*NIC{loopback(), eth0}
	h.sortIRQs()
	h.Readme = arm64Readme
	return h
}

// NPS2 is a 2-socket AMD EPYC-like host in NPS2 mode: 32 CPUs without SMT,
// four NUMA nodes, L3 shared by groups of 4 CPUs (CCX).
func NPS2() *Host {
	h := &Host{
		Name: "nps2", Arch: ArchX86, Format: Format{NewCounts: true, SoftnetCols: 15},
		KernelMax: 8191, NohzFull: "(null)", Governor: "schedutil", Clusters: true, NrIRQs: 1096,
		Cmdline: "BOOT_IMAGE=/vmlinuz-6.12.9-200.fc41.x86_64 root=UUID=c07a3e55-19d2-4b7e-8f64-2a1e9d0c5b38 ro rhgb quiet",
	}
	for n := range 32 {
		h.CPUs = append(h.CPUs, CPU{ID: n, Node: n / 8, Package: n / 16, Core: n % 16, Cluster: n % 16, L3: n / 4, Online: true})
	}
	for i := range 4 {
		h.Nodes = append(h.Nodes, Node{ID: i, Distance: distances(i, 4, 2, 12, 32),
			MemTotalKB: 65712340 + i*1024, MemFreeKB: 61200000 - i*40960, HasMemory: true})
	}
	all := h.Possible()
	node1 := h.NodeCPUs(1)
	h.IRQs = append(h.IRQs,
		&IRQ{N: 0, Chip: "IR-IO-APIC", HWIRQ: 2, Trigger: "edge", Actions: []string{"timer"},
			Affinity: all, Effective: cpuset.New(0), Node: 0, NoBalance: true, Count: one(0, 44)},
		&IRQ{N: 9, Chip: "IR-IO-APIC", HWIRQ: 9, Trigger: "fasteoi", Actions: []string{"acpi"},
			Affinity: all, Effective: cpuset.New(0), Node: 0, Count: map[int]uint64{}},
		&IRQ{N: 25, Chip: "AMD-Vi", HWIRQ: 0, Trigger: "edge", Actions: []string{"AMD-Vi"},
			Affinity: all, Effective: cpuset.New(1), Node: 0, Count: map[int]uint64{}})
	mlx := &PCIDev{Path: "pci0000:40/0000:40:01.1/0000:41:00.0", Vendor: "0x15b3", Device: "0x1017",
		Class: "0x020000", Driver: "mlx5_core", NumaNode: 1, LocalCPUs: node1}
	h.PCI = []*PCIDev{mlx}
	async := msixIRQ(100, "IR-PCI-MSIX", mlx, 0, "mlx5_async0@pci:0000:41:00.0")
	async.Affinity, async.Effective, async.Node, async.Count = node1, cpuset.New(8), 1, one(8, 2210)
	h.IRQs = append(h.IRQs, async)
	mlx.MSI = append(mlx.MSI, 100)
	nic := &NIC{Name: "enp65s0f0", Dev: mlx, Ifindex: 2, Address: "0c:42:a1:7e:22:90", MTU: 1500,
		Operstate: "up", Speed: 100000, Rx: 8, Tx: 8}
	// Queues 0-5 on node 1, queue 6 on CPU 3 (node 0, same package), queue
	// 7 on CPU 20 (node 2, other package). Hints are mlx5's local spread.
	eff := []int{8, 9, 10, 11, 12, 13, 3, 20}
	for i, c := range eff {
		s := cpuset.New(c)
		q := msixIRQ(101+i, "IR-PCI-MSIX", mlx, i+1, fmt.Sprintf("mlx5_comp%d@pci:0000:41:00.0", i))
		q.Affinity, q.Effective, q.Hint, q.Node = s, s, cpuset.New(8+i), 1
		q.Count = one(c, uint64(5512009+i*81233))
		h.IRQs = append(h.IRQs, q)
		mlx.MSI = append(mlx.MSI, 101+i)
		nic.XPS = append(nic.XPS, s)
	}
	h.NICs = []*NIC{loopback(), nic}
	h.sortIRQs()
	h.Readme = nps2Readme
	return h
}

// check panics when the model breaks an invariant the kernel keeps.
func (h *Host) check() {
	online := h.Online()
	seen := map[int]bool{}
	for _, q := range h.IRQs {
		if seen[q.N] {
			panic(fmt.Sprintf("%s: IRQ %d twice", h.Name, q.N))
		}
		seen[q.N] = true
		if q.N >= h.NrIRQs {
			panic(fmt.Sprintf("%s: IRQ %d >= nr_irqs %d", h.Name, q.N, h.NrIRQs))
		}
		if !q.Effective.IsSubsetOf(online) {
			panic(fmt.Sprintf("%s: IRQ %d effective %s not online", h.Name, q.N, q.Effective))
		}
		if !q.Managed && !q.Effective.IsSubsetOf(q.Affinity) {
			panic(fmt.Sprintf("%s: IRQ %d effective outside affinity", h.Name, q.N))
		}
		for c := range q.Count {
			if !online.Contains(c) {
				panic(fmt.Sprintf("%s: IRQ %d counts on offline CPU %d", h.Name, q.N, c))
			}
		}
	}
	if !slices.IsSortedFunc(h.IRQs, func(a, b *IRQ) int { return a.N - b.N }) {
		panic(h.Name + ": IRQs not sorted")
	}
}
