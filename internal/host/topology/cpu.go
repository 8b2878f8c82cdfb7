package topology

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// CPU is one logical CPU (a hardware thread).
type CPU struct {
	ID       int
	Online   bool
	Node     unknown.Value[int]        // the node whose cpulist (or cpuN link) holds it
	Package  unknown.Value[int]        // physical_package_id; unknown for offline CPUs
	Core     unknown.Value[int]        // lowest online CPU of its thread siblings
	Siblings unknown.Value[cpuset.Set] // online thread_siblings_list, itself included
	L3       unknown.Value[int]        // lowest CPU sharing its L3 (cache/index3)
	Isolated bool                      // in Host.IsolatedCPUs: isolcpus= (any flag) or nohz_full=
}

// offlineCPU is why an offline CPU's topology is unknown: the kernel
// removes its topology and cache folders.
var offlineCPU = unknown.Because(unknown.KindNotReported, "the CPU is offline")

// newCPU returns CPU id with its node, package, core, siblings and L3
// unknown for why, as readCPUs starts every CPU.
func newCPU(id int, why unknown.Reason) CPU {
	return CPU{ID: id, Node: unknown.Not[int](why), Package: unknown.Not[int](why), Core: unknown.Not[int](why),
		Siblings: unknown.Not[cpuset.Set](why), L3: unknown.Not[int](why)}
}

// MaxNRCPUs is the most CPUs a Linux kernel can have, CONFIG_NR_CPUS at
// its largest: 8192 on x86_64 (NR_CPUS_RANGE_END with CPUMASK_OFFSTACK,
// arch/x86/Kconfig) and powerpc ("range 2 8192",
// arch/powerpc/platforms/Kconfig.cputype), 4096 on arm64 and sparc64.
// Every CPU id the kernel names, online or possible, is below nr_cpu_ids,
// itself at most NR_CPUS; a tree naming a higher one is not a Linux host.
// It is far below cpuset.MaxID, the bound of any CPU id irqnuma reads: an
// id between the two reads, and is a CPU no host has.
const MaxNRCPUs = 8192

// checkCPUIDs refuses a set of CPUs the kernel cannot have: one id past
// MaxNRCPUs would have irqnuma build a CPU for each id below it.
func checkCPUIDs(what string, cpus cpuset.Set) error {
	if m, ok := cpus.Max(); ok && m >= MaxNRCPUs {
		return fmt.Errorf("%s: CPU %d is past %d: Linux has at most %d CPUs (NR_CPUS)", what, m, MaxNRCPUs-1, MaxNRCPUs)
	}
	return nil
}

// ReadHostCPUs reads which CPUs the host under fsys has, as Read finds
// them (the ids of Host.CPUs: the online ones and those with a cpuN
// folder, within cpu/possible), and nothing else of its topology: for a
// reader told CPU ids by another source (the kubelet's), to bound them
// by the CPUs there are.
func ReadHostCPUs(fsys kfile.FS) (cpuset.Set, error) {
	h := &Host{Root: fsys.Root(), fs: fsys}
	dir := h.Path("sys/devices/system/cpu")
	if err := h.readCPUSets(dir); err != nil {
		return cpuset.Set{}, err
	}
	return h.present(dir), nil
}

// readCPUs reads /sys/devices/system/cpu: which CPUs exist and are online,
// the isolated and nohz_full sets, and for online CPUs their package,
// core and L3 group. Files are read once per core and once per L3 group,
// not once per CPU: siblings share what their first member says.
func (h *Host) readCPUs() error {
	dir := h.Path("sys/devices/system/cpu")
	if err := h.readCPUSets(dir); err != nil {
		return err
	}
	if err := h.readIsolation(dir); err != nil {
		return err
	}
	isolated := h.IsolatedCPUs()
	present := h.present(dir)
	h.CPUs = make([]CPU, 0, present.Len())
	h.cpuIndex = make(map[int]int, present.Len())
	for id := range present.All() {
		h.cpuIndex[id] = len(h.CPUs)
		why := offlineCPU
		if h.Online.Contains(id) {
			why = unknown.Reason{} // read below
		}
		c := newCPU(id, why)
		c.Online, c.Isolated = h.Online.Contains(id), isolated.Contains(id)
		h.CPUs = append(h.CPUs, c)
	}
	for i := range h.CPUs {
		c := &h.CPUs[i]
		if !c.Online || c.Core.Known() {
			continue
		}
		if err := h.readCore(dir, c.ID); err != nil {
			return err
		}
	}
	for i := range h.CPUs {
		c := &h.CPUs[i]
		if !c.Online || c.L3.Known() {
			continue
		}
		if err := h.readL3(dir, c.ID); err != nil {
			return err
		}
	}
	return nil
}

