package topology

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Node is one NUMA node.
type Node struct {
	ID          int
	CPUs        cpuset.Set           // every CPU of the node, online or not
	MemoryBytes unknown.Value[int64] // MemTotal from meminfo
	Distances   unknown.Value[[]int] // distance row, in the order of the node ids
}

// MaxNodeID is the largest NUMA node id a Linux kernel can have: NODES_SHIFT
// is at most 10 on every architecture.
const MaxNodeID = 1<<10 - 1

// clipID shortens an id quoted from a folder name.
func clipID(s string) string {
	if len(s) > 24 {
		return s[:24] + "..."
	}
	return s
}

// readNodes reads /sys/devices/system/node/node*/. A kernel without NUMA
// support has no such folder: then no node is known and nothing is
// called local or remote.
func (h *Host) readNodes() error {
	dir := h.Path("sys/devices/system/node")
	ents, err := h.fs.ReadDir(dir)
	if err != nil {
		if kfile.IsNotExist(err) {
			h.note("no %s: NUMA nodes unknown", "/sys/devices/system/node")
			for i := range h.CPUs {
				h.CPUs[i].Node = unknown.Not[int](h.absent(dir))
			}
			return nil
		}
		return fmt.Errorf("read nodes: %w", err)
	}
	h.nodeOf = make(map[int]int)
	if h.NodesOnline, err = h.fs.List(dir + "/online"); err != nil {
		if !kfile.IsNotExist(err) {
			return fmt.Errorf("read nodes: %w", err)
		}
		h.NodesOnline = cpuset.Set{}
	}
	var linked []nodeLinks
	for _, e := range ents {
		idStr, ok := strings.CutPrefix(e.Name(), "node")
		if !ok {
			continue
		}
		id, err := strconv.Atoi(idStr)
		if err != nil || id < 0 || strconv.Itoa(id) != idStr {
			continue // not a node folder: "node01" and the like
		}
		if id > MaxNodeID {
			return fmt.Errorf("read nodes: %s/%s: node id %s is past %d, the most NUMA nodes Linux has (NODES_SHIFT 10)",
				dir, e.Name(), clipID(idStr), MaxNodeID)
		}
		base := dir + "/" + e.Name()
		n, err := h.readNode(id, base)
		if err != nil {
			return err
		}
		for c := range n.CPUs.All() {
			if other, dup := h.nodeOf[c]; dup {
				return fmt.Errorf("read nodes: CPU %d is in node %d and node %d", c, other, id)
			}
			h.nodeOf[c] = id
		}
		h.Nodes = append(h.Nodes, n)
		linked = append(linked, nodeLinks{id, base})
	}
	h.placeOfflineCPUs(linked)
	h.checkNodes()
	h.checkDistances(dir)
	return nil
}

// checkDistances keeps the distance rows only when they are a square
// matrix, a distance to each node in the order of their ids, as the
// kernel prints them. A row of another length cannot say which node each
// distance is to, so then every distance is unknown, and a note names the
// files.
func (h *Host) checkDistances(dir string) {
	var bad []string
	for _, n := range h.Nodes {
		if d, ok := n.Distances.Get(); ok && len(d) != len(h.Nodes) {
			bad = append(bad, fmt.Sprintf("%s/node%d/distance has %d", dir, n.ID, len(d)))
		}
	}
	if len(bad) == 0 {
		return
	}
	h.note("%s distances for %d nodes: NUMA distances unknown", strings.Join(bad, ", "), len(h.Nodes))
	why := unknown.Because(unknown.KindMalformed, fmt.Sprintf("%s distances for %d nodes", strings.Join(bad, ", "), len(h.Nodes)))
	for i := range h.Nodes {
		h.Nodes[i].Distances = unknown.Not[[]int](why)
	}
}

// nodeLinks is a node folder, whose cpuN links say where CPUs are.
type nodeLinks struct {
	id  int
	dir string
}

