// Package usage is the one marker for an error that is the user's to
// fix: a bad flag, value or argument, or a name the host does not have.
// Libraries mark their refusals with it without knowing the CLI;
// internal/cli turns every error that Is ErrUsage into exit 2.
package usage

import (
	"errors"
	"fmt"
)

// ErrUsage is what every usage error Is: errors.Is(err, ErrUsage)
// reports whether err, or any error it wraps, is the user's to fix.
var ErrUsage = errors.New("usage error")

// Is reports whether err is the user's to fix: errors.Is(err, ErrUsage).
func Is(err error) bool { return errors.Is(err, ErrUsage) }

// New returns a sentinel with text as its message that is also
// ErrUsage: a library's ErrUnknownNIC, which callers test with
// errors.Is, and which every error wrapping it makes the user's.
func New(text string) error { return &sentinel{text} }

type sentinel struct{ text string }

func (e *sentinel) Error() string        { return e.text }
func (e *sentinel) Is(target error) bool { return target == ErrUsage }

// Wrap marks err as the user's to fix, its message unchanged; nil stays
// nil.
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return &marked{err: err}
}

// Errorf is Wrap(fmt.Errorf(format, args...)).
func Errorf(format string, args ...any) error {
	return &marked{err: fmt.Errorf(format, args...)}
}

// Kind marks err as the user's to fix and as kind (a sentinel from New),
// its message unchanged: errors.Is(Kind(k, err), k) holds though k's text
// is not in the message.
func Kind(kind, err error) error {
	return &marked{err: err, kind: kind}
}

// marked is err, marked as the user's and, when kind is set, as kind.
type marked struct {
	err  error
	kind error
}

func (e *marked) Error() string { return e.err.Error() }
func (e *marked) Unwrap() error { return e.err }
func (e *marked) Is(target error) bool {
	return target == ErrUsage || (e.kind != nil && target == e.kind)
}
