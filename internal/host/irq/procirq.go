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
)

// Info is what /proc/irq/N says of one IRQ.
type Info struct {
	IRQ int
	// Affinity is the requested affinity (smp_affinity_list, or
	// smp_affinity where the list file is absent).
	Affinity    cpuset.Set
	HasAffinity bool
	// Effective is where the interrupt controller actually delivers it
	// (effective_affinity_list, or effective_affinity). Some kernels and
	// captures have neither.
	Effective    cpuset.Set
	HasEffective bool
	Node         int // /proc/irq/N/node; -1 when absent or unknown
	Hint         cpuset.Set
	HasHint      bool
	// Managed is true when the IRQ is known to be kernel-managed: its
	// smp_affinity carries no write bit in a tree whose modes are real
	// (Linux 6.12 and later create it that way for every IRQ user space
	// cannot set). ManagedKnown says whether Managed is known at all: see
	// judgeManaged. ReadInfo leaves both false; Load judges them.
	Managed      bool
	ManagedKnown bool
	// modes records what the file modes say, for judgeManaged.
	modes modeFacts
	// Actions are the names of the action folders, read only on request.
	Actions []string
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
	dir := filepath.Join(procIRQDir(fsys.Root()), strconv.Itoa(n))
	in := Info{IRQ: n, Node: -1}
	buf := make([]byte, 0, 256)
	var err error

	// The list form first; the mask form where the list is absent.
	var mode os.FileMode
	buf, mode, err = fsys.ReadMode(dir+"/smp_affinity_list", buf)
	switch {
	case err == nil:
		if in.Affinity, err = parseList(dir+"/smp_affinity_list", buf); err != nil {
			return in, err
		}
		in.HasAffinity = true
		in.modes.affinity = mode
	case kfile.IsNotExist(err):
		buf, mode, err = fsys.ReadMode(dir+"/smp_affinity", buf)
		if err == nil {
			if in.Affinity, err = parseMask(dir+"/smp_affinity", buf); err != nil {
				return in, err
			}
			in.HasAffinity = true
			in.modes.affinity = mode
		} else if !kfile.IsNotExist(err) {
			return in, err
		} else if _, serr := fsys.Stat(dir); serr != nil {
			return in, fmt.Errorf("IRQ %d: %w", n, serr)
		}
	default:
		return in, err
	}

	buf, mode, err = fsys.ReadMode(dir+"/effective_affinity_list", buf)
	switch {
	case err == nil:
		in.modes.lost = in.modes.lost || mode&0o222 != 0
		if in.Effective, err = parseList(dir+"/effective_affinity_list", buf); err != nil {
			return in, err
		}
		in.HasEffective = true
	case kfile.IsNotExist(err):
		buf, mode, err = fsys.ReadMode(dir+"/effective_affinity", buf)
		if err == nil {
			in.modes.lost = in.modes.lost || mode&0o222 != 0
			if in.Effective, err = parseMask(dir+"/effective_affinity", buf); err != nil {
				return in, err
			}
			in.HasEffective = true
		} else if !kfile.IsNotExist(err) {
			return in, err
		}
	default:
		return in, err
	}

	buf, mode, err = fsys.ReadMode(dir+"/node", buf)
	if err == nil {
		in.modes.lost = in.modes.lost || mode&0o222 != 0
		v, perr := strconv.Atoi(string(bytes.TrimSpace(kfile.TrimAttr(buf))))
		if perr != nil || v < -1 {
			return in, kfile.Malformedf(dir+"/node", "not a node: %q", clip(buf))
		}
		in.Node = v
	} else if !kfile.IsNotExist(err) {
		return in, err
	}

	if withActions {
		ents, err := fsys.ReadDir(dir)
		if err != nil {
			return in, fmt.Errorf("IRQ %d: %w", n, err)
		}
		for _, e := range ents {
			if e.IsDir() {
				in.Actions = append(in.Actions, e.Name())
			}
		}
	}
	return in, nil
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
