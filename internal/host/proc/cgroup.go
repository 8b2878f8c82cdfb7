package proc

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// CgroupVersion is the cgroup hierarchy a group was read from.
type CgroupVersion string

// The cgroup versions.
const (
	CgroupVersionV1 CgroupVersion = "v1" // the v1 cpuset hierarchy, /sys/fs/cgroup/cpuset
	CgroupVersionV2 CgroupVersion = "v2" // the unified hierarchy
)

// Partition is a v2 cpuset's cpuset.cpus.partition: whether its CPUs are
// a partition of their own (the kernel's cgroup-v2.rst).
type Partition string

// String is the partition type as the file writes it.
func (p Partition) String() string { return string(p) }

// The partition types. A group without the file (the root group, a v1
// group, a group without the cpuset controller) has none: its Partition
// is unknown.
const (
	PartitionMember   Partition = "member"   // shares its parent's partition
	PartitionRoot     Partition = "root"     // a partition root: its CPUs are its own
	PartitionIsolated Partition = "isolated" // a partition root without load balancing
)

// Cgroup is one control group as its files say: its processes, the CPUs
// and memory nodes it may use, and whether its CPUs are its alone.
type Cgroup struct {
	// Path is the group within its hierarchy, "/" first, as
	// /proc/PID/cgroup writes it.
	Path    string
	Version CgroupVersion
	// Dir is the group's folder, the root joined with "sys/fs/cgroup/…".
	Dir string
	// PIDs are the processes in the group itself (cgroup.procs, sorted),
	// not those of its children.
	PIDs []int
	// CPUs and Mems are cpuset.cpus.effective and cpuset.mems.effective
	// (v1: cpuset.effective_cpus, cpuset.effective_mems); unknown when
	// the group has no cpuset files, the reason's detail saying so in
	// words.
	CPUs, Mems unknown.Value[cpuset.Set]
	// Partition is cpuset.cpus.partition (v2 only; unknown without the
	// file); PartitionInvalid the kernel's "invalid" mark on it, with
	// the reason the kernel gives for it in PartitionInvalidReason ("" when
	// it gives none): facts the file states, not an unknown.
	Partition              unknown.Value[Partition]
	PartitionInvalid       bool
	PartitionInvalidReason string
	// Exclusive says the group's CPUs are its alone: a valid partition
	// root (v2), cpuset.cpu_exclusive 1 (v1), the kubelet's CPU
	// manager; ExclusiveBy says which. For a pod's container whose
	// exclusive CPUs the kubelet's word leaves unknown
	// (Pod.ExclusiveCPUs), Exclusive says only what the group's own
	// files do.
	Exclusive   bool
	ExclusiveBy string
	// Pod is the Kubernetes pod and container the group is, when the
	// selection came through one (--pod, --container); nil for a group
	// named by --cgroup alone.
	Pod *PodRef

	// NumaStat is where the group's memory sits, per type and node
	// (memory.numa_stat, v2 only); unknown with why in words in its
	// reason's detail.
	NumaStat unknown.Value[NumaStat]
}

// PodRef names a Kubernetes container: its pod's namespace, name and
// UID, and the container's name and runtime ID (each "" when the source
// that found it does not say it).
type PodRef struct {
	Namespace, Name, UID   string
	Container, ContainerID string
	// Devices are the devices the kubelet's pod resources API says the
	// container was given (nil when the API did not answer).
	Devices []PodDevice
	// IRQBalancing is what the pod asked CRI-O of IRQs on the
	// container's CPUs (irq-load-balancing.crio.io), as the container's
	// OCI config in CRI-O's storage holds it; not applicable for a
	// container another runtime runs, unknown when CRI-O's config of it
	// is not found or is malformed (the reason's detail says so in
	// words, naming the file).
	IRQBalancing unknown.Value[IRQBalancing]
	// ExclusiveCPUs are the CPUs the kubelet gave the container
	// exclusively (its pod resources API's cpu_ids, its CPU manager's
	// checkpoint), empty when it runs on the shared pool or the kubelet
	// says nothing of it; unknown when the kubelet's word on them is
	// malformed (a CPU id past cpuset.MaxID) or names CPUs the host does
	// not have, the reason's detail saying so in words.
	ExclusiveCPUs unknown.Value[cpuset.Set]
}

