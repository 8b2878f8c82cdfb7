package proc

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Process is a watched process with its threads.
type Process struct {
	PID     int
	Comm    string
	Allowed cpuset.Set // Cpus_allowed_list of the process (its main thread)
	Mems    cpuset.Set // Mems_allowed_list
	Threads []Thread   // every thread, the main one included, by TID
	// NodeKB is the process's memory per node in kB, from numa_maps
	// (pages per node times each mapping's page size); nil when numa_maps
	// is absent or unreadable.
	NodeKB map[int]uint64
	// Net is what its sockets and network namespace show of where its IP
	// traffic goes (ReadNet); never nil.
	Net *Net
}

// Thread is one task of a process.
type Thread struct {
	TID     int
	Comm    string
	Allowed cpuset.Set         // Cpus_allowed_list of the thread
	LastCPU unknown.Value[int] // the CPU it last ran on (stat field 39)
	State   string             // stat field 3: "R", "S", ...
}

// ErrNoProcess is wrapped by errors for a PID or command name that matches
// no process.
var ErrNoProcess = errors.New("no such process")

// ErrZombie is wrapped by the errors for a process that has exited and
// whose parent has not reaped it yet (every thread in state Z or X): it
// runs no more, so it is no process to watch. It wraps ErrNoProcess.
var ErrZombie = fmt.Errorf("%w: it has exited (a zombie until its parent reaps it)", ErrNoProcess)

// gone reports whether err says the process or thread being read has
// exited meanwhile: its folder is gone (ENOENT), or the kernel says so
// (ESRCH).
func gone(err error) bool { return kfile.IsNotExist(err) || errors.Is(err, syscall.ESRCH) }

// exitedMeanwhile reports whether err, from reading a file of the
// process folder base, is the process exiting while it was read: the
// kernel says so (ESRCH), or the file is missing because the folder is
// gone too. A folder that stays without the file (a snapshot that
// captured only the process's comm) is no exit but an error.
func exitedMeanwhile(fsys kfile.FS, base string, err error) bool {
	if errors.Is(err, syscall.ESRCH) {
		return true
	}
	if !kfile.IsNotExist(err) {
		return false
	}
	_, serr := fsys.Stat(base)
	return kfile.IsNotExist(serr)
}

// exited reports whether a stat state is a task that has exited: Z
// (zombie) or X (dead).
func exited(state string) bool { return state == "Z" || state == "X" }

// ErrPartial is wrapped by errors for a process a tree holds only in
// part: its folder and comm are there but not its status (a snapshot
// records every process's comm, and the rest only of those its --pid and
// --comm named).
var ErrPartial = errors.New("not captured in full")

// FindByComm returns the PIDs whose comm is exactly name, ascending.
func FindByComm(fsys kfile.FS, name string) ([]int, error) {
	pids, _, err := FindByCommAny(fsys, name)
	return pids, err
}

// FindByCommAny is FindByComm that also says whether /proc holds any
// process folder at all (a capture may keep none), from the same one
// listing of /proc.
func FindByCommAny(fsys kfile.FS, name string) (pids []int, processes bool, err error) {
	return findCommAny(fsys, func(comm string) bool { return comm == name })
}

// findComm returns the PIDs whose comm match accepts, ascending: the one
// walk of /proc behind FindByComm and FindByCommPrefix.
func findComm(fsys kfile.FS, match func(comm string) bool) ([]int, error) {
	pids, _, err := findCommAny(fsys, match)
	return pids, err
}

