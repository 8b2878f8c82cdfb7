package hostgen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
)

// Render returns the tree of h: every file under proc/ and sys/.
func (h *Host) Render() *Tree {
	h.check()
	t := NewTree()
	h.renderNodes(t)
	h.renderCPUs(t)
	h.renderPCI(t)
	h.renderNICs(t)
	h.renderProc(t)
	return t
}

func (h *Host) renderNodes(t *Tree) {
	const dir = "sys/devices/system/node/"
	var all, withCPU, withMem []int
	for _, n := range h.Nodes {
		all = append(all, n.ID)
		if !h.NodeCPUs(n.ID).IsEmpty() {
			withCPU = append(withCPU, n.ID)
		}
		if n.HasMemory {
			withMem = append(withMem, n.ID)
		}
	}
	t.Line(dir+"online", cpuset.New(all...).List())
	t.Line(dir+"possible", cpuset.New(all...).List())
	t.Line(dir+"has_cpu", cpuset.New(withCPU...).List())
	t.Line(dir+"has_memory", cpuset.New(withMem...).List())
	t.Line(dir+"has_normal_memory", cpuset.New(withMem...).List())
	for _, n := range h.Nodes {
		nd := fmt.Sprintf("%snode%d/", dir, n.ID)
		cpus := h.NodeCPUs(n.ID)
		t.Line(nd+"cpulist", cpus.List())
		t.Line(nd+"cpumap", h.mask(cpus))
		d := make([]string, len(n.Distance))
		for i, v := range n.Distance {
			d[i] = strconv.Itoa(v)
		}
		t.Line(nd+"distance", strings.Join(d, " "))
		t.File(nd+"meminfo", nodeMeminfo(n))
		// The nodeN/cpuM links are made when a CPU registers and stay
		// while it is offline.
		for _, c := range h.CPUs {
			if c.Node == n.ID {
				t.Symlink(fmt.Sprintf("%scpu%d", nd, c.ID), fmt.Sprintf("../../cpu/cpu%d", c.ID))
			}
		}
	}
}

func nodeMeminfo(n Node) []byte {
	used := n.MemTotalKB - n.MemFreeKB
	rows := []struct {
		k string
		v int
	}{
		{"MemTotal", n.MemTotalKB}, {"MemFree", n.MemFreeKB}, {"MemUsed", used},
		{"SwapCached", 0}, {"Active", used / 3}, {"Inactive", used / 4},
		{"Active(anon)", used / 12}, {"Inactive(anon)", used / 20},
		{"Active(file)", used/3 - used/12}, {"Inactive(file)", used/4 - used/20},
		{"Unevictable", 0}, {"Mlocked", 0}, {"Dirty", 128}, {"Writeback", 0},
		{"FilePages", used / 2}, {"Mapped", used / 40}, {"AnonPages", used / 8},
		{"Shmem", used / 200}, {"KernelStack", 18240}, {"PageTables", used / 500},
		{"SecPageTables", 0}, {"NFS_Unstable", 0}, {"Bounce", 0}, {"WritebackTmp", 0},
		{"KReclaimable", used / 30}, {"Slab", used / 20}, {"SReclaimable", used / 30},
		{"SUnreclaim", used/20 - used/30}, {"AnonHugePages", 0}, {"ShmemHugePages", 0},
		{"ShmemPmdMapped", 0}, {"FileHugePages", 0}, {"FilePmdMapped", 0},
	}
	var b []byte
	for _, r := range rows {
		b = fmt.Appendf(b, "Node %d %-16s%8d kB\n", n.ID, r.k+":", r.v)
	}
	for _, k := range []string{"HugePages_Total", "HugePages_Free", "HugePages_Surp"} {
		b = fmt.Appendf(b, "Node %d %-16s%5d\n", n.ID, k+":", 0)
	}
	return b
}

