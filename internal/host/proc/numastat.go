package proc

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// maxNumaStat bounds memory.numa_stat: about forty lines of at most
// 1,024 nodes (the kernel's MAX_NUMNODES, 1 << NODES_SHIFT, at most 10).
const maxNumaStat = 4 << 20

// maxNode is the highest node id a kernel can have (MAX_NUMNODES - 1).
const maxNode = 1<<10 - 1

// NumaStat is a cgroup v2 group's memory.numa_stat: each type of memory
// ("anon", "file", "shmem", …) and its bytes on each node, as the kernel
// writes them ("type N0=<bytes> N1=<bytes> …" a line, nodes with memory
// only; Documentation/admin-guide/cgroup-v2.rst). The counts are the
// group's and its descendants'.
type NumaStat map[string]map[int]uint64

// Footprint is the group's memory per node, its anon and file bytes (the
// types memory.stat sums into the group's memory use; file includes
// tmpfs and shared memory).
func (s NumaStat) Footprint() map[int]uint64 {
	out := map[int]uint64{}
	for _, typ := range []string{"anon", "file"} {
		for n, b := range s[typ] {
			out[n] += b
		}
	}
	return out
}

// parseNumaStat parses memory.numa_stat: "type N0=<bytes> N1=<bytes> …"
// a line, newline-terminated, each type once, each node once a line. The
// kernel may add types anywhere, so they are looked up by name; anon and
// file, which every kernel with the file writes, must be there.
func parseNumaStat(s string) (NumaStat, error) {
	if s == "" {
		return nil, errors.New("empty")
	}
	if !strings.HasSuffix(s, "\n") {
		return nil, errors.New("last line not terminated by a newline")
	}
	out := NumaStat{}
	for i, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		typ, nodes, err := parseNumaStatLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if _, dup := out[typ]; dup {
			return nil, fmt.Errorf("line %d: type %q repeats", i+1, clipText(typ))
		}
		out[typ] = nodes
	}
	for _, typ := range []string{"anon", "file"} {
		if _, ok := out[typ]; !ok {
			return nil, fmt.Errorf("no %q line", typ)
		}
	}
	return out, nil
}

// parseNumaStatLine parses "type N0=<bytes> N1=<bytes> …".
func parseNumaStatLine(line string) (string, map[int]uint64, error) {
	fields := strings.Split(line, " ")
	typ := fields[0]
	if typ == "" || strings.ContainsAny(typ, "=\t") {
		return "", nil, fmt.Errorf("%q does not start with a memory type", clipText(line))
	}
	nodes := make(map[int]uint64, len(fields)-1)
	for _, f := range fields[1:] {
		key, val, ok := strings.Cut(f, "=")
		id, ok2 := strings.CutPrefix(key, "N")
		n, err := strconv.Atoi(id)
		if !ok || !ok2 || err != nil || n < 0 || n > maxNode || id[0] == '+' || (len(id) > 1 && id[0] == '0') {
			return "", nil, fmt.Errorf("%s: %q is not N<node>=<bytes> (node 0-%d)", clipText(typ), clipText(f), maxNode)
		}
		b, err := strconv.ParseUint(val, 10, 64)
		if err != nil || val[0] == '+' {
			return "", nil, fmt.Errorf("%s: %q: the bytes are not a decimal count", clipText(typ), clipText(f))
		}
		if _, dup := nodes[n]; dup {
			return "", nil, fmt.Errorf("%s: node %d repeats", clipText(typ), n)
		}
		nodes[n] = b
	}
	return typ, nodes, nil
}

// readNumaStat reads a v2 group's memory.numa_stat into g, or says in
// its reason why it is unknown: a v1 group (its memory hierarchy counts in
// pages elsewhere), no file (the root group, the memory controller not
// enabled, a kernel without NUMA), a file that does not parse. None of
// these fails the reading of the group: only the memory check needs it.
func readNumaStat(fsys kfile.FS, g *Cgroup) {
	if g.Version == CgroupVersionV1 {
		g.NumaStat = unknown.NotAs[NumaStat](unknown.KindNotApplicable, "a cgroup v1 group: its memory.numa_stat is in the v1 memory hierarchy, which is not read")
		return
	}
	f := path.Join(g.Dir, "memory.numa_stat")
	b, err := fsys.ReadLimit(f, maxNumaStat)
	switch {
	case kfile.IsNotExist(err):
		g.NumaStat = unknown.NotAs[NumaStat](unknown.KindNotReported, "no "+inRoot(fsys, f)+" (the root group, or the memory controller is not enabled for this group)")
		return
	case errors.Is(err, os.ErrPermission):
		g.NumaStat = unknown.NotAs[NumaStat](unknown.KindPermission, inRoot(fsys, err.Error()))
		return
	case err != nil: // too large, unreadable, not a file: said, not fatal
		g.NumaStat = unknown.NotAs[NumaStat](unknown.KindFailed, inRoot(fsys, err.Error()))
		return
	}
	st, err := parseNumaStat(string(b))
	if err != nil {
		g.NumaStat = unknown.NotAs[NumaStat](unknown.KindMalformed, inRoot(fsys, kfile.Malformed(f, err).Error()))
		return
	}
	g.NumaStat = unknown.Of(st)
}

// inRoot writes the paths under fsys's root in s as the host names them
// ("/sys/fs/cgroup/…"), so what is said of a tree and of its snapshot,
// unpacked elsewhere, is the same.
func inRoot(fsys kfile.FS, s string) string {
	r := strings.TrimSuffix(fsys.Root(), "/")
	if r == "" {
		return s
	}
	return strings.ReplaceAll(s, r+"/", "/")
}