// findCommAny is findComm, saying too whether there was any process
// folder.
func findCommAny(fsys kfile.FS, match func(comm string) bool) (pids []int, processes bool, err error) {
	dir := fsys.Path("proc")
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, false, fmt.Errorf("list processes: %w", err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		processes = true
		comm, err := fsys.String(filepath.Join(dir, e.Name(), "comm"))
		if err != nil {
			continue // gone meanwhile, or a tree without it
		}
		if match(comm) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids, processes, nil
}

// Read reads a process and all its threads, and what its sockets show
// (Process.Net).
func Read(fsys kfile.FS, pid int) (*Process, error) {
	p, err := readProcess(fsys, pid)
	if err != nil {
		return nil, err
	}
	newNetReader(fsys).readAll([]*Process{p})
	return p, nil
}

// readProcess reads a process and its threads, not its Net. A process
// that exits while it is read is ErrNoProcess, one that has exited
// (all its threads zombies) ErrZombie; a thread that has exited is left
// out, since it runs no more.
func readProcess(fsys kfile.FS, pid int) (*Process, error) {
	root := fsys.Root()
	base := filepath.Join(root, "proc", strconv.Itoa(pid))
	if _, err := fsys.Stat(base); err != nil {
		if kfile.IsNotExist(err) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
		}
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	p := &Process{PID: pid}
	vanished := func(err error) error {
		return fmt.Errorf("process %d: %w: it exited while read (%v)", pid, ErrNoProcess, err)
	}
	st, err := readStatus(fsys, base+"/status")
	if err != nil && exitedMeanwhile(fsys, base, err) {
		return nil, vanished(err)
	}
	if err != nil {
		if kfile.IsNotExist(err) {
			// The folder is still there (exitedMeanwhile): the tree never
			// held the status.
			return nil, fmt.Errorf("process %d: %s: %w: %w", pid, base, ErrPartial, err)
		}
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	p.Comm, p.Allowed, p.Mems = st.name, st.cpus, st.mems

	tids, err := threadIDs(fsys, base)
	if err != nil && exitedMeanwhile(fsys, base, err) {
		return nil, vanished(err)
	}
	if err != nil {
		return nil, fmt.Errorf("process %d threads: %w", pid, err)
	}
	zombies := 0
	for _, tid := range tids {
		th, err := readThread(fsys, base, tid)
		switch {
		case gone(err):
			continue // the thread exited while we read
		case err != nil:
			return nil, fmt.Errorf("process %d: %w", pid, err)
		case exited(th.State):
			zombies++
			continue
		}
		p.Threads = append(p.Threads, th)
	}
	switch {
	case len(p.Threads) == 0 && zombies > 0:
		return nil, fmt.Errorf("process %d (%s): %w", pid, p.Comm, ErrZombie)
	case len(p.Threads) == 0 && len(tids) > 0:
		return nil, fmt.Errorf("process %d: %w: every thread exited while read", pid, ErrNoProcess)
	}

	if pages, err := readNumaMaps(fsys, base+"/numa_maps"); err == nil {
		p.NodeKB = pages
	} else if !gone(err) && !errors.Is(err, os.ErrPermission) {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	return p, nil
}

func readThread(fsys kfile.FS, base string, tid int) (Thread, error) {
	dir := filepath.Join(base, "task", strconv.Itoa(tid))
	th := Thread{TID: tid, LastCPU: unknown.NotAs[int](unknown.KindFailed, "stat not read")}
	stat, err := readTaskStat(fsys, dir+"/stat")
	if err != nil {
		return th, err
	}
	th.Comm, th.State, th.LastCPU = stat.comm, stat.state, stat.processor
	st, err := readStatus(fsys, dir+"/status")
	if err != nil {
		return th, err
	}
	th.Allowed = st.cpus
	return th, nil
}

type status struct {
	name       string
	cpus, mems cpuset.Set
}

// readStatus reads Name, Cpus_allowed_list and Mems_allowed_list from a
// status file. procfs parses these lists too but turns garbage into CPU 0,
// so irqnuma parses them itself.
func readStatus(fsys kfile.FS, path string) (status, error) {
	var st status
	b, err := fsys.ReadLimit(path, 1<<20)
	if err != nil {
		return st, err
	}
	var haveCPUs bool
	for line := range strings.SplitSeq(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "Name":
			st.name = val
		case "Cpus_allowed_list":
			if st.cpus, err = cpuset.ParseList(val); err != nil {
				return st, fmt.Errorf("read %s: Cpus_allowed_list: %w", path, err)
			}
			haveCPUs = true
		case "Mems_allowed_list":
			if st.mems, err = cpuset.ParseList(val); err != nil {
				return st, fmt.Errorf("read %s: Mems_allowed_list: %w", path, err)
			}
		}
	}
	if !haveCPUs {
		return st, fmt.Errorf("read %s: no Cpus_allowed_list", path)
	}
	return st, nil
}

// readNumaMaps sums a process's memory per node, in kB, from numa_maps:
// each mapping's per-node page counts ("N0=12 N1=4096") times its page
// size ("kernelpagesize_kB=2048" for a huge-page mapping), so huge pages
// weigh what they hold. Every kernel since 2.6.29 prints the page size; a
// line without one is counted in 4 kB pages.
func readNumaMaps(fsys kfile.FS, path string) (map[int]uint64, error) {
	b, err := fsys.Read(path)
	if err != nil {
		return nil, err
	}
	return parseNumaMaps(path, b)
}

// parseNumaMaps sums numa_maps' per-node pages in kB. Every line must be
// a mapping (a hex start address, then its policy); a count or a sum
// that overflows is an error, never a wrapped, wrong total.
func parseNumaMaps(path string, b []byte) (map[int]uint64, error) {
	kb := map[int]uint64{}
	lineNo := 0
	for line := range strings.SplitSeq(string(b), "\n") {
		lineNo++
		if strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Fields(line)
		if _, err := strconv.ParseUint(fields[0], 16, 64); err != nil || len(fields) < 2 {
			return nil, fmt.Errorf("read %s: line %d: %q is not a numa_maps line (address, policy, counts)", path, lineNo, clip([]byte(line)))
		}
		pageKB := uint64(4)
		counts := map[int]uint64{}
		for _, f := range fields[2:] {
			if v, ok := strings.CutPrefix(f, "kernelpagesize_kB="); ok {
				n, err := strconv.ParseUint(v, 10, 64)
				if err != nil || n == 0 || n > 1<<30 {
					return nil, fmt.Errorf("read %s: line %d: bad page size %q", path, lineNo, clip([]byte(f)))
				}
				pageKB = n
				continue
			}
			if len(f) < 4 || f[0] != 'N' || f[1] < '0' || f[1] > '9' {
				continue
			}
			node, count, ok := strings.Cut(f[1:], "=")
			if !ok {
				continue
			}
			n, err1 := strconv.Atoi(node)
			c, err2 := strconv.ParseUint(count, 10, 64)
			if err1 != nil || err2 != nil || n < 0 || n > cpuset.MaxID {
				return nil, fmt.Errorf("read %s: line %d: bad node count %q", path, lineNo, clip([]byte(f)))
			}
			counts[n] += c
		}
		for n, c := range counts {
			hi, v := bits.Mul64(c, pageKB)
			sum, carry := bits.Add64(kb[n], v, 0)
			if hi != 0 || carry != 0 {
				return nil, fmt.Errorf("read %s: line %d: node %d's pages overflow a 64-bit count of kB", path, lineNo, n)
			}
			kb[n] = sum
		}
	}
	var total uint64
	for _, v := range kb {
		var carry uint64
		if total, carry = bits.Add64(total, v, 0); carry != 0 {
			return nil, fmt.Errorf("read %s: the pages of all nodes overflow a 64-bit count of kB", path)
		}
	}
	return kb, nil
}

// Selection names processes: by PID, by exact comm (every process whose
// comm is that) and by control group (every process in it). audit, serve,
// map, watch and snapshot all take one from --pid, --comm and --cgroup.
type Selection struct {
	PIDs  []int
	Comms []string
	// Cgroups are groups as the user wrote them (see CleanCgroupPath).
	Cgroups []string
	// Pods ("NAMESPACE/NAME") and Containers (a runtime's container ID,
	// or a unique prefix of one) are Kubernetes workloads as the user
	// wrote them. proc cannot find them: Resolved holds, for each one's
	// Selector, the containers' groups package kube found, and a pod or
	// container without an entry there is one that was not found.
	Pods, Containers []string
	Resolved         map[Selector]PodResolution
}

// PodResolution is what a --pod or --container resolved to: a group per
// container, or none and why.
type PodResolution struct {
	Groups []PodGroup
	// Source says where the containers and their CPUs were learnt
	// ("the kubelet's pod resources API", "cpu_manager_state (v2)").
	Source string
	// Missing says why nothing was found, when Groups is empty.
	Missing unknown.Reason
}

// PodGroup is one container's control group and what the kubelet says
// about it.
type PodGroup struct {
	// Path is the container's group within its hierarchy, as ReadCgroup
	// takes it.
	Path string
	Pod  PodRef
	// ExclusiveBy is non-empty when the kubelet gave the container
	// exclusive CPUs (Pod.ExclusiveCPUs), and says by what source (the
	// API's cpu_ids, the CPU manager's checkpoint); "" when it gave none
	// or its word on them is unknown.
	ExclusiveBy string
}

// ErrSelection is wrapped by Validate's errors: a selection that names
// nothing real.
var ErrSelection = errors.New("bad selection")

// Validate checks a selection's values before anything is read.
func (s Selection) Validate() error {
	for _, p := range s.PIDs {
		if p <= 0 {
			return fmt.Errorf("%w: --pid %d: not a process id", ErrSelection, p)
		}
	}
	for _, c := range s.Comms {
		if c == "" {
			return fmt.Errorf("%w: --comm: empty name", ErrSelection)
		}
	}
	for _, c := range s.Cgroups {
		if _, err := CleanCgroupPath(c); err != nil {
			return err
		}
	}
	for _, p := range s.Pods {
		if _, _, err := SplitPod(p); err != nil {
			return err
		}
	}
	for _, c := range s.Containers {
		if err := checkContainerID(c); err != nil {
			return err
		}
	}
	return nil
}

// SplitPod splits a --pod value, "NAMESPACE/NAME", each part a
// Kubernetes object name (lower case letters, digits, '-' and '.').
func SplitPod(p string) (namespace, name string, err error) {
	ns, n, ok := strings.Cut(p, "/")
	if !ok || !isObjectName(ns) || !isObjectName(n) {
		return "", "", fmt.Errorf("%w: --pod %q: want NAMESPACE/NAME, each of lower case letters, digits, '-' and '.'", ErrSelection, p)
	}
	return ns, n, nil
}

func isObjectName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' && r != '.' {
			return false
		}
	}
	return true
}