func (h *Host) renderCPUs(t *Tree) {
	const dir = "sys/devices/system/cpu/"
	online := h.Online()
	possible := h.Possible()
	t.Line(dir+"online", online.List())
	t.Line(dir+"offline", possible.Difference(online).List())
	t.Line(dir+"possible", possible.List())
	t.Line(dir+"present", possible.List())
	t.Line(dir+"isolated", h.Isolated.List())
	t.Line(dir+"kernel_max", strconv.Itoa(h.KernelMax))
	if h.NohzFull != "" {
		t.Line(dir+"nohz_full", h.NohzFull)
	}
	// Group online CPUs once, so a 512-CPU synthetic host stays linear.
	type key struct{ a, b int }
	cores := map[key][]int{}
	pkgs := map[int][]int{}
	dies := map[key][]int{}
	clusters := map[key][]int{}
	l3s := map[int][]int{}
	for _, c := range h.CPUs {
		if !c.Online {
			continue
		}
		cores[key{c.Package, c.Core}] = append(cores[key{c.Package, c.Core}], c.ID)
		pkgs[c.Package] = append(pkgs[c.Package], c.ID)
		dies[key{c.Package, c.Die}] = append(dies[key{c.Package, c.Die}], c.ID)
		clusters[key{c.Package, c.Cluster}] = append(clusters[key{c.Package, c.Cluster}], c.ID)
		if c.L3 >= 0 {
			l3s[c.L3] = append(l3s[c.L3], c.ID)
		}
	}
	sets := map[string]cpuset.Set{} // memoised sets by kind and key
	set := func(kind string, k key, ids []int) cpuset.Set {
		s := kind + strconv.Itoa(k.a) + "/" + strconv.Itoa(k.b)
		if v, ok := sets[s]; ok {
			return v
		}
		v := cpuset.New(ids...)
		sets[s] = v
		return v
	}
	for _, c := range h.CPUs {
		cd := fmt.Sprintf("%scpu%d/", dir, c.ID)
		t.Symlink(fmt.Sprintf("%snode%d", cd, c.Node), fmt.Sprintf("../../node/node%d", c.Node))
		// x86 cannot take CPU 0 offline, so it has no online file.
		if c.ID != 0 || h.Arch != ArchX86 {
			t.Line(cd+"online", boolDigit(c.Online))
			t.Mode(cd+"online", 0o644)
		}
		if !c.Online {
			continue
		}
		thread := set("core", key{c.Package, c.Core}, cores[key{c.Package, c.Core}])
		pkg := set("pkg", key{c.Package, 0}, pkgs[c.Package])
		die := set("die", key{c.Package, c.Die}, dies[key{c.Package, c.Die}])
		if c.Die < 0 {
			die = cpuset.New(c.ID) // arm64 prints the CPU itself
		}
		td := cd + "topology/"
		t.Line(td+"physical_package_id", strconv.Itoa(c.Package))
		t.Line(td+"core_id", strconv.Itoa(c.Core))
		t.Line(td+"die_id", strconv.Itoa(c.Die))
		h.pair(t, td+"thread_siblings", thread)
		h.pair(t, td+"core_cpus", thread)
		h.pair(t, td+"core_siblings", pkg)
		h.pair(t, td+"package_cpus", pkg)
		h.pair(t, td+"die_cpus", die)
		if h.Clusters {
			t.Line(td+"cluster_id", strconv.Itoa(c.Cluster))
			h.pair(t, td+"cluster_cpus", set("cluster", key{c.Package, c.Cluster}, clusters[key{c.Package, c.Cluster}]))
		}
		if c.L3 >= 0 {
			l3 := set("l3", key{c.L3, 0}, l3s[c.L3])
			cache := cd + "cache/index3/"
			t.Line(cache+"level", "3")
			t.Line(cache+"type", "Unified")
			if !c.NoL3ID {
				t.Line(cache+"id", strconv.Itoa(c.L3))
			}
			h.pair(t, cache+"shared_cpu", l3)
		}
		if h.Governor != "" {
			t.Line(cd+"cpufreq/scaling_governor", h.Governor)
			t.Mode(cd+"cpufreq/scaling_governor", 0o644)
		}
	}
}

// pair writes prefix+"_list" (list form) and, for most files, prefix or
// prefix+"_map" (mask form).
func (h *Host) pair(t *Tree, prefix string, s cpuset.Set) {
	t.Line(prefix+"_list", s.List())
	if strings.HasSuffix(prefix, "shared_cpu") {
		t.Line(prefix+"_map", h.mask(s))
		return
	}
	t.Line(prefix, h.mask(s))
}

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// relTo returns the relative symlink target from the folder holding the
// link (from, a path under sys/) to target (also under sys/).
func relTo(from, target string) string {
	f := strings.Split(from, "/")
	g := strings.Split(target, "/")
	i := 0
	for i < len(f) && i < len(g) && f[i] == g[i] {
		i++
	}
	return strings.Repeat("../", len(f)-i) + strings.Join(g[i:], "/")
}