// KubeletCPUs are the CPUs the kubelet gave the group exclusively, as
// PodRef.ExclusiveCPUs: none for a group no pod's container is.
func (g *Cgroup) KubeletCPUs() unknown.Value[cpuset.Set] {
	if g.Pod == nil {
		return unknown.Of(cpuset.Set{})
	}
	return g.Pod.ExclusiveCPUs
}

// IRQBalancing is a container's irq-load-balancing.crio.io, as CRI-O
// acts on it: when Off, CRI-O takes the container's CPUs out of every
// IRQ's smp_affinity (and irqbalance's banned CPUs) while it runs, but
// for Housekeeping the first CPU's thread siblings, which keep theirs.
type IRQBalancing struct {
	// Value is the annotation's value ("disable", "housekeeping", the
	// deprecated "true", or another CRI-O ignores); Key the annotation
	// it was read from (the container's own, KEY/CONTAINER, before the
	// pod's); both "" when the pod sets none.
	Value, Key string
	// Off: CRI-O keeps IRQs off the CPUs (disable, true, housekeeping).
	Off          bool
	Housekeeping bool
	// CPUs are the container's CPUs as CRI-O took them
	// (linux.resources.cpu.cpus); unknown when the config has none.
	CPUs unknown.Value[cpuset.Set]
	// From is the config file read, as messages name it; File the same
	// under the root, as a snapshot records it.
	From, File string
}

// PodDevice is one resource's devices given to a container, as the
// device plugin reports them: their IDs (a VF's PCI address for SR-IOV
// plugins) and NUMA nodes (none when the plugin gives no topology).
type PodDevice struct {
	Resource string
	IDs      []string
	Nodes    []int
}

// ErrNoCgroup is wrapped by ReadCgroup's error for a group the root does
// not hold.
var ErrNoCgroup = errors.New("no such cgroup")

// cgroupMount is where a hierarchy is mounted under the root.
const (
	cgroupMount    = "sys/fs/cgroup"
	cgroupV1Cpuset = "sys/fs/cgroup/cpuset"
	cgroupHybrid   = "sys/fs/cgroup/unified"
)

// CleanCgroupPath turns what a user wrote into a group's path within its
// hierarchy: "/a/b", "a/b" and "/sys/fs/cgroup/a/b" (with "cpuset/" or
// "unified/" after it on a v1 host) are all "/a/b". A ".." is an error.
func CleanCgroupPath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("%w: --cgroup: empty path", ErrSelection)
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".." {
			return "", fmt.Errorf("%w: --cgroup %s: \"..\" is not a group", ErrSelection, p)
		}
	}
	c := path.Clean("/" + p)
	for _, m := range []string{"/" + cgroupV1Cpuset, "/" + cgroupHybrid, "/" + cgroupMount} {
		if c == m {
			return "/", nil
		}
		if rest, ok := strings.CutPrefix(c, m+"/"); ok {
			return "/" + rest, nil
		}
	}
	return c, nil
}

// ReadCgroup reads the group p (a path within its hierarchy, see
// CleanCgroupPath) under fsys. A unified hierarchy on /sys/fs/cgroup is
// v2; otherwise the v1 cpuset hierarchy is read, and a group only the
// hybrid unified hierarchy (/sys/fs/cgroup/unified) holds is read there,
// its CPUs unknown. A group that is nowhere wraps ErrNoCgroup.
func ReadCgroup(fsys kfile.FS, p string) (*Cgroup, error) {
	p, err := CleanCgroupPath(p)
	if err != nil {
		return nil, err
	}
	rel := strings.TrimPrefix(p, "/")
	if fileExists(fsys, fsys.Path(cgroupMount, "cgroup.controllers")) {
		return readGroup(fsys, p, CgroupVersionV2, fsys.Path(cgroupMount, rel))
	}
	if dir := fsys.Path(cgroupV1Cpuset, rel); fileExists(fsys, path.Join(dir, "cgroup.procs")) {
		return readGroup(fsys, p, CgroupVersionV1, dir)
	}
	if fileExists(fsys, fsys.Path(cgroupHybrid, "cgroup.controllers")) {
		return readGroup(fsys, p, CgroupVersionV2, fsys.Path(cgroupHybrid, rel))
	}
	return nil, fmt.Errorf("%s: %w (%s holds neither a cgroup v2 hierarchy nor a v1 cpuset one)", p, ErrNoCgroup, fsys.Path(cgroupMount))
}