// checkContainerID accepts a container ID as runtimes print it: lower
// case hex, at most 64 digits (a prefix of at least 4).
func checkContainerID(c string) error {
	ok := len(c) >= 4 && len(c) <= 64
	for _, r := range c {
		ok = ok && (r >= '0' && r <= '9' || r >= 'a' && r <= 'f')
	}
	if !ok {
		return fmt.Errorf("%w: --container %q: want a container ID, 4 to 64 lower case hex digits", ErrSelection, c)
	}
	return nil
}

// Any reports whether the selection names processes.
func (s Selection) Any() bool {
	return len(s.PIDs) > 0 || len(s.Comms) > 0 || len(s.Cgroups) > 0 || len(s.Pods) > 0 || len(s.Containers) > 0
}

// SelectorKind is what a Selector names processes by.
type SelectorKind string

// The kinds of Selector.
const (
	SelectorKindPID  SelectorKind = "pid"  // one process by its id
	SelectorKindComm SelectorKind = "comm" // every process with this comm
	// SelectorKindCgroup selects every process in one control group.
	SelectorKindCgroup SelectorKind = "cgroup"
	// SelectorKindPod and SelectorKindContainer select every process in
	// a Kubernetes pod's containers' groups, in one container's group.
	SelectorKindPod       SelectorKind = "pod"
	SelectorKindContainer SelectorKind = "container"
)

