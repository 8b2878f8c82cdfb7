// Package sched sets where a new process runs and allocates from its
// first instruction: the CPU affinity (sched_setaffinity) and the NUMA
// memory policy (set_mempolicy MPOL_BIND) it inherits from the thread
// that forks it, or, started inside a control group (Placement.Join),
// sets on itself before it execve's the command (join.go).
//
// Both are per-thread attributes in Linux, and a child created by
// clone(2) copies them from the calling thread. Go's os/exec forks from
// the thread of the goroutine that calls Start (syscall.forkAndExecInChild1
// issues clone3/clone through rawVforkSyscall on the current M), so Start
// locks its goroutine to its OS thread, saves that thread's affinity and
// policy, sets the new ones, starts the command and puts the saved ones
// back before unlocking. Should putting them back fail, the thread stays
// locked and the runtime retires it when the goroutine returns, so no
// other goroutine ever runs with the narrowed mask or policy. Threads the
// runtime creates while the goroutine is locked come from its template
// thread, not from the changed one.
//
// Putting the thread back matters: a goroutine that returns locked on the
// main thread does not end it but wedges it, keeping the changed mask for
// the life of the process.
//
// CPU sets of any size are passed with unix.CPUSetDynamic, so hosts with
// more than 1,024 CPUs work.
package sched

import (
	"errors"
	"fmt"
	"math/bits"
	"os/exec"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/cpuset"
)

// ErrNarrowed is wrapped when the kernel applied fewer CPUs than asked,
// typically because a cpuset cgroup confines the caller.
var ErrNarrowed = errors.New("kernel narrowed the CPU affinity")

// Placement is what a started command inherits.
type Placement struct {
	CPUs cpuset.Set // required, non-empty
	// MemNodes binds the command's memory to these nodes (MPOL_BIND);
	// empty leaves the memory policy as it is.
	MemNodes cpuset.Set
	// Join, when set, starts the command inside this control group,
	// through a trampoline (see Group): CPUs and MemNodes must be ones
	// the group allows.
	Join *Group
}

// ErrNotAllowed is wrapped when the kernel refuses a CPU set none of
// whose CPUs the caller's cpuset allows (sched_setaffinity's EINVAL): a
// partition root's CPUs, say, which the kernel takes out of every group
// outside it.
var ErrNotAllowed = errors.New("no CPU of the set is one this process's cpuset allows")

// start starts cmd with p applied before the command's first
// instruction; see the package documentation for how. It fails, without
// starting anything, when the kernel refuses or narrows the placement.
func start(cmd *exec.Cmd, p Placement) error {
	if p.CPUs.IsEmpty() {
		return errors.New("start: empty CPU set")
	}
	if p.Join != nil {
		return startJoined(cmd, p)
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		restored, err := startHere(cmd, p)
		if restored {
			runtime.UnlockOSThread()
		} // else: returning locked retires the changed thread
		errc <- err
	}()
	return <-errc
}

// startHere runs on a locked thread. It reports whether the thread's
// affinity and memory policy are as they were on entry.
func startHere(cmd *exec.Cmd, p Placement) (restored bool, err error) {
	cpus, err := Affinity(0)
	if err != nil {
		return true, err
	}
	var pol memPolicy
	if !p.MemNodes.IsEmpty() {
		if pol, err = getMemPolicy(); err != nil {
			return true, err
		}
	}
	restored = true
	defer func() {
		if err := setAffinity(0, cpus); err != nil {
			restored = false
		}
		if !p.MemNodes.IsEmpty() && pol.set() != nil {
			restored = false
		}
	}()
	if err := setAffinity(0, p.CPUs); err != nil {
		return true, err
	}
	got, err := Affinity(0)
	if err != nil {
		return true, err
	}
	if !got.Equal(p.CPUs) {
		return true, fmt.Errorf("%w: asked for CPUs %s, got %s (is irqnuma confined by a cpuset cgroup?)", ErrNarrowed, p.CPUs, got)
	}
	if !p.MemNodes.IsEmpty() {
		if err := bindMemory(p.MemNodes); err != nil {
			return true, err
		}
	}
	return true, cmd.Start()
}

// dynamicSet converts s to the kernel's CPU mask, at least bits wide.
func dynamicSet(s cpuset.Set, nbits int) unix.CPUSetDynamic {
	if m, ok := s.Max(); ok && m+1 > nbits {
		nbits = m + 1
	}
	d := unix.NewCPUSet(nbits)
	for id := range s.All() {
		d.Set(id)
	}
	return d
}

