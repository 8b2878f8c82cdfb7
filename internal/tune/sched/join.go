package sched

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/cpuset"
)

// Group is a control group a command is started inside
// (Placement.Join). Exactly one of Dir and Procs is set.
//
// A process cloned into a cpuset group, or moved into one, takes the
// group's effective CPUs and memory nodes (kernel/cgroup/cpuset.c:
// cpuset_fork calls cpuset_attach_task for CLONE_INTO_CGROUP, as
// cpuset_attach does for a move), whatever its parent's thread had. So
// the placement cannot be inherited: the child narrows itself. Start
// runs this same executable as a trampoline (see Trampoline) inside the
// group, which sets the CPU affinity and memory policy on its own
// thread, reads both back, and execve's the command; a thread keeps
// them across execve. The command's first instruction runs inside the
// group, on the picked CPUs, with the picked memory policy.
type Group struct {
	// Path names the group in messages.
	Path string
	// Dir is the group's folder on a cgroup v2 hierarchy, opened
	// read-only: the trampoline is cloned into it (clone3
	// CLONE_INTO_CGROUP), so it never runs outside it.
	Dir *os.File
	// Procs is the group's cgroup.procs opened for writing, on the v1
	// cpuset hierarchy, which clone3 cannot clone into (it takes a
	// unified hierarchy's folder only, EBADF otherwise): the trampoline
	// moves itself in by writing "0" to it before it does anything else.
	Procs *os.File
}

// TrampolineArg is the first argument that makes a binary calling
// Trampoline the trampoline.
const TrampolineArg = "__irqnuma_sched"

// The trampoline's inherited descriptors (os/exec's ExtraFiles).
const (
	trampolineStatusFD = 3 // the status pipe: an error's text, or EOF at execve
	trampolineProcsFD  = 4 // a v1 group's cgroup.procs, with Group.Procs
)

// ErrTrampoline is wrapped by Start's error when the trampoline could
// not set the placement or start the command.
var ErrTrampoline = errors.New("inside the group")

// startJoined starts cmd through the trampoline inside p.Join.
func startJoined(cmd *exec.Cmd, p Placement) error {
	g := p.Join
	if (g.Dir == nil) == (g.Procs == nil) {
		return fmt.Errorf("start in group %s: want its folder (v2) or its cgroup.procs (v1), one of them", g.Path)
	}
	if cmd.SysProcAttr != nil || len(cmd.ExtraFiles) > 0 {
		return errors.New("start in a group: the command has its own SysProcAttr or ExtraFiles")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("start in group %s: the trampoline: %w", g.Path, err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	mems := "-"
	if !p.MemNodes.IsEmpty() {
		mems = p.MemNodes.List()
	}
	argv0 := cmd.Path
	if len(cmd.Args) > 0 {
		argv0 = cmd.Args[0]
	}
	join := "-" // cloned into it
	if g.Procs != nil {
		join = "procs"
	}
	args := append([]string{TrampolineArg, p.CPUs.List(), mems, join, cmd.Path, argv0}, cmd.Args[min(1, len(cmd.Args)):]...)
	path, origArgs := cmd.Path, cmd.Args
	cmd.Path, cmd.Args = self, append([]string{self}, args...)
	cmd.ExtraFiles = []*os.File{w}
	if g.Dir != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(g.Dir.Fd())}
	} else {
		cmd.ExtraFiles = append(cmd.ExtraFiles, g.Procs)
	}
	err = cmd.Start()
	w.Close()
	runtime.KeepAlive(g.Dir)
	if err != nil {
		cmd.Path, cmd.Args = path, origArgs
		return fmt.Errorf("start in group %s: %w", g.Path, err)
	}
	msg, _ := io.ReadAll(io.LimitReader(r, 4096)) // EOF: the command is running
	if len(msg) == 0 {
		return nil
	}
	_ = cmd.Wait()
	return statusError(string(msg), path, g.Path)
}

// The trampoline's status is a kind, a newline and the error's text;
// the kind keeps the sentinel across the pipe.
const (
	kindOther      = "error"
	kindNarrowed   = "narrowed"
	kindNotAllowed = "not-allowed"
	kindExec       = "exec" // the text is the errno's number
)

// statusMessage is what the trampoline writes for err.
func statusMessage(err error) string {
	var errno syscall.Errno
	switch {
	case errors.Is(err, ErrNarrowed):
		return kindNarrowed + "\n" + err.Error()
	case errors.Is(err, ErrNotAllowed):
		return kindNotAllowed + "\n" + err.Error()
	case errors.As(err, &errno) && strings.HasPrefix(err.Error(), "exec "):
		return kindExec + "\n" + strconv.Itoa(int(errno))
	}
	return kindOther + "\n" + err.Error()
}