func fileExists(fsys kfile.FS, p string) bool {
	_, err := fsys.Stat(p)
	return err == nil
}

// readGroup reads the group in dir: its processes, then its cpuset files.
func readGroup(fsys kfile.FS, p string, v CgroupVersion, dir string) (*Cgroup, error) {
	g := &Cgroup{Path: p, Version: v, Dir: dir,
		Partition: unknown.NotAs[Partition](unknown.KindNotApplicable, "no cpuset.cpus.partition (the root group, a v1 group, or the cpuset controller is not enabled for this group)")}
	b, err := fsys.Read(path.Join(dir, "cgroup.procs"))
	if kfile.IsNotExist(err) {
		return nil, fmt.Errorf("%s: %w (no %s)", p, ErrNoCgroup, path.Join(dir, "cgroup.procs"))
	}
	if err != nil {
		return nil, err
	}
	if g.PIDs, err = parseCgroupProcs(string(b)); err != nil {
		return nil, kfile.Malformed(path.Join(dir, "cgroup.procs"), err)
	}
	cpus, mems, excl := "cpuset.cpus.effective", "cpuset.mems.effective", ""
	if v == CgroupVersionV1 {
		cpus, mems, excl = "cpuset.effective_cpus", "cpuset.effective_mems", "cpuset.cpu_exclusive"
	}
	if g.CPUs, err = readSet(fsys, path.Join(dir, cpus)); err != nil {
		return nil, err
	}
	if g.Mems, err = readSet(fsys, path.Join(dir, mems)); err != nil {
		return nil, err
	}
	readNumaStat(fsys, g)
	if v == CgroupVersionV1 {
		n, err := fsys.Int(path.Join(dir, excl))
		if err != nil && !kfile.IsNotExist(err) {
			return nil, err
		}
		g.Exclusive = n == 1
		if g.Exclusive {
			g.ExclusiveBy = excl + " 1"
		}
		return g, nil
	}
	return g, readPartition(fsys, g)
}

// readSet reads a list file; unknown when it is absent.
func readSet(fsys kfile.FS, p string) (unknown.Value[cpuset.Set], error) {
	s, err := fsys.List(p)
	if kfile.IsNotExist(err) {
		return unknown.NotAs[cpuset.Set](unknown.KindNotReported, "no "+p+" (the cpuset controller is not enabled for this group)"), nil
	}
	if err != nil {
		return unknown.Value[cpuset.Set]{}, err
	}
	return unknown.Of(s), nil
}

// readPartition reads a v2 group's cpuset.cpus.partition, absent in the
// root group and where the cpuset controller is not enabled.
func readPartition(fsys kfile.FS, g *Cgroup) error {
	f := path.Join(g.Dir, "cpuset.cpus.partition")
	s, err := fsys.String(f)
	if kfile.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	part, invalid, why, err := parsePartition(s)
	if err != nil {
		return kfile.Malformed(f, err)
	}
	g.Partition, g.PartitionInvalid, g.PartitionInvalidReason = unknown.Of(part), invalid, why
	g.Exclusive = !g.PartitionInvalid && (part == PartitionRoot || part == PartitionIsolated)
	if g.Exclusive {
		g.ExclusiveBy = "cpuset.cpus.partition " + string(part)
	}
	return nil
}

