package irq

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Info is what /proc/irq/N says of one IRQ.
type Info struct {
	IRQ int
	// Affinity is the requested affinity (smp_affinity_list, or
	// smp_affinity where the list file is absent); unknown when the
	// folder has neither.
	Affinity unknown.Value[cpuset.Set]
	// Effective is where the interrupt controller actually delivers it
	// (effective_affinity_list, or effective_affinity). Some kernels and
	// captures have neither.
	Effective unknown.Value[cpuset.Set]
	// Node is /proc/irq/N/node; unknown when absent or -1.
	Node unknown.Value[int]
	// Managed is whether the IRQ is kernel-managed: its smp_affinity
	// carries no write bit in a tree whose modes are real (Linux 6.12
	// and later create it that way for every IRQ user space cannot set).
	// It is unknown where the modes do not tell: see judgeManaged.
	// ReadInfo leaves it unknown; Load judges it.
	Managed unknown.Value[bool]
	// modes records what the file modes say, for judgeManaged.
	modes modeFacts
	// Actions are the names of the action folders, read only on request.
	Actions []string
}

// absent is the reason a /proc/irq file is not there: this kernel has
// none on the live host, the capture holds none elsewhere. file is
// the path under / ("/proc/irq/3/node").
func absent(fsys kfile.FS, file string) unknown.Reason {
	if fsys.Live() {
		return unknown.Because(unknown.KindKernel, "no "+file)
	}
	return unknown.Because(unknown.KindNotCaptured, "no "+file)
}

// noFolder is the Info of IRQ n without a /proc/irq/N folder: nothing
// of it is known.
func noFolder(fsys kfile.FS, n int) Info {
	r := absent(fsys, "/proc/irq/"+strconv.Itoa(n))
	return Info{IRQ: n, Affinity: unknown.Not[cpuset.Set](r), Effective: unknown.Not[cpuset.Set](r),
		Node: unknown.Not[int](r), Managed: unknown.Not[bool](r)}
}

// procIRQDir returns root/proc/irq.
func procIRQDir(root string) string { return filepath.Join(root, "proc/irq") }

