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
//     smp_affinity has one (a kernel always lets user space set some IRQ,
//     and makes /proc/irq/default_smp_affinity 0644).
//   - Otherwise an smp_affinity without a write bit is managed.
//   - One with a write bit is not managed only where the kernel is known
//     to mark managed IRQs: /proc/sys/kernel/osrelease is 6.12 or later,
//     or the tree itself has read-only smp_affinity files beside writable
//     ones. Elsewhere (a 6.1 kernel) it is unknown.
//
// What the loaded IRQs leave open is asked of the tree as cheaply as it
// answers (issue 40: a list of a NIC's IRQs reads no other IRQ's files):
// whether its modes are the kernel's, of default_smp_affinity's mode, and
// only in a tree without that file of the other IRQs' modes (of folders,
// the /proc/irq/N folders Load listed); whether the kernel marks managed
// IRQs, of the other IRQs' modes only where osrelease does not say which
// kernel it is (a capture without it; a kernel that names its release
// marks managed IRQs if it is 6.12 or later). Every file is read through
// fsys, so a link in a tree is followed inside it, never out of it.
func (t *Table) judgeManaged(fsys kfile.FS, folders []int) {
	var modes topology.IRQModes
	for i := range t.IRQs {
		m := t.IRQs[i].modes
		if !t.IRQs[i].Affinity.Known() {
			continue
		}
		modes.Lost = modes.Lost || m.lost
		modes.Add(m.affinity)
	}
	release, known := osRelease(fsys)
	modes.Marks = known && releaseAtLeast(release, readOnlyRelease)
	if !modes.Lost && !modes.Writable {
		writableDefault(fsys, &modes)
	}
	if !modes.Lost && (!modes.Writable || !known && !modes.ReadOnly) {
		t.scanAffinityModes(fsys, folders, &modes, !known)
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

// writableDefault asks the mode of /proc/irq/default_smp_affinity, which
// a kernel makes 0644: writable, it shows the tree kept the kernel's
// modes (modes.Writable); read-only, that it did not (modes.Lost). A
// tree without it says nothing.
func writableDefault(fsys kfile.FS, modes *topology.IRQModes) {
	st, err := fsys.Stat(fsys.Path("proc/irq/default_smp_affinity"))
	switch {
	case err != nil || !st.Mode().IsRegular():
	case st.Mode().Perm()&0o222 != 0:
		modes.Writable = true
	default:
		modes.Lost = true
	}
}

// scanAffinityModes adds the mode of smp_affinity_list (or smp_affinity)
// of each /proc/irq/N of folders that t did not load to modes, until it
// has seen a writable one, and, with readOnly, a read-only one too.
// (Those t loaded are in modes already.)
func (t *Table) scanAffinityModes(fsys kfile.FS, folders []int, modes *topology.IRQModes, readOnly bool) {
	dir := procIRQDir(fsys.Root())
	for _, n := range folders {
		if modes.Writable && (modes.ReadOnly || !readOnly) {
			break
		}
		if _, loaded := t.Get(n); loaded {
			continue
		}
		if mode, err := topology.StatAffinity(fsys, filepath.Join(dir, strconv.Itoa(n))); err == nil {
			modes.Add(mode)
		}
	}
}

// osRelease returns /proc/sys/kernel/osrelease's major and minor
// numbers, and whether the file names a release. A missing or
// unreadable file does not.
func osRelease(fsys kfile.FS) ([2]int, bool) {
	s, err := fsys.String(fsys.Path("proc/sys/kernel/osrelease"))
	if err != nil {
		return [2]int{}, false
	}
	major, minor, ok := parseRelease(s)
	return [2]int{major, minor}, ok
}

// releaseAtLeast reports whether the release (major, minor) is at or
// after want.
func releaseAtLeast(release, want [2]int) bool {
	return release[0] > want[0] || (release[0] == want[0] && release[1] >= want[1])
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