// parseCgroupProcs parses cgroup.procs (or cgroup.threads): one decimal
// id a line, newline-terminated, possibly none. The ids come back sorted
// without repeats (v1's file may repeat one).
func parseCgroupProcs(s string) ([]int, error) {
	pids := []int{}
	if s == "" {
		return pids, nil
	}
	if !strings.HasSuffix(s, "\n") {
		return nil, errors.New("last line not terminated by a newline")
	}
	for i, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		pid, err := strconv.Atoi(line)
		if err != nil || pid <= 0 || line[0] == '+' || (len(line) > 1 && line[0] == '0') {
			return nil, fmt.Errorf("line %d: %q is not a process id", i+1, clipText(line))
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return slices.Compact(pids), nil
}

// parsePartition parses cpuset.cpus.partition without its newline:
// "member", "root" or "isolated", and an invalid partition as the kernel
// writes it, "root invalid" or "isolated invalid", since 6.1 followed by
// " (reason)".
func parsePartition(s string) (p Partition, invalid bool, why string, err error) {
	word, rest, _ := strings.Cut(s, " ")
	switch Partition(word) {
	case PartitionMember, PartitionRoot, PartitionIsolated:
		p = Partition(word)
	default:
		return "", false, "", fmt.Errorf("%q is not a partition type (member, root, isolated)", clipText(s))
	}
	if rest == "" && !strings.Contains(s, " ") {
		return p, false, "", nil
	}
	after, ok := strings.CutPrefix(rest, "invalid")
	if !ok || p == PartitionMember {
		return "", false, "", fmt.Errorf("%q: only root or isolated may be followed by \"invalid\"", clipText(s))
	}
	if after == "" {
		return p, true, "", nil
	}
	inner, ok := strings.CutPrefix(after, " (")
	if !ok || !strings.HasSuffix(inner, ")") || len(inner) == 1 {
		return "", false, "", fmt.Errorf("%q: the reason after \"invalid\" is not in parentheses", clipText(s))
	}
	return p, true, strings.TrimSuffix(inner, ")"), nil
}

// CgroupEntry is one line of /proc/PID/cgroup: the hierarchy's id, its
// controllers (none for the v2 line "0::/path"; "name=systemd" names a
// hierarchy without one) and the group's path in it.
type CgroupEntry struct {
	Hierarchy   int
	Controllers []string
	Path        string
}

// parseProcCgroup parses /proc/PID/cgroup as cgroups(7) describes it:
// "hierarchy-ID:controller-list:cgroup-path" a line.
func parseProcCgroup(s string) ([]CgroupEntry, error) {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return nil, errors.New("last line not terminated by a newline")
	}
	var out []CgroupEntry
	for i, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if line == "" && s == "" {
			break
		}
		id, rest, ok1 := strings.Cut(line, ":")
		ctl, p, ok2 := strings.Cut(rest, ":")
		h, err := strconv.Atoi(id)
		if !ok1 || !ok2 || err != nil || h < 0 || !strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("line %d: %q is not ID:CONTROLLERS:/PATH", i+1, clipText(line))
		}
		e := CgroupEntry{Hierarchy: h, Path: p}
		if ctl != "" {
			e.Controllers = strings.Split(ctl, ",")
		}
		if h == 0 && ctl != "" {
			return nil, fmt.Errorf("line %d: %q: hierarchy 0 (v2) has no controller list", i+1, clipText(line))
		}
		out = append(out, e)
	}
	return out, nil
}

// cgroupOf reads /proc/PID/cgroup and returns the process's group where
// ReadCgroup would look for it: the v2 line on a unified host, else the
// v1 cpuset hierarchy's line, else the v2 line of a hybrid host.
func cgroupOf(fsys kfile.FS, pid int) (string, error) {
	f := fsys.Path("proc", strconv.Itoa(pid), "cgroup")
	b, err := fsys.ReadLimit(f, 1<<20)
	if err != nil {
		return "", err
	}
	ents, err := parseProcCgroup(string(b))
	if err != nil {
		return "", kfile.Malformed(f, err)
	}
	var v1, v2 string
	for _, e := range ents {
		if e.Hierarchy == 0 {
			v2 = e.Path
		}
		if slices.Contains(e.Controllers, "cpuset") {
			v1 = e.Path
		}
	}
	switch {
	case v2 != "" && fileExists(fsys, fsys.Path(cgroupMount, "cgroup.controllers")):
		return v2, nil
	case v1 != "":
		return v1, nil
	case v2 != "":
		return v2, nil
	}
	return "", kfile.Malformedf(f, "no cgroup v2 line and no cpuset line")
}

func clipText(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