// setAffinity sets the CPU affinity of thread tid (0: the calling
// thread). The kernel's EINVAL, none of cpus allowed, wraps ErrNotAllowed.
func setAffinity(tid int, cpus cpuset.Set) error {
	if err := unix.SchedSetaffinityDynamic(tid, dynamicSet(cpus, 0)); err != nil {
		if err == unix.EINVAL {
			return fmt.Errorf("sched_setaffinity(%d, %s): %w (%w)", tid, cpus, err, ErrNotAllowed)
		}
		return fmt.Errorf("sched_setaffinity(%d, %s): %w", tid, cpus, err)
	}
	return nil
}

// Affinity returns the CPU affinity of thread tid (0: the calling
// thread). The mask grows until it is as wide as the kernel's.
func Affinity(tid int) (cpuset.Set, error) {
	for nbits := 1024; nbits <= cpuset.MaxID+1; nbits *= 2 {
		d := unix.NewCPUSet(nbits)
		err := unix.SchedGetaffinityDynamic(tid, d)
		if errors.Is(err, unix.EINVAL) {
			continue // the kernel's mask is wider than ours
		}
		if err != nil {
			return cpuset.Set{}, fmt.Errorf("sched_getaffinity(%d): %w", tid, err)
		}
		var ids []int
		for id := range nbits {
			if d.IsSet(id) {
				ids = append(ids, id)
			}
		}
		return cpuset.New(ids...), nil
	}
	return cpuset.Set{}, fmt.Errorf("sched_getaffinity(%d): mask wider than %d bits", tid, cpuset.MaxID+1)
}

// bindMemory sets the calling thread's memory policy to MPOL_BIND on
// nodes. The calling goroutine must be locked to its thread.
//
// It calls set_mempolicy itself rather than unix.SetMemPolicyDynamic,
// which passes the mask's size in bytes where the kernel wants maxnode,
// a bit count plus one (mm/mempolicy.c get_nodes decrements it): a
// one-word mask would reach only nodes 0-6.
func bindMemory(nodes cpuset.Set) error {
	if nodes.IsEmpty() {
		return errors.New("set_mempolicy: empty node set")
	}
	mask, maxnode := nodeMask(nodes)
	_, _, e := unix.Syscall(unix.SYS_SET_MEMPOLICY, unix.MPOL_BIND,
		uintptr(unsafe.Pointer(&mask[0])), maxnode)
	runtime.KeepAlive(mask)
	if e != 0 {
		return fmt.Errorf("set_mempolicy(MPOL_BIND, nodes %s): %w", nodes, e)
	}
	return nil
}

// nodeMask returns nodes as the kernel's array of unsigned longs (uint
// has their width) and the maxnode argument that covers every bit of it.
func nodeMask(nodes cpuset.Set) ([]uint, uintptr) {
	const w = bits.UintSize
	m, _ := nodes.Max()
	mask := make([]uint, m/w+1)
	for id := range nodes.All() {
		mask[id/w] |= 1 << uint(id%w)
	}
	return mask, uintptr(len(mask)*w + 1)
}

// memPolicy is a thread's memory policy as get_mempolicy returns it: the
// mode with its flags, and the node mask.
type memPolicy struct {
	mode int
	mask []uint
}

// getMemPolicy returns the calling thread's memory policy. The mask
// grows until the kernel accepts it (it must cover nr_node_ids).
func getMemPolicy() (memPolicy, error) {
	for n := 1; n*bits.UintSize <= 1<<15; n *= 2 { // the kernel caps maxnode at a page of bits
		pol := memPolicy{mask: make([]uint, n)}
		var mode int32
		_, _, e := unix.Syscall6(unix.SYS_GET_MEMPOLICY, uintptr(unsafe.Pointer(&mode)),
			uintptr(unsafe.Pointer(&pol.mask[0])), uintptr(n*bits.UintSize+1), 0, 0, 0)
		runtime.KeepAlive(pol.mask)
		if e == unix.EINVAL {
			continue
		}
		if e != 0 {
			return memPolicy{}, fmt.Errorf("get_mempolicy: %w", e)
		}
		pol.mode = int(mode)
		return pol, nil
	}
	return memPolicy{}, errors.New("get_mempolicy: node mask wider than the kernel allows")
}

// set makes pol the calling thread's memory policy again.
func (pol memPolicy) set() error {
	var ptr, maxnode uintptr
	if pol.mode&^(unix.MPOL_F_STATIC_NODES|unix.MPOL_F_RELATIVE_NODES|unix.MPOL_F_NUMA_BALANCING) != unix.MPOL_DEFAULT {
		ptr, maxnode = uintptr(unsafe.Pointer(&pol.mask[0])), uintptr(len(pol.mask)*bits.UintSize+1)
	}
	_, _, e := unix.Syscall(unix.SYS_SET_MEMPOLICY, uintptr(pol.mode), ptr, maxnode)
	runtime.KeepAlive(pol.mask)
	if e != 0 {
		return fmt.Errorf("set_mempolicy(%d): %w", pol.mode, e)
	}
	return nil
}