// statusError turns the trampoline's status back into an error wrapping
// ErrTrampoline and, for its kinds, ErrNarrowed, ErrNotAllowed or the
// execve's errno (os.ErrPermission, os.ErrNotExist test true on it).
func statusError(msg, path, group string) error {
	kind, text, _ := strings.Cut(msg, "\n")
	switch kind {
	case kindNarrowed:
		text = strings.TrimPrefix(text, ErrNarrowed.Error()+": ")
		return fmt.Errorf("%w %s: %w: %s", ErrTrampoline, group, ErrNarrowed, text)
	case kindNotAllowed:
		return fmt.Errorf("%w %s: %s: %w", ErrTrampoline, group, strings.TrimSuffix(text, " ("+ErrNotAllowed.Error()+")"), ErrNotAllowed)
	case kindExec:
		if n, err := strconv.Atoi(text); err == nil && n > 0 {
			return fmt.Errorf("%w %s: exec %s: %w", ErrTrampoline, group, path, syscall.Errno(n))
		}
	}
	return fmt.Errorf("%w %s: %s", ErrTrampoline, group, text)
}

// Trampoline, when this process was started as the trampoline of a
// start with Placement.Join (its first argument TrampolineArg), joins
// the group if it is not in it yet, sets the placement on its thread
// and execve's the command; it never returns then. Otherwise it returns
// at once. A binary that can be asked to start a command inside a group
// calls it first thing in main (and in TestMain, for its tests).
func Trampoline() {
	if len(os.Args) < 2 || os.Args[1] != TrampolineArg {
		return
	}
	runtime.LockOSThread() // never unlocked: the thread execve's or exits
	err := trampoline(os.Args[2:])
	_, _ = unix.Write(trampolineStatusFD, []byte(statusMessage(err)))
	os.Exit(1)
}

// trampoline does Trampoline's work on args: CPUS MEMS JOIN PATH ARGV0
// ARGS..., MEMS "-" for none, JOIN "procs" to join through the
// cgroup.procs at descriptor 4, "-" when already inside. It returns only
// on failure.
func trampoline(args []string) error {
	if len(args) < 5 {
		return fmt.Errorf("trampoline: want CPUS MEMS JOIN PATH ARGV0 [ARGS...], got %q", args)
	}
	unix.CloseOnExec(trampolineStatusFD)
	cpus, err := cpuset.ParseList(args[0])
	if err != nil {
		return fmt.Errorf("trampoline: CPUs %q: %w", args[0], err)
	}
	var mems cpuset.Set
	if args[1] != "-" {
		if mems, err = cpuset.ParseList(args[1]); err != nil {
			return fmt.Errorf("trampoline: memory nodes %q: %w", args[1], err)
		}
	}
	switch args[2] {
	case "-":
	case "procs":
		_, err := unix.Write(trampolineProcsFD, []byte("0"))
		unix.Close(trampolineProcsFD)
		if err != nil {
			return fmt.Errorf("join: write 0 to its cgroup.procs: %w", err)
		}
	default:
		return fmt.Errorf("trampoline: JOIN %q: want procs or -", args[2])
	}
	if err := place(cpus, mems); err != nil {
		return err
	}
	if err := syscall.Exec(args[3], args[4:], os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", args[3], err)
	}
	return nil // not reached: execve returns only on failure
}

// place sets the calling thread's CPU affinity to cpus and, when mems
// is not empty, its memory policy to MPOL_BIND on mems, and reads both
// back: a cpuset that narrows either is an error saying so.
func place(cpus, mems cpuset.Set) error {
	if err := setAffinity(0, cpus); err != nil {
		return err
	}
	got, err := Affinity(0)
	if err != nil {
		return err
	}
	if !got.Equal(cpus) {
		return fmt.Errorf("%w: asked for CPUs %s, got %s", ErrNarrowed, cpus, got)
	}
	if mems.IsEmpty() {
		return nil
	}
	if err := bindMemory(mems); err != nil {
		return fmt.Errorf("%w (the group's cpuset.mems.effective must hold them)", err)
	}
	pol, err := getMemPolicy()
	if err != nil {
		return err
	}
	if bound := pol.nodes(); pol.mode != unix.MPOL_BIND || !bound.Equal(mems) {
		return fmt.Errorf("%w: asked for memory on nodes %s, the policy binds %s (the group's cpuset.mems.effective allows only those)", ErrNarrowed, mems, bound)
	}
	return nil
}

// nodes is the policy's node mask as a set.
func (pol memPolicy) nodes() cpuset.Set {
	var ids []int
	for w, word := range pol.mask {
		for b := range bits.UintSize {
			if word&(1<<uint(b)) != 0 {
				ids = append(ids, w*bits.UintSize+b)
			}
		}
	}
	return cpuset.New(ids...)
}
