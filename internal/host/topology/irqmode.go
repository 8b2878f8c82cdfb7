package topology

import (
	"io/fs"

	"github.com/irqnuma/irqnuma/internal/kfile"
)

// IRQModes is what the modes of a tree's /proc/irq/N files say, taken
// together: whether the kernel manages an IRQ's affinity itself is told
// by them, and only by some kernels (Linux 6.12 makes smp_affinity and
// smp_affinity_list 0444 for such IRQs; before it every one is 0644).
// It is the one rule for "managed by mode": irq's judgeManaged and the
// NIC node inference here both ask it.
type IRQModes struct {
	ReadOnly bool // some smp_affinity_list (or smp_affinity) has no write bit
	Writable bool // some has one
	// Lost: some node or effective_affinity file has a write bit. The
	// kernel makes them 0444, so the tree did not keep the kernel's modes.
	Lost bool
	// Marks: the kernel is known to mark managed IRQs read-only
	// (osrelease 6.12 or later).
	Marks bool
}

// Add counts the mode of one IRQ's smp_affinity_list (or smp_affinity).
func (m *IRQModes) Add(affinity fs.FileMode) {
	if affinity.Perm()&0o222 == 0 {
		m.ReadOnly = true
	} else {
		m.Writable = true
	}
}

// Managed says whether the IRQ whose affinity file has the given mode is
// kernel-managed, and whether that is known. In a tree whose modes are
// not the kernel's nothing is known: Lost, or no affinity file writable
// (a kernel always lets user space set some IRQ). Otherwise a read-only
// one is managed; a writable one is not managed only where the kernel is
// known to mark managed IRQs: Marks, or read-only files beside writable
// ones in the tree itself.
func (m IRQModes) Managed(affinity fs.FileMode) (managed, known bool) {
	if m.Lost || !m.Writable {
		return false, false
	}
	if affinity.Perm()&0o222 == 0 {
		return true, true
	}
	return false, m.Marks || m.ReadOnly
}

// SomeManaged says whether, by Managed, some IRQ counted is managed.
func (m IRQModes) SomeManaged() bool {
	managed, _ := m.Managed(0o444)
	return m.ReadOnly && managed
}

// StatAffinity returns the mode of the affinity file in the /proc/irq/N
// folder dir: smp_affinity_list, else smp_affinity.
func StatAffinity(fsys kfile.FS, dir string) (fs.FileMode, error) {
	st, err := fsys.Stat(dir + "/smp_affinity_list")
	if err != nil {
		if st, err = fsys.Stat(dir + "/smp_affinity"); err != nil {
			return 0, err
		}
	}
	return st.Mode(), nil
}