// listIRQs returns the IRQ numbers that have a /proc/irq/N folder,
// ascending.
func listIRQs(fsys kfile.FS) ([]int, error) {
	root := fsys.Root()
	ents, err := fsys.ReadDir(procIRQDir(root))
	if err != nil {
		return nil, fmt.Errorf("list IRQs: %w", err)
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < 0 || !e.IsDir() {
			continue
		}
		if n > interrupts.MaxIRQ {
			return nil, fmt.Errorf("list IRQs: %s/%s: IRQ number past the largest, %d", procIRQDir(root), clipName(e.Name()), interrupts.MaxIRQ)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// ReadInfo reads /proc/irq/N. withActions also lists its action folders
// (one more directory read), for IRQs /proc/interrupts does not name.
// A missing folder is an error wrapping fs.ErrNotExist.
func ReadInfo(fsys kfile.FS, n int, withActions bool) (Info, error) {
	return readInfo(fsys, fsys.ReadMode, n, withActions)
}

// readFunc reads a small file into buf and returns its permission bits:
// kfile.FS.ReadMode, or topology.Host.TakeRead, which hands over what
// topology read of it.
type readFunc func(p string, buf []byte) ([]byte, os.FileMode, error)

// readInfo is ReadInfo reading the files through read.
func readInfo(fsys kfile.FS, read readFunc, n int, withActions bool) (Info, error) {
	dir := filepath.Join(procIRQDir(fsys.Root()), strconv.Itoa(n))
	rel := "/proc/irq/" + strconv.Itoa(n)
	in := Info{IRQ: n,
		Affinity:  unknown.Not[cpuset.Set](absent(fsys, rel+"/smp_affinity")),
		Effective: unknown.Not[cpuset.Set](absent(fsys, rel+"/effective_affinity")),
		Node:      unknown.Not[int](absent(fsys, rel+"/node")),
		Managed:   unknown.NotAs[bool](unknown.KindNotRead, "not judged"),
	}
	buf := make([]byte, 0, 256)

	// The list form first; the mask form where the list is absent.
	set, mode, found, buf, err := readCPUs(read, dir, FileAffinityList, FileAffinity, buf)
	switch {
	case err != nil:
		return in, err
	case found:
		in.Affinity = unknown.Of(set)
		in.modes.affinity = mode
	default:
		if _, serr := fsys.Stat(dir); serr != nil {
			return in, fmt.Errorf("IRQ %d: %w", n, serr)
		}
	}

	set, mode, found, buf, err = readCPUs(read, dir, "effective_affinity_list", "effective_affinity", buf)
	if err != nil {
		return in, err
	}
	if found {
		in.modes.lost = in.modes.lost || mode&0o222 != 0
		in.Effective = unknown.Of(set)
	}

	buf, mode, err = read(dir+"/node", buf)
	if err == nil {
		in.modes.lost = in.modes.lost || mode&0o222 != 0
		if in.Node, err = parseNode(dir+"/node", rel+"/node", buf); err != nil {
			return in, err
		}
	} else if !kfile.IsNotExist(err) {
		return in, err
	}

	if withActions {
		if in.Actions, err = readActions(fsys, n); err != nil {
			return in, err
		}
	}
	return in, nil
}

// readActions lists the action folders of /proc/irq/N: the names of the
// IRQ's actions.
func readActions(fsys kfile.FS, n int) ([]string, error) {
	dir := filepath.Join(procIRQDir(fsys.Root()), strconv.Itoa(n))
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("IRQ %d: %w", n, err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// readCPUs reads a CPU set from the list file of dir, or from its mask
// file where the list file is absent; found is false when neither is
// there. It returns buf, grown to hold the file.
func readCPUs(read readFunc, dir, list, mask string, buf []byte) (set cpuset.Set, mode os.FileMode, found bool, _ []byte, err error) {
	path, parse := dir+"/"+list, parseList
	buf, mode, err = read(path, buf)
	if kfile.IsNotExist(err) {
		path, parse = dir+"/"+mask, parseMask
		if buf, mode, err = read(path, buf); kfile.IsNotExist(err) {
			return cpuset.Set{}, 0, false, buf, nil
		}
	}
	if err != nil {
		return cpuset.Set{}, 0, false, buf, err
	}
	set, err = parse(path, buf)
	return set, mode, err == nil, buf, err
}

// parseNode reads a /proc/irq/N/node file (at path; rel names it under
// /): a node, or -1 when the kernel does not know it.
func parseNode(path, rel string, b []byte) (unknown.Value[int], error) {
	v, err := strconv.Atoi(string(bytes.TrimSpace(kfile.TrimAttr(b))))
	switch {
	case err != nil || v < -1:
		return unknown.Value[int]{}, kfile.Malformedf(path, "not a node: %q", clip(b))
	case v == -1:
		return unknown.NotAs[int](unknown.KindNotReported, rel+" is -1"), nil
	}
	return unknown.Of(v), nil
}

// clipName shortens a file name quoted in an error.
func clipName(s string) string {
	if len(s) > 24 {
		return s[:24] + "..."
	}
	return s
}

func parseList(path string, b []byte) (cpuset.Set, error) {
	s, err := cpuset.ParseList(strings.TrimSpace(string(kfile.TrimAttr(b))))
	if err != nil {
		return s, kfile.Malformed(path, err)
	}
	return s, nil
}

func parseMask(path string, b []byte) (cpuset.Set, error) {
	s, err := cpuset.ParseMask(strings.TrimSpace(string(kfile.TrimAttr(b))))
	if err != nil {
		return s, kfile.Malformed(path, err)
	}
	return s, nil
}

// clip shortens file contents quoted in an error.
func clip(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}
