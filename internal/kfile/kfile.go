// Package kfile reads the small pseudo-files of /proc and /sys: whole, once,
// with a size bound, and with errors that name the file.
//
// Pseudo-files report a size of 0 or 4096 whatever they hold, so the size
// from stat is never trusted; a read stops at MaxSize and says so.
package kfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// MaxSize bounds one read. /proc/interrupts on a 1,152-CPU host with
// thousands of IRQs is a few tens of MB; no single file irqnuma reads is
// near this.
const MaxSize = 256 << 20

// ErrTooLarge is returned for a file longer than the bound.
var ErrTooLarge = errors.New("file too large")

// ErrFileParse is what every error about a kernel file's content Is: the
// file was read, but does not hold what its format says (a cpulist that
// is not one, /proc/interrupts with a row past its header). The error
// names the file; see ParseError.
var ErrFileParse = errors.New("malformed kernel file")

// FormatSentinel returns a parser's sentinel for text that is not in
// its file's format ("not in /proc/interrupts format"): an error with
// that text that is also ErrFileParse, so one errors.Is finds every
// kernel file that does not parse, whichever parser said it.
func FormatSentinel(text string) error { return formatSentinel(text) }

type formatSentinel string

func (e formatSentinel) Error() string        { return string(e) }
func (e formatSentinel) Is(target error) bool { return target == ErrFileParse }

// ParseError is a kernel file whose content does not parse: "read
// /sys/.../cpulist: what is wrong". It is ErrFileParse, and wraps Err,
// so errors.Is finds both the kind and what the parser said
// (cpuset.ErrSyntax, interrupts.ErrFormat).
type ParseError struct {
	Op   ParseOp
	Path string
	Err  error
}

// ParseOp is what was being done to the file when its content turned
// out wrong, the first word of a ParseError.
type ParseOp string

// The ParseOps.
const (
	ParseOpRead  ParseOp = "read"  // read and checked as it was read
	ParseOpParse ParseOp = "parse" // read whole, then parsed
)

func (e *ParseError) Error() string        { return string(e.Op) + " " + e.Path + ": " + e.Err.Error() }
func (e *ParseError) Unwrap() error        { return e.Err }
func (e *ParseError) Is(target error) bool { return target == ErrFileParse }

// Malformed is the error for the file path whose content err says is
// wrong: "read PATH: err", a *ParseError.
func Malformed(path string, err error) error {
	return &ParseError{Op: ParseOpRead, Path: path, Err: err}
}

// Malformedf is Malformed(path, fmt.Errorf(format, args...)).
func Malformedf(path, format string, args ...any) error {
	return Malformed(path, fmt.Errorf(format, args...))
}

// ErrSpecial is returned for a file of a tree that is a device, a FIFO
// or a socket, which no pseudo-file of /proc or /sys is: reading one
// could block, never end, or read a device.
var ErrSpecial = errors.New("not a regular file")

// specialKind names the type of a device, FIFO or socket, and is empty
// for anything else.
func specialKind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFCHR:
		return "character device"
	case unix.S_IFBLK:
		return "block device"
	case unix.S_IFIFO:
		return "FIFO"
	case unix.S_IFSOCK:
		return "socket"
	}
	return ""
}

// Op is what a traced operation asked of the root (Trace).
type Op string

// The operations Trace reports.
const (
	OpRead     Op = "read"     // a file's content: Read, ReadLimit, ReadMode, ReadInto, ReadBuf, String, Int, List, Mask, OpenFile for reading, and a Kept file's open
	OpReread   Op = "reread"   // a Kept file, open already, read again from its start
	OpReadDir  Op = "readdir"  // a folder's listing
	OpStat     Op = "stat"     // what a path is, links followed: Stat, and IsKernelPath's statfs
	OpLstat    Op = "lstat"    // what a path is, a last link not followed
	OpReadlink Op = "readlink" // a link's target
	OpResolve  Op = "resolve"  // a path's real path: Resolve
	OpWrite    Op = "write"    // OpenFile or OpenKernelFile for writing
)

// Access is one operation on a root, as Trace reports it.
type Access struct {
	Op   Op
	Root string // the FS's root, as given to Open
	Path string // as given to the method: root + "/sys/..."
	// Rel is Path relative to the root, slash-separated ("sys/...",
	// "." for the root itself), and "" for a path not under it (which
	// the operation refused).
	Rel string
	// Err is the operation's error, nil when it succeeded; a path the
	// root lacks is one IsNotExist says so of ("tried, absent").
	Err error
}

// tracers are the functions Trace registered: an immutable slice,
// replaced whole, so an FS operation pays one atomic load when none is.
var (
	tracers   atomic.Pointer[[]*func(Access)]
	tracersMu sync.Mutex
)

