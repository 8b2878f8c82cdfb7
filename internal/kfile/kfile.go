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
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/cpuset"
)

// MaxSize bounds one read. /proc/interrupts on a 1,152-CPU host with
// thousands of IRQs is a few tens of MB; no single file irqnuma reads is
// near this.
const MaxSize = 256 << 20

// ErrTooLarge is returned for a file longer than the bound.
var ErrTooLarge = errors.New("file too large")

// Read returns the whole file. A regular file's size (a copied tree's
// /proc/interrupts can be tens of MB) sizes the buffer at once.
func Read(path string) ([]byte, error) {
	b, _, err := read(path, nil, MaxSize, true)
	return b, err
}

// ReadLimit returns the whole of a small file, failing when it exceeds
// limit bytes. It does not stat the file: an attribute of a line or two
// costs an open, two reads and a close.
func ReadLimit(path string, limit int64) ([]byte, error) {
	b, _, err := read(path, nil, limit, false)
	return b, err
}

// ReadMode reads a small file into buf (reused when large enough) and
// returns its content and permission bits. It is the hot path of reading
// thousands of /proc/irq files: raw open, fstat, read and close, without
// the runtime poller registration os.Open does.
func ReadMode(path string, buf []byte) ([]byte, os.FileMode, error) {
	return read(path, buf, 1<<20, true)
}

// ReadInto reads a small file into buf (reused when large enough), as
// ReadMode without the fstat.
func ReadInto(path string, buf []byte) ([]byte, error) {
	b, _, err := read(path, buf, 1<<20, false)
	return b, err
}

// traceFn, when set, is told the path of every file read (Trace).
var traceFn atomic.Pointer[func(string)]

// Trace calls fn with the path of every file read until stop is called.
// It is for benchmarks that compare a command with merely reading the
// files it reads; nothing else sets it.
func Trace(fn func(path string)) (stop func()) {
	traceFn.Store(&fn)
	return func() { traceFn.Store(nil) }
}

// read reads path to its end into buf; with stat it also returns the
// file's permission bits and sizes the buffer from a regular file's size.
func read(path string, buf []byte, limit int64, stat bool) ([]byte, os.FileMode, error) {
	if fn := traceFn.Load(); fn != nil {
		(*fn)(path)
	}
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var mode os.FileMode
	size := int64(512)
	if stat {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return nil, 0, &fs.PathError{Op: "stat", Path: path, Err: err}
		}
		mode = os.FileMode(st.Mode & 0o777)
		// A regular file's size is a good first guess; pseudo-files say 0
		// (proc) or 4096 (sysfs) whatever they hold, so the read goes on
		// to EOF regardless, and a size of a page or less is no reason to
		// allocate a page for a one-line attribute.
		if st.Size > 4096 && st.Size < limit {
			size = st.Size + 1
		}
	}
	if int64(cap(buf)) < size {
		buf = make([]byte, 0, size)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, len(buf))...)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, 0, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, mode, nil
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, 0, fmt.Errorf("read %s: %w (over %d bytes)", path, ErrTooLarge, limit)
		}
	}
}

// String returns the file's content with one trailing newline removed, as
// the kernel ends every attribute with one. Trailing NUL bytes are dropped
// first: the kernel never writes them, but some captured trees (hwloc's)
// pad files with them.
func String(path string) (string, error) {
	b, err := ReadLimit(path, 1<<20)
	if err != nil {
		return "", err
	}
	return string(TrimAttr(b)), nil
}

// TrimAttr drops the trailing newline and any NUL padding around it
// ("0-31\n\x00" and "\x00\n" are both seen in captures).
func TrimAttr(b []byte) []byte {
	return bytes.TrimRight(b, "\x00\n")
}

// Int reads a decimal integer attribute such as numa_node ("-1").
func Int(path string) (int, error) {
	s, err := String(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("read %s: not an integer: %q", path, clip(s))
	}
	return n, nil
}

// List reads a CPU or node list attribute ("0-3,8-11"). A file the
// kernel leaves empty is the empty set.
func List(path string) (cpuset.Set, error) {
	s, err := String(path)
	if err != nil {
		return cpuset.Set{}, err
	}
	set, err := cpuset.ParseList(strings.TrimSpace(s))
	if err != nil {
		return cpuset.Set{}, fmt.Errorf("read %s: %w", path, err)
	}
	return set, nil
}

// Mask reads a CPU mask attribute ("ffff0000,0000ffff").
func Mask(path string) (cpuset.Set, error) {
	s, err := String(path)
	if err != nil {
		return cpuset.Set{}, err
	}
	set, err := cpuset.ParseMask(strings.TrimSpace(s))
	if err != nil {
		return cpuset.Set{}, fmt.Errorf("read %s: %w", path, err)
	}
	return set, nil
}

// IsNotExist reports whether err says the file is absent.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