// readNode reads one node folder, base: its CPUs (cpulist, or cpumap),
// memory and distances.
func (h *Host) readNode(id int, base string) (Node, error) {
	n := Node{ID: id}
	var err error
	if n.CPUs, err = h.fs.List(base + "/cpulist"); err != nil {
		if !kfile.IsNotExist(err) {
			return n, err
		}
		if n.CPUs, err = h.fs.Mask(base + "/cpumap"); err != nil {
			return n, fmt.Errorf("node %d: no cpulist or cpumap: %w", id, err)
		}
	}
	if mem, err := readMemTotal(h.fs, base+"/meminfo"); err == nil {
		n.MemoryBytes = unknown.Of(mem)
	} else if kfile.IsNotExist(err) {
		n.MemoryBytes = unknown.Not[int64](h.absent(base + "/meminfo"))
	} else {
		return n, err
	}
	if d, err := h.fs.String(base + "/distance"); err == nil {
		var row []int
		n.Distances = unknown.NotAs[[]int](unknown.KindMalformed, h.rel(base)+"/distance is empty")
		for f := range strings.FieldsSeq(d) {
			v, err := strconv.Atoi(f)
			if err != nil {
				return n, kfile.Malformedf(base+"/distance", "bad distance %q", f)
			}
			if v < 10 || v > 255 {
				// SLIT distances are 10 (local) to 254, 255 unreachable.
				h.note("node %d: distance %d in %s/distance is not a NUMA distance (10-255): distances unknown", id, v, base)
				n.Distances = unknown.NotAs[[]int](unknown.KindMalformed, fmt.Sprintf("%s/distance: %d is not a NUMA distance (10-255)", h.rel(base), v))
				row = nil
				break
			}
			row = append(row, v)
		}
		if row != nil {
			n.Distances = unknown.Of(row)
		}
	} else if kfile.IsNotExist(err) {
		n.Distances = unknown.Not[[]int](h.absent(base + "/distance"))
	} else {
		return n, err
	}
	if !h.Possible.IsEmpty() {
		if extra := n.CPUs.Difference(h.Possible); !extra.IsEmpty() {
			h.note("node %d: %s/cpulist names CPUs %s the host cannot have (possible %s): left out", id, base, extra, h.Possible)
			n.CPUs = n.CPUs.Intersection(h.Possible)
		}
	}
	return n, nil
}

// placeOfflineCPUs gives an offline CPU the node whose folder links it:
// x86 drops an offline CPU from its node's cpulist but keeps the
// nodeN/cpuM link, which still says where the CPU is.
func (h *Host) placeOfflineCPUs(linked []nodeLinks) {
	for _, l := range linked {
		for _, cpu := range h.CPUs {
			c := cpu.ID
			if _, known := h.nodeOf[c]; known || cpu.Online {
				continue
			}
			if _, err := h.fs.Lstat(fmt.Sprintf("%s/cpu%d", l.dir, c)); err == nil {
				h.nodeOf[c] = l.id
			}
		}
	}
}

// checkNodes sorts the nodes, notes what is missing and gives each CPU
// its node.
func (h *Host) checkNodes() {
	slices.SortFunc(h.Nodes, func(a, b Node) int { return a.ID - b.ID })
	if len(h.Nodes) == 0 {
		h.note("no node folders under /sys/devices/system/node: NUMA nodes unknown")
	}
	var have []int
	for _, n := range h.Nodes {
		have = append(have, n.ID)
	}
	kind, why := unknown.KindNotReported, ""
	if missing := h.NodesOnline.Difference(cpuset.New(have...)); !missing.IsEmpty() && len(h.Nodes) > 0 {
		h.note("node/online names node %s, which has no folder here: its CPUs' node is unknown", missing)
		kind, why = unknown.KindNotCaptured, fmt.Sprintf("; node/online names node %s, which has no folder here", missing)
	}
	for i := range h.CPUs {
		c := &h.CPUs[i]
		if n, ok := h.nodeOf[c.ID]; ok {
			c.Node = unknown.Of(n)
		} else {
			c.Node = unknown.NotAs[int](kind, fmt.Sprintf("no node folder lists CPU %d%s", c.ID, why))
		}
	}
}

// readMemTotal reads "Node 1 MemTotal:       131899412 kB".
func readMemTotal(fsys kfile.FS, path string) (int64, error) {
	b, err := fsys.ReadLimit(path, 1<<20)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == "Node" && f[2] == "MemTotal:" {
			v, err := strconv.ParseInt(f[3], 10, 64)
			if err != nil || v < 0 {
				return 0, kfile.Malformedf(path, "bad MemTotal %q", f[3])
			}
			if len(f) >= 5 && f[4] == "kB" {
				v *= 1024
			}
			return v, nil
		}
	}
	return 0, kfile.Malformedf(path, "no MemTotal line")
}

// LocalNode returns the single node whose CPUs contain cpus; unknown
// when cpus is empty, spans nodes or touches CPUs of no known node.
func (h *Host) LocalNode(cpus cpuset.Set) unknown.Value[int] {
	nodes, unk := h.NodesOf(cpus)
	switch {
	case !unk.IsEmpty():
		return unknown.NotAs[int](unknown.KindNotReported, fmt.Sprintf("CPUs %s are in no node's cpulist", unk))
	case nodes.Len() != 1:
		return unknown.NotAs[int](unknown.KindNotApplicable, fmt.Sprintf("CPUs %s are not the CPUs of one node (nodes %s)", listOrNone(cpus), listOrNone(nodes)))
	}
	id, _ := nodes.Min()
	return unknown.Of(id)
}