// Group reports whether the kind selects control groups (--cgroup,
// --pod, --container): its Match carries the Group.
func (k SelectorKind) Group() bool {
	return k == SelectorKindCgroup || k == SelectorKindPod || k == SelectorKindContainer
}

// Selector is one --pid or --comm of a Selection: its kind and its value
// (PID for SelectorKindPID, Comm for SelectorKindComm, Cgroup, as the
// user wrote it, for SelectorKindCgroup). String is for display.
type Selector struct {
	Kind   SelectorKind
	PID    int
	Comm   string
	Cgroup string
	// Pod is a --pod's "NAMESPACE/NAME" or a --container's ID.
	Pod string
}

// PIDSelector selects the process pid.
func PIDSelector(pid int) Selector { return Selector{Kind: SelectorKindPID, PID: pid} }

// CommSelector selects every process whose comm is comm.
func CommSelector(comm string) Selector { return Selector{Kind: SelectorKindComm, Comm: comm} }

// CgroupSelector selects every process in the control group p.
func CgroupSelector(p string) Selector { return Selector{Kind: SelectorKindCgroup, Cgroup: p} }

// PodSelector selects every process in the pod "NAMESPACE/NAME".
func PodSelector(p string) Selector { return Selector{Kind: SelectorKindPod, Pod: p} }