// present is the CPUs the host has: online ones and those with a cpuN
// folder (present, maybe offline). possible may name far more (a VM's
// hot-plug slots, or any count a tree claims), which are no CPUs.
func (h *Host) present(dir string) cpuset.Set {
	return h.Online.Union(h.listCPUDirs(dir).Intersection(h.Possible))
}

// readCPUSets reads the online and possible CPUs of dir
// (/sys/devices/system/cpu), each at most MaxNRCPUs, online within
// possible; without the files, what the cpuN folders and /proc/interrupts
// say.
func (h *Host) readCPUSets(dir string) error {
	var err error
	onlineErr := error(nil)
	if h.Online, err = h.fs.List(dir + "/online"); err != nil {
		if !kfile.IsNotExist(err) {
			return fmt.Errorf("online CPUs: %w", err)
		}
		onlineErr = err
	} else if err := checkCPUIDs("read "+dir+"/online", h.Online); err != nil {
		return err
	}
	if h.Possible, err = h.fs.List(dir + "/possible"); err != nil {
		if !kfile.IsNotExist(err) {
			return err
		}
		h.Possible = h.Online.Union(h.listCPUDirs(dir))
	} else if err := checkCPUIDs("read "+dir+"/possible", h.Possible); err != nil {
		return err
	}
	if onlineErr != nil {
		if err := h.onlineWithoutFile(dir, onlineErr); err != nil {
			return err
		}
		if err := checkCPUIDs("online CPUs", h.Online); err != nil {
			return err
		}
	}
	if !h.Online.IsSubsetOf(h.Possible) {
		return fmt.Errorf("%s/online (%s) names CPUs outside possible (%s)", dir, h.Online, h.Possible)
	}
	return nil
}

// readCore reads cpuN/topology and fills in the core of id and of every
// sibling listed with it.
func (h *Host) readCore(dir string, id int) error {
	base := fmt.Sprintf("%s/cpu%d/topology/", dir, id)
	sib, err := h.fs.List(base + "thread_siblings_list")
	if err != nil {
		if kfile.IsNotExist(err) {
			// Some captures and old kernels lack topology: the CPU is its
			// own core, package unknown.
			sib = cpuset.New(id)
		} else {
			return err
		}
	}
	if !sib.Contains(id) {
		return fmt.Errorf("read %sthread_siblings_list: %s does not contain CPU %d", base, sib, id)
	}
	var pkg unknown.Value[int]
	if v, err := h.fs.Int(base + "physical_package_id"); err == nil {
		pkg = unknown.Of(v)
	} else if kfile.IsNotExist(err) {
		pkg = unknown.Not[int](h.absent(base + "physical_package_id"))
	} else {
		return err
	}
	core, _ := sib.Min()
	online := sib.Intersection(h.Online) // one set the siblings share
	for s := range online.All() {
		i, ok := h.cpuIndex[s]
		if !ok {
			continue
		}
		h.CPUs[i].Core = unknown.Of(core)
		h.CPUs[i].Siblings = unknown.Of(online)
		h.CPUs[i].Package = pkg
	}
	return nil
}

// readL3 reads cpuN/cache/index3 and fills in the L3 group of every CPU
// that shares it. A missing index3 leaves L3 unknown.
func (h *Host) readL3(dir string, id int) error {
	base := fmt.Sprintf("%s/cpu%d/cache/index3/", dir, id)
	c := &h.CPUs[h.cpuIndex[id]]
	shared, err := h.fs.List(base + "shared_cpu_list")
	if err != nil {
		if kfile.IsNotExist(err) {
			c.L3 = unknown.Not[int](h.absent(base + "shared_cpu_list"))
			return nil
		}
		return err
	}
	if lvl, err := h.fs.Int(base + "level"); err == nil && lvl != 3 {
		c.L3 = unknown.NotAs[int](unknown.KindNotReported, fmt.Sprintf("%slevel is %d, not 3", base, lvl))
		return nil
	}
	if !shared.Contains(id) {
		return fmt.Errorf("read %sshared_cpu_list: %s does not contain CPU %d", base, shared, id)
	}
	group, _ := shared.Min()
	for s := range shared.All() {
		if i, ok := h.cpuIndex[s]; ok && h.CPUs[i].Online {
			h.CPUs[i].L3 = unknown.Of(group)
		}
	}
	return nil
}

