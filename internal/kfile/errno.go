package kfile

import (
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The errno files of a recorded kernel answer (steer's and nslink's
// ".errno" files) hold the errno a request got as the kernel's sources
// name it, and a newline.

// ErrnoName is the errno's name as the kernel's sources spell it: 95 is
// EOPNOTSUPP (ENOTSUP is the same number, and what libc calls it).
func ErrnoName(e unix.Errno) string {
	if e == unix.EOPNOTSUPP {
		return "EOPNOTSUPP"
	}
	if name := unix.ErrnoName(e); name != "" {
		return name
	}
	return fmt.Sprintf("errno %d", int(e))
}

// FormatErrno is what an errno file holds for e.
func FormatErrno(e unix.Errno) []byte { return []byte(ErrnoName(e) + "\n") }

// ParseErrno reads an errno file: an errno's name and a newline.
func ParseErrno(b []byte) (unix.Errno, error) {
	s := strings.TrimSuffix(string(b), "\n")
	e, ok := errnoByName()[s]
	if !ok {
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return 0, fmt.Errorf("not an errno name: %q", s)
	}
	return e, nil
}

// errnoByName maps errno names back to errnos.
var errnoByName = sync.OnceValue(func() map[string]unix.Errno {
	m := map[string]unix.Errno{}
	for e := unix.Errno(1); e < 4096; e++ {
		if name := unix.ErrnoName(e); name != "" {
			m[name] = e
		}
	}
	m["EOPNOTSUPP"] = unix.EOPNOTSUPP
	return m
})