// ContainerSelector selects every process in the container id.
func ContainerSelector(id string) Selector { return Selector{Kind: SelectorKindContainer, Pod: id} }

// String is the selector as the user gave it: "--pid 4242", "--comm
// iperf3", "--cgroup /pods/a".
func (s Selector) String() string {
	switch s.Kind {
	case SelectorKindCgroup:
		return "--cgroup " + s.Cgroup
	case SelectorKindPod:
		return "--pod " + s.Pod
	case SelectorKindContainer:
		return "--container " + s.Pod
	case SelectorKindPID:
		return "--pid " + strconv.Itoa(s.PID)
	case SelectorKindComm:
		return "--comm " + s.Comm
	}
	return string(s.Kind)
}

// Match is what one selector of a Selection ("--comm iperf3", "--pid
// 4242") found: the PIDs of its processes, none when no such process
// runs, and apart from them those the tree holds only in part
// (ErrPartial), which were not read.
type Match struct {
	Selector Selector
	PIDs     []int
	// Exited are the PIDs it named that have exited but are not reaped
	// yet (zombies), left out of PIDs.
	Exited []int
	// Partial are the PIDs it named that the tree holds only in part
	// (their comm, not their status), left out of PIDs.
	Partial []int
	// Group is what a --cgroup found: the group's processes (PIDs holds
	// those that run), CPUs and memory nodes; nil when the root holds no
	// such group. A --pod matches once per container, each Match with
	// the same Selector and its container's group.
	Group *Cgroup
	// Missing says why a --pod or --container found nothing (Group nil).
	Missing unknown.Reason
}

// Err is the error of a selector that matched no running process:
// wrapping ErrPartial when the tree holds what it named only in part,
// ErrZombie when what it named has exited, else ErrNoProcess; nil when
// it matched one.
func (m Match) Err() error {
	switch {
	case len(m.PIDs) > 0:
		return nil
	case len(m.Partial) > 0:
		return fmt.Errorf("%s: process %d: %w (the tree has its comm but not its status)", m.Selector, m.Partial[0], ErrPartial)
	case len(m.Exited) > 0:
		return fmt.Errorf("%s: %w", m.Selector, ErrZombie)
	case m.Selector.Kind == SelectorKindCgroup && m.Group == nil:
		return fmt.Errorf("%s: %w", m.Selector, ErrNoCgroup)
	case m.Selector.Kind.Group() && m.Group == nil:
		return fmt.Errorf("%s: %w (%s)", m.Selector, ErrNoPod, m.Missing.Detail)
	}
	return fmt.Errorf("%s: %w", m.Selector, ErrNoProcess)
}

// ErrNoPod is wrapped by the error of a --pod or --container that names
// no pod or container the kubelet or the cgroup tree knows.
var ErrNoPod = errors.New("no such pod or container")

