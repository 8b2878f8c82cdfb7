// Package cli is the contract every irqnuma command keeps with its
// caller: the exit codes (the README's table), the two kinds of error a
// command returns besides a plain failure (the user's mistake, and an
// exit with a chosen code), and how an error becomes an exit code and a
// line on stderr.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/irqnuma/irqnuma/internal/safetext"
	"github.com/irqnuma/irqnuma/internal/shutdown"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// Exit codes, the same for every command.
const (
	ExitOK       = 0
	ExitError    = 1 // runtime error
	ExitUsage    = 2 // bad flags or arguments
	ExitFindings = 3 // audit found something at or above --fail-on
	// 128+signo when a signal stopped the command: 129 SIGHUP, 130
	// SIGINT, 143 SIGTERM; 141 when the output's reader went away.
	ExitBrokenPipe = 128 + 13
	// ExitInternal is a bug in irqnuma (sysexits' EX_SOFTWARE): a panic
	// caught, never exit 2, which says the user typed something wrong.
	ExitInternal = 70
)

// ExitStatus is the table of exit codes, as the README and the manual
// page print it.
const ExitStatus = `  0      success (audit: nothing at or above --fail-on)
  1      runtime error: a file could not be read or written, a write
         was refused and rolled back, a restore left values behind
  2      usage error: a bad flag, value or argument, an unknown NIC
  3      audit: a finding at or above --fail-on
  70     internal error: a bug in irqnuma (please report it)
  126    exec: the command cannot be run
  127    exec: the command is not found
  128+N  stopped by signal N (129 SIGHUP, 130 SIGINT, 143 SIGTERM),
         after undoing what it had written; exec: the command was
         killed by signal N
  141    the reader of the output went away (irqnuma ... | head)`

// Usage marks err as the user's: bad flags or arguments (exit 2). It is
// usage.Wrap, the one marker libraries use too.
func Usage(err error) error { return usage.Wrap(err) }

// Usagef is Usage(fmt.Errorf(format, args...)).
func Usagef(format string, args ...any) error { return usage.Errorf(format, args...) }

// UnknownCommand is the usage error for name given where path wants one
// of its subcommands: `unknown command "pinn" for "irqnuma irq"; did you
// mean "pin"?`, offering near (the nearest names), or pointing to --help
// when nothing is near.
func UnknownCommand(path, name string, near []string) error {
	if len(near) == 0 {
		return Usagef("unknown command %q for %q (see %s --help)", name, path, path)
	}
	q := make([]string, len(near))
	for i, n := range near {
		q[i] = strconv.Quote(n)
	}
	return Usagef("unknown command %q for %q; did you mean %s?", name, path, strings.Join(q, " or "))
}

// FlagError is a usage error for a bad flag that names the flag and
// says what it wants: "--cpus: cpu list "3-1": ...", "--count "x": want a
// whole number", where pflag says "invalid argument "3-1" for "--cpus"
// flag: ...".
func FlagError(err error) error {
	ve := (*pflag.InvalidValueError)(nil)
	if !errors.As(err, &ve) || errors.Unwrap(ve) == nil {
		return Usage(err)
	}
	switch f := ve.GetFlag(); f.Value.Type() {
	case "duration":
		return Usagef("--%s %s: want a duration such as 1s or 200ms", f.Name, quoteArg(ve.GetValue()))
	case "int", "intSlice", "uint":
		return Usagef("--%s %s: want a whole number", f.Name, quoteArg(ve.GetValue()))
	default:
		return Usagef("--%s: %w", f.Name, errors.Unwrap(ve))
	}
}

// quoteArg quotes a flag's value for an error, cut at 64 bytes with the
// bytes it left out said, so a 114 KB argument does not come back whole.
func quoteArg(s string) string {
	const keep = 64
	if len(s) <= keep {
		return strconv.Quote(s)
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d more bytes)", s[:cut], len(s)-cut)
}

// exitError ends a command with a given code after its output.
type exitError struct {
	code int
	err  error // may be nil: nothing more to say
}

func (e exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// Exit ends a command with code, saying err (nothing when nil): an audit
// that found problems, a pin rolled back by a signal, a command exec ran.
func Exit(code int, err error) error { return exitError{code, err} }

// Code turns what a command returned into its exit code, writing the
// error, if there is one to say, to stderr as one "irqnuma: ..." line:
// EPIPE (the reader went away) is 141 and silent; Exit's code is kept; a
// command a stop signal cut short exits 128+signo; the user's mistakes
// (every error that is usage.ErrUsage, cobra's own argument errors) are 2.
func Code(ctx context.Context, err error, stderr io.Writer) int {
	if errors.Is(err, syscall.EPIPE) {
		return ExitBrokenPipe
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			writeError(stderr, ee.err)
		}
		return ee.code
	}
	if code, ok := shutdown.ExitCode(ctx); ok {
		// Stopped by a signal: what it cut short is not an error to report.
		if err != nil && !errors.Is(err, context.Canceled) {
			writeError(stderr, err)
		}
		return code
	}
	if err == nil {
		return ExitOK
	}
	writeError(stderr, err)
	if usage.Is(err) || isCobraUsage(err) {
		return ExitUsage
	}
	return ExitError
}

// isCobraUsage recognises the argument errors cobra makes itself (its
// positional-argument validators and unknown subcommands), which carry no
// type to test.
func isCobraUsage(err error) bool {
	s := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// writeError writes err as "irqnuma: ..." lines: one per line of its text
// (errors.Join puts each error on a line of its own), each escaped, since
// an error may quote a name from the host or from the user that holds
// control bytes or line breaks.
func writeError(w io.Writer, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(w, "irqnuma: %s\n", safetext.Escape(line))
	}
}