// listCPUDirs returns the ids of the cpuN folders, for trees without
// cpu/possible. A cpuN past MaxNRCPUs is no CPU folder, as cpufreq is not.
// The folder is listed once per reading of the host; the readers that
// ask again are given that listing.
func (h *Host) listCPUDirs(dir string) cpuset.Set {
	if h.cpuDirs != nil && h.cpuDirs.dir == dir {
		return h.cpuDirs.ids
	}
	ids := h.readCPUDirs(dir)
	h.cpuDirs = &cpuDirs{dir: dir, ids: ids}
	return ids
}

// cpuDirs is a listing of the cpuN folders of dir (listCPUDirs).
type cpuDirs struct {
	dir string
	ids cpuset.Set
}

// readCPUDirs lists the cpuN folders of dir.
func (h *Host) readCPUDirs(dir string) cpuset.Set {
	ents, err := h.fs.ReadDir(dir)
	if err != nil {
		return cpuset.Set{}
	}
	var ids []int
	for _, e := range ents {
		s, ok := strings.CutPrefix(e.Name(), "cpu")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(s); err == nil && n >= 0 && n < MaxNRCPUs {
			ids = append(ids, n)
		}
	}
	return cpuset.New(ids...)
}

// optionalList reads a CPU list that may be absent (the empty set).
func (h *Host) optionalList(path string) (cpuset.Set, error) {
	set, _, err := h.presentList(path)
	return set, err
}

// presentList reads a CPU list that may be absent (present false), empty,
// or "(null)" (what nohz_full says when the kernel was built with it but
// not booted with it).
func (h *Host) presentList(path string) (set cpuset.Set, present bool, err error) {
	s, err := h.fs.String(path)
	if err != nil {
		if kfile.IsNotExist(err) {
			return cpuset.Set{}, false, nil
		}
		return cpuset.Set{}, false, err
	}
	s = strings.TrimSpace(s)
	if s == "(null)" {
		return cpuset.Set{}, true, nil
	}
	if set, err = cpuset.ParseList(s); err != nil {
		return cpuset.Set{}, true, kfile.Malformed(path, err)
	}
	return set, true, nil
}

// CoreOf returns the core of cpu, named by the lowest online CPU of its
// thread siblings (never by core_id, which repeats across packages). A
// CPU whose siblings are unknown (offline, a tree without its topology
// folder, or no CPU of this host) is a core of its own: cpu itself. It
// is the one place irqnuma decides which core a CPU belongs to.
func (h *Host) CoreOf(cpu int) int {
	if c, ok := h.CPU(cpu); ok && c.Online {
		if core, ok := c.Core.Get(); ok {
			return core
		}
	}
	return cpu
}

// Cores returns the distinct cores (CoreOf) of the online CPUs in cpus,
// in order of their first CPU in cpus.
func (h *Host) Cores(cpus cpuset.Set) []int {
	var cores []int
	seen := map[int]bool{}
	for id := range cpus.All() {
		if c, ok := h.CPU(id); !ok || !c.Online {
			continue
		}
		core := h.CoreOf(id)
		if !seen[core] {
			seen[core] = true
			cores = append(cores, core)
		}
	}
	return cores
}

// SiblingsOf returns the online SMT siblings of every CPU in cpus,
// including the CPUs themselves.
func (h *Host) SiblingsOf(cpus cpuset.Set) cpuset.Set {
	out := cpus
	for id := range cpus.All() {
		if c, ok := h.CPU(id); ok {
			out = out.Union(c.Siblings.Or(cpuset.Set{}))
		}
	}
	return out
}

// IsolatedCPUs returns every CPU kept for other work than the kernel's
// housekeeping: isolcpus= (any flag, managed_irq included) or nohz_full=,
// from sysfs or the command line. No IRQ or benchmark is placed there
// unless the user names it.
func (h *Host) IsolatedCPUs() cpuset.Set { return h.Isolated.Union(h.NohzFull).Union(h.ManagedIRQ) }

