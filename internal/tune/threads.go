package tune

import (
	"errors"
	"fmt"
	"math/bits"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// ThreadAffinity reads and sets a task's CPU affinity. Unlike an IRQ's,
// it is no file: the kernel takes it through sched_setaffinity(2), so
// the pin's kernel threads (threaded NAPI) are moved through this
// interface, and a test hands Pin and Restore its own.
type ThreadAffinity interface {
	// Get returns the CPUs the task pid may run on.
	Get(pid int) (cpuset.Set, error)
	// Set makes cpus the CPUs the task pid may run on.
	Set(pid int, cpus cpuset.Set) error
}

// LiveThreads is the running kernel's ThreadAffinity:
// sched_getaffinity(2) and sched_setaffinity(2), with a mask as wide as
// the set (or the kernel's CPU mask) needs.
type LiveThreads struct{}

// Get calls sched_getaffinity with a mask grown until the kernel's
// nr_cpu_ids bits fit (EINVAL says it is too small).
func (LiveThreads) Get(pid int) (cpuset.Set, error) {
	for words := 16; words <= 1<<16; words *= 2 {
		mask := make([]uint64, words)
		n, _, errno := unix.RawSyscall(unix.SYS_SCHED_GETAFFINITY, uintptr(pid), uintptr(words*8), uintptr(unsafe.Pointer(&mask[0])))
		if errno == syscall.EINVAL {
			continue
		}
		if errno != 0 {
			return cpuset.Set{}, fmt.Errorf("sched_getaffinity(%d): %w", pid, errno)
		}
		return maskSet(mask[:(int(n)+7)/8]), nil
	}
	return cpuset.Set{}, fmt.Errorf("sched_getaffinity(%d): the kernel's CPU mask is wider than %d CPUs", pid, 1<<22)
}

// Set calls sched_setaffinity with a mask of the set's CPUs.
func (LiveThreads) Set(pid int, cpus cpuset.Set) error {
	if cpus.IsEmpty() {
		return fmt.Errorf("sched_setaffinity(%d): no CPUs", pid)
	}
	hi, _ := cpus.Max()
	mask := make([]uint64, hi/64+1)
	for c := range cpus.All() {
		mask[c/64] |= 1 << (c % 64)
	}
	_, _, errno := unix.RawSyscall(unix.SYS_SCHED_SETAFFINITY, uintptr(pid), uintptr(len(mask)*8), uintptr(unsafe.Pointer(&mask[0])))
	if errno != 0 {
		return fmt.Errorf("sched_setaffinity(%d, %s): %w (%s)", pid, cpus, errno, explainSched(errno))
	}
	return nil
}

// maskSet turns a kernel CPU mask of 64-bit words into a set.
func maskSet(mask []uint64) cpuset.Set {
	var ids []int
	for w, v := range mask {
		for v != 0 {
			b := bits.TrailingZeros64(v)
			ids = append(ids, w*64+b)
			v &^= 1 << b
		}
	}
	return cpuset.New(ids...)
}

// explainSched says in words why sched_setaffinity refused.
func explainSched(errno syscall.Errno) string {
	switch errno {
	case syscall.EINVAL:
		return "EINVAL: the set names no online CPU the task may use (its cpuset cgroup, or a per-CPU kernel thread)"
	case syscall.EPERM:
		return "EPERM: not permitted: not root, or the thread may not be moved"
	case syscall.ESRCH:
		return "ESRCH: the thread is gone"
	}
	return errno.Error()
}

// errCaptured is why a captured host's threads are left alone.
var errCaptured = errors.New("a captured host's threads cannot be moved")

// threadsOf returns the ThreadAffinity a pin or restore moves threads
// with: the one the caller gave, else the running kernel's when the
// root is the live host, else nil (a captured host's threads are not
// moved).
func threadsOf(fsys kfile.FS, given ThreadAffinity) ThreadAffinity {
	if given != nil {
		return given
	}
	if fsys.Live() {
		return LiveThreads{}
	}
	return nil
}