// Trace calls fn with every operation any FS performs that reads the
// root (its files, folder listings, links and stats) and every write it
// opens, until stop is called: the path and whether it was there. It is
// for tests that hold the snapshot to what the readers read, and for
// benchmarks that compare a command with merely reading the files it
// reads; nothing else sets it. fn may be called from several goroutines
// at once, and is called for every root: filter on Access.Root.
func Trace(fn func(Access)) (stop func()) {
	p := &fn
	tracersMu.Lock()
	defer tracersMu.Unlock()
	var next []*func(Access)
	if cur := tracers.Load(); cur != nil {
		next = append(next, *cur...)
	}
	next = append(next, p)
	tracers.Store(&next)
	var once sync.Once
	return func() {
		once.Do(func() {
			tracersMu.Lock()
			defer tracersMu.Unlock()
			var rest []*func(Access)
			for _, q := range *tracers.Load() {
				if q != p {
					rest = append(rest, q)
				}
			}
			if len(rest) == 0 {
				tracers.Store(nil)
				return
			}
			tracers.Store(&rest)
		})
	}
}

// trace reports an operation to the tracers, if any.
func (f FS) trace(op Op, p string, err error) {
	if t := tracers.Load(); t != nil {
		f.report(t, op, p, err)
	}
}

func (f FS) report(fns *[]*func(Access), op Op, p string, err error) {
	a := Access{Op: op, Root: f.root, Path: p, Err: err}
	if rel, rerr := f.rel(p); rerr == nil {
		a.Rel = rel
	}
	for _, fn := range *fns {
		(*fn)(a)
	}
}

// readFD reads the open file fd (named path in errors) to its end into
// buf; with stat it also returns the file's permission bits and sizes the
// buffer from a regular file's size. A read past limit bytes fails, so
// an endless file (a device, a FIFO's writer) cannot exhaust memory.
//
// With special false, a device, FIFO or socket is refused before it is
// read: in a tree every file irqnuma reads is a regular file or a folder
// (a kernel's pseudo-files are copied as regular files), and a device
// such as /dev/zero would be read to limit, a FIFO read as empty.
func readFD(fd int, path string, buf []byte, limit int64, stat, special bool) ([]byte, os.FileMode, error) {
	mode, size, err := fdInfo(fd, path, limit, stat, special)
	if err != nil {
		return nil, 0, err
	}
	if int64(cap(buf)) < size {
		buf = make([]byte, 0, size)
	}
	buf = buf[:0]
	var probe [1]byte
	for {
		buf = grown(buf, limit)
		// At the bound, one byte more says the file is too large.
		dst, probing := buf[len(buf):cap(buf)], len(buf) == cap(buf)
		if probing {
			dst = probe[:]
		}
		n, err := unix.Read(fd, dst)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, 0, readError(path, err)
		}
		if n == 0 {
			return buf, mode, nil
		}
		if !probing {
			buf = buf[:len(buf)+n]
		}
		if probing || int64(len(buf)) > limit {
			return nil, 0, fmt.Errorf("read %s: %w (over %d bytes)", path, ErrTooLarge, limit)
		}
	}
}

// fdInfo is what readFD needs to know of fd before it reads: its
// permission bits (with stat) and the buffer to start with, a device,
// FIFO or socket refused unless special.
func fdInfo(fd int, path string, limit int64, stat, special bool) (os.FileMode, int64, error) {
	size := int64(512)
	if !stat && special {
		return 0, size, nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if kind := specialKind(st.Mode); kind != "" && !special {
		return 0, 0, fmt.Errorf("read %s: %w: a %s", path, ErrSpecial, kind)
	}
	// A regular file's size is a good first guess, and one over limit is
	// read into one buffer of limit rather than grown up to it;
	// pseudo-files say 0 (proc) or 4096 (sysfs) whatever they hold, so
	// the read goes on to EOF regardless, and a size of a page or less is
	// no reason to allocate a page for a one-line attribute.
	if st.Size > 4096 {
		size = min(st.Size+1, limit)
	}
	return os.FileMode(st.Mode & 0o777), size, nil
}

// grown is buf with room to read into when it is full: its length again,
// but never past limit (a full buffer at limit is returned as it is).
func grown(buf []byte, limit int64) []byte {
	n := int64(len(buf))
	if n < int64(cap(buf)) || n >= limit {
		return buf
	}
	next := make([]byte, n, n+max(min(n, limit-n), 1))
	copy(next, buf)
	return next
}

// readError is the error of a read of path that failed with err.
func readError(path string, err error) error {
	switch err {
	case unix.EISDIR:
		return fmt.Errorf("read %s: is a folder, not a file", path)
	case unix.EAGAIN:
		return fmt.Errorf("read %s: would block: not a kernel attribute (a FIFO or a device?)", path)
	}
	return &fs.PathError{Op: "read", Path: path, Err: err}
}

// TrimAttr drops the trailing newline and any NUL padding around it
// ("0-31\n\x00" and "\x00\n" are both seen in captures). The kernel never
// writes NUL bytes, but some captured trees (hwloc's) pad files with them.
func TrimAttr(b []byte) []byte {
	return bytes.TrimRight(b, "\x00\n")
}

// IsNotExist reports whether err says the file is absent.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
