package tune

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// This file is the one code path that writes a file of a host: an IRQ's
// smp_affinity_list or smp_affinity, and a tx queue's xps_cpus. Every
// write goes through writeValue, which refuses any other path
// (irq.ParseTarget).

// Writer writes data to an existing kernel attribute file. Tests inject
// failures through it; FileWriter is the real one.
type Writer interface {
	WriteFile(name string, data []byte) error
}

// FileWriter writes with one write(2) call to a file that must already
// exist, as the kernel parses each write of an attribute on its own.
type FileWriter struct{}

// WriteFile opens the existing file name of the running machine for
// writing and writes data as writeIn does. Apply calls writeIn with the
// host's root instead; WriteFile is for Writers that wrap FileWriter and
// are handed the file's real path.
func (w FileWriter) WriteFile(name string, data []byte) error {
	live, _ := kfile.Open("/") // the live root is never an error
	return w.writeIn(live, name, data)
}

// writeIn writes data to the existing file name under fsys's root, the
// folders on the way resolved inside the root (a link cannot lead the
// write out of it), never making the file. A kernel file (procfs,
// sysfs) gets data in one write(2), as the kernel parses each write of an
// attribute on its own. A host tree's regular file is written in place,
// over its first bytes and then cut to their length: its inode, mode and
// hard links stay, and no temporary file is made beside it. The errno is
// kept in the error.
func (FileWriter) writeIn(fsys kfile.FS, name string, data []byte) error {
	f, err := fsys.OpenKernelFile(name)
	if err != nil {
		return err
	}
	kernel, err := kfile.IsKernel(f)
	if err != nil {
		f.Close()
		return err
	}
	var n int
	if kernel {
		n, err = f.Write(data)
	} else {
		n, err = f.WriteAt(data, 0)
		if err == nil {
			err = f.Truncate(int64(len(data)))
		}
		if err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != len(data) {
		err = fmt.Errorf("short write: %d of %d bytes", n, len(data))
	}
	return err
}

// rootWriter is a Writer that writes through the host root's FS itself
// (FileWriter): writeValue hands it the rooted path unresolved.
type rootWriter interface {
	writeIn(fsys kfile.FS, name string, data []byte) error
}

// ErrManaged is matched (errors.Is) by a write the kernel refused because
// it manages the IRQ's affinity itself: EIO before Linux 6.12, EPERM since.
// Only the kernel's own file says so: the same errno from a host tree's
// copy is a failure like any other.
var ErrManaged = errors.New("managed IRQ")

// WriteError is a refused write, with the errno the kernel returned.
type WriteError struct {
	Path  string // rooted path inside the host
	Value string
	Err   error
	// kernel: the file refusing was the kernel's (procfs), not a host
	// tree's copy, so its EIO or EPERM speaks of a managed IRQ.
	kernel bool
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("write %q to %s: %v (%s)", e.Value, e.Path, e.Err, explain(e))
}

func (e *WriteError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrManaged) true for EIO or EPERM from a
// kernel's affinity file: its answer for an IRQ it manages.
func (e *WriteError) Is(target error) bool {
	if target != ErrManaged || !e.kernel {
		return false
	}
	t, err := irq.ParseTarget(e.Path)
	if err != nil || t.File == irq.FileXPS {
		return false
	}
	return errors.Is(e.Err, syscall.EIO) || errors.Is(e.Err, syscall.EPERM)
}

// explain says in words why the kernel refused a write.
func explain(err error) string {
	var en syscall.Errno
	var we *WriteError
	if errors.As(err, &we) && !we.kernel && (errors.Is(err, syscall.EIO) || errors.Is(err, syscall.EPERM)) {
		name := "EIO"
		if errors.Is(err, syscall.EPERM) {
			name = "EPERM"
		}
		return name + ": a host tree's copy of the file refused the write (its permissions or its file system), not the kernel: a failure, not a managed IRQ"
	}
	if !errors.As(err, &en) {
		if errors.Is(err, irq.ErrPath) {
			return "irqnuma writes nothing outside /proc/irq/<n>/ and /sys/class/net/<nic>/queues/"
		}
		return "not a kernel error"
	}
	switch en {
	case syscall.EIO:
		return "EIO: the kernel does not let user space set this IRQ's affinity: a managed or per-CPU IRQ (Linux before 6.12 says EIO)"
	case syscall.EPERM:
		return "EPERM: the kernel manages this IRQ's affinity itself (Linux 6.12 and later say EPERM)"
	case syscall.EINVAL:
		return "EINVAL: the value names no online CPU the IRQ may use, or is malformed"
	case syscall.ERANGE:
		return "ERANGE: the list names a CPU beyond the kernel's nr_cpu_ids: no valid online CPU"
	case syscall.EOVERFLOW:
		return "EOVERFLOW: the mask is wider than the kernel's CPU mask (nr_cpu_ids bits): no valid online CPU"
	case syscall.ENOSPC:
		return "ENOSPC: the interrupt vector space of the target CPUs is exhausted; choose more or other CPUs"
	case syscall.EROFS:
		return "EROFS: the file system is read-only (a container's /proc or /sys?)"
	case syscall.EACCES:
		return "EACCES: permission denied: not root, or the file has no write permission"
	case syscall.ENOENT:
		return "ENOENT: the file is gone: the IRQ was freed or the device removed"
	case syscall.EBUSY:
		return "EBUSY: the IRQ is being moved or shut down; try again"
	case syscall.ENODEV:
		return "ENODEV: the device is gone"
	case syscall.ENOMEM:
		return "ENOMEM: the kernel could not allocate memory for the new affinity"
	}
	return en.Error()
}

// writeValue writes value and a newline to path inside root, after
// checking that path is one irqnuma writes and that it does not lead out
// of root through a symlink. The error is a *WriteError.
func writeValue(w Writer, fsys kfile.FS, p, value string) error {
	return writeBytes(w, fsys, p, value, []byte(value+"\n"))
}

// writeBytes is writeValue writing data, which says value.
func writeBytes(w Writer, fsys kfile.FS, p, value string, data []byte) error {
	if err := writable(p); err != nil {
		return &WriteError{Path: p, Value: value, Err: err}
	}
	if rw, ok := w.(rootWriter); ok {
		if err := rw.writeIn(fsys, fsys.Path(p), data); err != nil {
			return &WriteError{Path: p, Value: value, Err: kfile.UnwrapPath(err), kernel: isKernelFile(fsys, p)}
		}
		return nil
	}
	full, err := irq.ResolveIn(fsys, p)
	if err != nil {
		return &WriteError{Path: p, Value: value, Err: err}
	}
	if err := w.WriteFile(full, data); err != nil {
		return &WriteError{Path: p, Value: value, Err: kfile.UnwrapPath(err), kernel: isKernelFile(fsys, p)}
	}
	return nil
}

// writable says why p is not a file irqnuma writes, nil when it is: an
// IRQ's affinity, a tx queue's xps_cpus (irq.ParseTarget), or a setting
// (parseSetting).
func writable(p string) error {
	_, err := irq.ParseTarget(p)
	if err == nil {
		return nil
	}
	if _, serr := parseSetting(p); serr == nil {
		return nil
	}
	return err
}

// isKernelFile reports whether p under fsys's root is the kernel's own
// file (procfs or sysfs), whose EIO or EPERM means a managed IRQ. Tests
// replace it to play a kernel in a host tree.
var isKernelFile = func(fsys kfile.FS, p string) bool {
	k, err := fsys.IsKernelPath(fsys.Path(p))
	return err == nil && k
}

// Change is one value to write, with the value it replaces.
type Change struct {
	Path string // rooted path inside the host; see irq.ParseTarget
	From string // the value before, as the kernel printed it (what rollback writes)
	// FromRaw, when set, is the file's bytes before (From with its
	// newline, or without one in a host tree's copy): rollback writes
	// them back exactly.
	FromRaw []byte
	To      string // the value to write
}

// Result is what became of a change, as the JSON output names it.
type Result string

// Results of a change.
const (
	ResultChanged    Result = "changed"
	ResultUnchanged  Result = "unchanged"
	ResultSkipped    Result = "skipped"
	ResultFailed     Result = "failed"
	ResultRolledBack Result = "rolled-back"
	ResultGone       Result = "gone"    // restore: the IRQ or queue no longer exists
	ResultPlanned    Result = "planned" // a change not made (yet): a dry run
)

// ChangeResult is what became of one Change.
type ChangeResult struct {
	Result Result
	// Managed is set when the kernel refused the write as a managed IRQ;
	// Result is then ResultSkipped.
	Managed bool
	Err     error // the write's error, for failed and managed
	// RollbackErr is set when a rollback write of a changed value failed;
	// Result stays ResultChanged.
	RollbackErr error
	irq.ReadBack
}

// Stop says why Apply ended early.
type Stop int

// Reasons Apply stops.
const (
	StopCompleted   Stop = iota // every change was tried
	StopFailed                  // a write failed and everything changed was rolled back
	StopInterrupted             // ctx was cancelled; everything changed was rolled back
)

// applyOptions tunes Apply.
type applyOptions struct {
	// KeepGoing carries on past a failed write instead of rolling back.
	KeepGoing bool
}

// apply writes changes in order, all or nothing, as one transaction of
// affinity steps. A write the kernel refuses as managed is skipped. Any
// other failure stops the run and rolls back every change already made,
// newest first, unless KeepGoing. A cancelled ctx is noticed between
// writes: the current write finishes, then everything is rolled back.
// Rollback itself ignores ctx. Every touched file is read back at the end.
func apply(ctx context.Context, w Writer, fsys kfile.FS, changes []Change, opt applyOptions) ([]ChangeResult, Stop) {
	res := make([]ChangeResult, len(changes))
	tx := txn{steps: affinitySteps(w, fsys, changes, res), keepGoing: opt.KeepGoing}
	stop := tx.run(ctx)
	readBackChanges(fsys, changes, res)
	return res, stop
}

// affinitySteps are the steps that write changes, each recording what
// became of it in res (which starts as unchanged).
func affinitySteps(w Writer, fsys kfile.FS, changes []Change, res []ChangeResult) []step {
	steps := make([]step, len(changes))
	for i := range changes {
		res[i].Result = ResultUnchanged
		steps[i] = &affinityStep{w: w, fsys: fsys, c: &changes[i], r: &res[i]}
	}
	return steps
}

// putBackAll writes changes that put a host back (a restore, a rollback's
// second pass) as one final txn: every one is tried whatever fails, a stop
// signal does not cut it short, and nothing is undone. Every touched file
// is read back at the end.
func putBackAll(ctx context.Context, w Writer, fsys kfile.FS, changes []Change) []ChangeResult {
	res := make([]ChangeResult, len(changes))
	tx := txn{steps: affinitySteps(w, fsys, changes, res), final: true}
	tx.run(ctx)
	readBackChanges(fsys, changes, res)
	return res
}

// readBackChanges reads every changed file back into its result.
func readBackChanges(fsys kfile.FS, changes []Change, res []ChangeResult) {
	for i, c := range changes {
		res[i].ReadBack = irq.ReadBackOf(fsys, c.Path)
	}
}

// affinityStep writes one Change: an IRQ's affinity file or a queue's
// xps_cpus. Its undo writes back the file's bytes before.
type affinityStep struct {
	w    Writer
	fsys kfile.FS
	c    *Change
	r    *ChangeResult
}

func (s *affinityStep) do() error { return writeValue(s.w, s.fsys, s.c.Path, s.c.To) }

func (s *affinityStep) done(err error) bool {
	switch {
	case err == nil:
		s.r.Result = ResultChanged
	case errors.Is(err, ErrManaged):
		s.r.Result, s.r.Managed, s.r.Err = ResultSkipped, true, err
	default:
		s.r.Result, s.r.Err = ResultFailed, err
		return true
	}
	return false
}

func (s *affinityStep) undo() error {
	data := s.c.FromRaw
	if data == nil {
		data = []byte(s.c.From + "\n")
	}
	return writeBytes(s.w, s.fsys, s.c.Path, s.c.From, data)
}

func (s *affinityStep) undone(err error) {
	if err != nil {
		s.r.RollbackErr = err // Result stays ResultChanged
		return
	}
	s.r.Result = ResultRolledBack
}

func (s *affinityStep) strict() bool { return false }