// selectPods reads the groups sel.Resolved holds for each --pod and
// --container, marking each with its pod and the kubelet's exclusive
// CPUs; listed says which PIDs /proc lists.
func selectPods(fsys kfile.FS, sel Selection, listed map[int]bool) ([]Match, error) {
	var sels []Selector
	for _, p := range sel.Pods {
		sels = append(sels, PodSelector(p))
	}
	for _, c := range sel.Containers {
		sels = append(sels, ContainerSelector(c))
	}
	var out []Match
	for _, s := range sels {
		res, ok := sel.Resolved[s]
		if !ok {
			res.Missing = unknown.Because(unknown.KindNotRead, "it was not looked up")
		}
		n := len(out)
		for _, pg := range res.Groups {
			g, err := ReadCgroup(fsys, pg.Path)
			if errors.Is(err, ErrNoCgroup) {
				continue
			}
			if err != nil {
				return nil, err
			}
			ref := pg.Pod
			g.Pod = &ref
			if pg.ExclusiveBy != "" {
				g.Exclusive, g.ExclusiveBy = true, pg.ExclusiveBy
			}
			pids := slices.DeleteFunc(slices.Clone(g.PIDs), func(pid int) bool { return !listed[pid] })
			out = append(out, Match{Selector: s, PIDs: pids, Group: g})
		}
		if len(out) == n {
			why := res.Missing
			if why.Detail == "" {
				why = unknown.Because(unknown.KindNotReported, "its containers' groups are gone")
			}
			out = append(out, Match{Selector: s, PIDs: []int{}, Missing: why})
		}
	}
	return out, nil
}

// selectCgroups reads each group and keeps of its processes those /proc
// lists (one listing, however many PIDs a cgroup.procs names).
func selectCgroups(fsys kfile.FS, sel Selection) ([]Match, error) {
	groups := sel.Cgroups
	if len(groups) == 0 && len(sel.Pods) == 0 && len(sel.Containers) == 0 {
		return nil, nil
	}
	ents, err := fsys.ReadDir(fsys.Path("proc"))
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	listed := make(map[int]bool, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			listed[pid] = true
		}
	}
	var out []Match
	for _, c := range groups {
		m := Match{Selector: CgroupSelector(c), PIDs: []int{}}
		g, err := ReadCgroup(fsys, c)
		if err != nil && !errors.Is(err, ErrNoCgroup) {
			return nil, err
		}
		if g != nil {
			m.Group = g
			m.PIDs = slices.DeleteFunc(slices.Clone(g.PIDs), func(pid int) bool { return !listed[pid] })
		}
		out = append(out, m)
	}
	pm, err := selectPods(fsys, sel, listed)
	if err != nil {
		return nil, err
	}
	return append(out, pm...), nil
}

// SelectPresent resolves a selection into the processes that run now,
// and says for each selector what it matched: a PID that does not exist
// or a comm no process has is no error here (a benchmark may not have
// started yet), and a process that exits while it is read is left out.
// A process the tree holds only in part is left out too, and its match
// says so (Match.Partial). Other failures (a /proc that cannot be read)
// are errors.
func SelectPresent(fsys kfile.FS, sel Selection) ([]*Process, []Match, error) {
	var matches []Match
	var want []int
	for _, pid := range sel.PIDs {
		matches = append(matches, Match{Selector: PIDSelector(pid), PIDs: []int{pid}})
		want = append(want, pid)
	}
	for _, c := range sel.Comms {
		found, err := FindByComm(fsys, c)
		if err != nil {
			return nil, nil, err
		}
		matches = append(matches, Match{Selector: CommSelector(c), PIDs: found})
		want = append(want, found...)
	}
	gm, err := selectCgroups(fsys, sel)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range gm {
		want = append(want, m.PIDs...)
	}
	matches = append(matches, gm...)
	slices.Sort(want)
	want = slices.Compact(want)
	var out []*Process
	read, zombie, partial := map[int]bool{}, map[int]bool{}, map[int]bool{}
	for _, pid := range want {
		p, err := readProcess(fsys, pid)
		if errors.Is(err, ErrZombie) {
			zombie[pid] = true
		}
		if errors.Is(err, ErrNoProcess) {
			continue
		}
		if errors.Is(err, ErrPartial) {
			partial[pid] = true
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		read[pid] = true
		out = append(out, p)
	}
	for i := range matches {
		for _, pid := range matches[i].PIDs {
			if zombie[pid] {
				matches[i].Exited = append(matches[i].Exited, pid)
			}
			if partial[pid] {
				matches[i].Partial = append(matches[i].Partial, pid)
			}
		}
		matches[i].PIDs = slices.DeleteFunc(matches[i].PIDs, func(pid int) bool { return !read[pid] })
	}
	newNetReader(fsys).readAll(out)
	return out, matches, nil
}
