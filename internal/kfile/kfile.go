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
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
)

// MaxSize bounds one read. /proc/interrupts on a 1,152-CPU host with
// thousands of IRQs is a few tens of MB; no single file irqnuma reads is
// near this.
const MaxSize = 256 << 20

// ErrTooLarge is returned for a file longer than the bound.
var ErrTooLarge = errors.New("file too large")

// Read returns the whole file.
func Read(path string) ([]byte, error) {
	return ReadLimit(path, MaxSize)
}

// ReadLimit returns the whole file, failing when it exceeds limit bytes.
func ReadLimit(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A regular file's size is a good first guess; pseudo-files say 0 or
	// 4096 whatever they hold, so the read goes on to EOF regardless.
	size := int64(512)
	if st, err := f.Stat(); err == nil && st.Size() > 0 && st.Size() < limit {
		size = st.Size() + 1
	}
	return readAll(f, path, limit, size)
}

func readAll(f *os.File, path string, limit, size int64) ([]byte, error) {
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, len(buf))...)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, fmt.Errorf("read %s: %w (over %d bytes)", path, ErrTooLarge, limit)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
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
