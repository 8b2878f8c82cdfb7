package irq

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Whether the kernel manages an IRQ's affinity itself is told by file
// modes, and only by some kernels. Linux 6.12 (genirq: "Make smp_affinity
// read-only for interrupts that userspace can't set") creates
// smp_affinity and smp_affinity_list 0444 for such IRQs and refuses a
// write with EPERM; before it every smp_affinity is 0644 and the write
// fails with EIO (seen on Debian's 6.1 in the lab: all eight NVMe queue
// IRQs 0644, every write EIO). So a write bit proves nothing there.

// modeFacts is what one IRQ's file modes say.
type modeFacts struct {
	affinity os.FileMode // mode of smp_affinity_list (or smp_affinity)
	// lost: node or effective_affinity carries a write bit. The kernel
	// makes them 0444, so the tree did not keep the kernel's modes.
	lost bool
}

// readOnlyRelease is the first Linux release that makes the affinity files
// of IRQs user space cannot set read-only.
var readOnlyRelease = [2]int{6, 12}

// judgeManaged sets Managed of every IRQ in t:
//
//   - In a tree whose modes are not the kernel's, nothing is known: some
//     node or effective_affinity file has a write bit, or no IRQ's
//     smp_affinity has one (a kernel always lets user space set some IRQ).
//   - Otherwise an smp_affinity without a write bit is managed.
//   - One with a write bit is not managed only where the kernel is known
//     to mark managed IRQs: /proc/sys/kernel/osrelease is 6.12 or later,
//     or the tree itself has read-only smp_affinity files beside writable
//     ones. Elsewhere (a 6.1 kernel) it is unknown.
//
// The IRQs t did not load are looked at only while the loaded ones leave
// the question open, and only their modes. Every file is read through
// fsys, so a link in a tree is followed inside it, never out of it.
func (t *Table) judgeManaged(fsys kfile.FS) {
	var modes topology.IRQModes
	for i := range t.IRQs {
		m := t.IRQs[i].modes
		if !t.IRQs[i].Affinity.Known() {
			continue
		}
		modes.Lost = modes.Lost || m.lost
		modes.Add(m.affinity)
	}
	modes.Marks = releaseAtLeast(fsys, readOnlyRelease)
	if !modes.Lost && !(modes.ReadOnly && modes.Writable) {
		scanAffinityModes(fsys, &modes)
	}
	for i := range t.IRQs {
		q := &t.IRQs[i]
		if !q.Affinity.Known() {
			q.Managed = unknown.Not[bool](q.Affinity.Why())
			continue
		}
		managed, known := modes.Managed(q.modes.affinity)
		switch {
		case known:
			q.Managed = unknown.Of(managed)
		case modes.Lost || !modes.Writable:
			q.Managed = unknown.NotAs[bool](unknown.KindNotCaptured, "the tree's file modes are not the kernel's")
		default:
			q.Managed = unknown.NotAs[bool](unknown.KindKernel, "a kernel before 6.12 does not mark managed IRQs")
		}
	}
}

// scanAffinityModes adds the mode of smp_affinity_list (or smp_affinity)
// of every /proc/irq/N to modes until it has seen a read-only one and a
// writable one.
func scanAffinityModes(fsys kfile.FS, modes *topology.IRQModes) {
	ns, err := listIRQs(fsys)
	if err != nil {
		return
	}
	dir := procIRQDir(fsys.Root())
	for _, n := range ns {
		if modes.ReadOnly && modes.Writable {
			break
		}
		if mode, err := topology.StatAffinity(fsys, filepath.Join(dir, strconv.Itoa(n))); err == nil {
			modes.Add(mode)
		}
	}
}

// releaseAtLeast reports whether /proc/sys/kernel/osrelease names a
// release at or after want (major, minor). A missing or unreadable file
// says no.
func releaseAtLeast(fsys kfile.FS, want [2]int) bool {
	s, err := fsys.String(fsys.Path("proc/sys/kernel/osrelease"))
	if err != nil {
		return false
	}
	major, minor, ok := parseRelease(s)
	if !ok {
		return false
	}
	return major > want[0] || (major == want[0] && minor >= want[1])
}

// parseRelease reads the major and minor numbers of a kernel release:
// "6.12.117+deb12-amd64" -> 6, 12.
func parseRelease(s string) (major, minor int, ok bool) {
	parts := strings.SplitN(strings.TrimSpace(s), ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	end := 0
	for end < len(parts[1]) && parts[1][end] >= '0' && parts[1][end] <= '9' {
		end++
	}
	minor, err2 := strconv.Atoi(parts[1][:end])
	return major, minor, err1 == nil && err2 == nil
}
