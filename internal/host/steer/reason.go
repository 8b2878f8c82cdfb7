package steer

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// RecordDir is where a root keeps the recorded answers, relative to it.
const RecordDir = "irqnuma/steer"

const recordDir = RecordDir

// errnoSuffix marks the file that holds the errno a request got.
const errnoSuffix = ".errno"

// errNotCaptured says a recorded root holds no answer for a request.
var errNotCaptured = errors.New("not captured")

// unreadableError is a recorded answer, or a reply, that cannot be
// decoded.
type unreadableError struct {
	what string // the file, or the request
	err  error
}

func (e *unreadableError) Error() string { return e.what + ": " + e.err.Error() }
func (e *unreadableError) Unwrap() error { return e.err }

func unreadable(what string, format string, args ...any) error {
	return &unreadableError{what: what, err: fmt.Errorf(format, args...)}
}

// notCapturedError names the file a recorded root lacks.
type notCapturedError struct{ file string }

func (e *notCapturedError) Error() string { return e.file + " not captured" }
func (e *notCapturedError) Is(t error) bool {
	return t == errNotCaptured
}

// ReasonOf is why a part is unknown after err: unknown.KindDriver for
// EOPNOTSUPP, unknown.KindPermission for EPERM and EACCES, unknown.KindFailed for another
// errno, and the reading's own kinds (not captured, unreadable, a kernel
// without the command). A writer words a refusal with it too.
func ReasonOf(err error) unknown.Reason {
	var nc *notCapturedError
	if errors.As(err, &nc) {
		return unknown.Reason{Kind: unknown.KindNotCaptured, Detail: nc.file}
	}
	var ue *unreadableError
	if errors.As(err, &ue) {
		return unknown.Reason{Kind: unknown.KindMalformed, Detail: ue.Error()}
	}
	var ke *kernelError
	if errors.As(err, &ke) {
		return unknown.Reason{Kind: unknown.KindKernel, Detail: ke.what}
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		name := kfile.ErrnoName(errno)
		switch errno {
		case unix.EOPNOTSUPP:
			return unknown.Reason{Kind: unknown.KindDriver, Detail: name}
		case unix.EPERM, unix.EACCES:
			return unknown.Reason{Kind: unknown.KindPermission, Detail: name}
		}
		return unknown.Reason{Kind: unknown.KindFailed, Detail: name}
	}
	return unknown.Reason{Kind: unknown.KindFailed, Detail: err.Error()}
}

// kernelError says this kernel lacks a family or command.
type kernelError struct{ what string }

func (e *kernelError) Error() string { return e.what }

// maxAnswer bounds one recorded answer's size: a 64-queue NIC's
// replies are a few tens of kB.
const maxAnswer = 16 << 20

var native = binary.NativeEndian

func clipString(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