// Governor returns the cpufreq scaling governor of a CPU, or "" when the
// tree has none (no cpufreq driver, or a capture without it).
func (h *Host) Governor(cpu int) (string, error) {
	s, err := h.fs.String(h.Path(fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", cpu)))
	if err != nil {
		if kfile.IsNotExist(err) {
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(s), nil
}

// onlineWithoutFile works out the online CPUs of a tree without
// cpu/online. Captures may lack it; the per-CPU online files and
// cpu/offline still say it. A tree without /sys at all (a capture of
// /proc only) still has the header of /proc/interrupts, which names the
// CPUs online when the kernel printed it. A tree with neither is not a
// host: the error is notExist's.
func (h *Host) onlineWithoutFile(dir string, notExist error) error {
	online, err := h.onlineFromCPUDirs(dir)
	if err != nil {
		return err
	}
	if !online.IsEmpty() {
		h.Online = online
		h.note("no /sys/devices/system/cpu/online: online CPUs taken from cpu/offline and cpuN/online")
		return nil
	}
	in, err := interrupts.Read(h.fs)
	switch {
	case kfile.IsNotExist(err):
		return fmt.Errorf("online CPUs: %w", notExist)
	case err != nil:
		return fmt.Errorf("online CPUs: no %s, and %w", dir+"/online", err)
	}
	h.Online = cpuset.New(in.CPUs...)
	h.Possible = h.Possible.Union(h.Online)
	h.note("no /sys/devices/system/cpu: online CPUs %s taken from the header of /proc/interrupts", h.Online)
	return nil
}

// onlineFromCPUDirs works out the online CPUs without cpu/online: every
// possible CPU with a cpuN folder that cpu/offline does not name and whose
// cpuN/online (absent
// for a CPU that cannot be offlined, such as cpu0 on x86) is not "0".
func (h *Host) onlineFromCPUDirs(dir string) (cpuset.Set, error) {
	offline, err := h.optionalList(dir + "/offline")
	if err != nil {
		return cpuset.Set{}, err
	}
	var ids []int
	for id := range h.listCPUDirs(dir).Intersection(h.Possible).Difference(offline).All() {
		s, err := h.fs.String(fmt.Sprintf("%s/cpu%d/online", dir, id))
		switch {
		case err == nil && strings.TrimSpace(s) == "0":
			continue
		case err == nil && strings.TrimSpace(s) != "1":
			return cpuset.Set{}, fmt.Errorf("read %s/cpu%d/online: %q is not 0 or 1", dir, id, s)
		case err != nil && !kfile.IsNotExist(err):
			return cpuset.Set{}, err
		}
		ids = append(ids, id)
	}
	return cpuset.New(ids...), nil
}

// absent is why a fact is unknown when its file, path (the root's, as
// Host.Path gives it), is missing: a captured tree did not keep it, or
// the running kernel has no such file.
func (h *Host) absent(path string) unknown.Reason { return absent(h.fs, path) }

// absent is Host.absent for a reader given only the FS.
func absent(fsys kfile.FS, path string) unknown.Reason {
	rel := relPath(fsys.Root(), path)
	if fsys.Live() {
		return unknown.Because(unknown.KindKernel, "no /"+rel)
	}
	return unknown.Because(unknown.KindNotCaptured, "no "+rel)
}

// rel is path inside the host tree, without the root: "sys/class/net/eth0/speed".
func (h *Host) rel(path string) string { return relPath(h.Root, path) }

func relPath(root, path string) string {
	if root = filepath.Clean(root); root != "/" {
		path = strings.TrimPrefix(filepath.Clean(path), root)
	}
	return strings.TrimPrefix(path, "/")
}

// readFailed is why a fact is unknown when reading its file failed with
// err (not a missing file, nor one out of the kernel's format): refused,
// not supported by the driver, EINVAL (what a netdev's speed gives with
// the link down), or another failure, with the error as detail.
func readFailed(err error) unknown.Reason {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return unknown.Because(unknown.KindPermission, err.Error())
	case errors.Is(err, syscall.EOPNOTSUPP):
		return unknown.Because(unknown.KindDriver, err.Error())
	case errors.Is(err, syscall.EINVAL):
		return unknown.Because(unknown.KindNotReported, err.Error())
	}
	return unknown.Because(unknown.KindFailed, err.Error())
}