func (h *Host) renderPCI(t *Tree) {
	for _, d := range h.PCI {
		fd := "sys/devices/" + d.Path
		bdf := d.BDF()
		t.Line(fd+"/vendor", d.Vendor)
		t.Line(fd+"/device", d.Device)
		t.Line(fd+"/class", d.Class)
		t.Line(fd+"/numa_node", strconv.Itoa(d.NumaNode))
		t.Line(fd+"/local_cpulist", d.LocalCPUs.List())
		t.Line(fd+"/local_cpus", h.mask(d.LocalCPUs))
		t.Mode(fd+"/numa_node", 0o644) // root may override a firmware mistake
		drv := "sys/bus/pci/drivers/" + d.Driver
		t.Symlink(fd+"/driver", relTo(fd, drv))
		t.Symlink(drv+"/"+bdf, relTo(drv, fd))
		t.Symlink("sys/bus/pci/devices/"+bdf, relTo("sys/bus/pci/devices", fd))
		kind := d.MSIKind
		if kind == "" {
			kind = "msix"
		}
		for _, n := range d.MSI {
			t.Line(fmt.Sprintf("%s/msi_irqs/%d", fd, n), kind)
		}
		if d.Virtio != "" {
			vd := fd + "/" + d.Virtio
			t.Line(vd+"/vendor", d.Vendor)
			t.Line(vd+"/device", virtioDevice(d.Device))
			vdrv := "sys/bus/virtio/drivers/" + d.VirtioDriver
			t.Symlink(vd+"/driver", relTo(vd, vdrv))
			t.Symlink(vdrv+"/"+d.Virtio, relTo(vdrv, vd))
		}
	}
}

// virtioDevice maps a modern virtio PCI device id (0x1040 + type) to the
// virtio device type the virtioN folder shows.
func virtioDevice(pciDev string) string {
	v, err := strconv.ParseUint(strings.TrimPrefix(pciDev, "0x"), 16, 32)
	if err != nil || v < 0x1040 {
		return "0x0000"
	}
	return fmt.Sprintf("0x%04x", v-0x1040)
}

func (h *Host) renderNICs(t *Tree) {
	for _, n := range h.NICs {
		var nd string
		switch {
		case n.Dev == nil:
			nd = "sys/devices/virtual/net/" + n.Name
		case n.Dev.Virtio != "":
			nd = "sys/devices/" + n.Dev.Path + "/" + n.Dev.Virtio + "/net/" + n.Name
			t.Symlink(nd+"/device", "../../../"+n.Dev.Virtio)
		default:
			nd = "sys/devices/" + n.Dev.Path + "/net/" + n.Name
			t.Symlink(nd+"/device", "../../../"+n.Dev.BDF())
		}
		t.Symlink("sys/class/net/"+n.Name, relTo("sys/class/net", nd))
		t.Line(nd+"/operstate", n.Operstate)
		if !n.NoSpeed {
			t.Line(nd+"/speed", strconv.Itoa(n.Speed))
		}
		t.Line(nd+"/address", n.Address)
		t.Line(nd+"/mtu", strconv.Itoa(n.MTU))
		t.Mode(nd+"/mtu", 0o644)
		t.Line(nd+"/ifindex", strconv.Itoa(n.Ifindex))
		for q := range n.Rx {
			var s cpuset.Set
			if n.RPS != nil {
				s = n.RPS[q]
			}
			p := fmt.Sprintf("%s/queues/rx-%d/", nd, q)
			t.Line(p+"rps_cpus", h.mask(s))
			t.Mode(p+"rps_cpus", 0o644)
			t.Line(p+"rps_flow_cnt", "0")
			t.Mode(p+"rps_flow_cnt", 0o644)
		}
		for q := range n.Tx {
			p := fmt.Sprintf("%s/queues/tx-%d/", nd, q)
			t.Line(p+"tx_maxrate", "0")
			t.Mode(p+"tx_maxrate", 0o644)
			if n.NoXPS {
				continue
			}
			var s cpuset.Set
			if n.XPS != nil {
				s = n.XPS[q]
			}
			t.Line(p+"xps_cpus", h.mask(s))
			t.Mode(p+"xps_cpus", 0o644)
		}
	}
}
