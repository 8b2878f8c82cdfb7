package steer

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/unknown"
)

// ErrText is wrapped by every error of the ethtool and ynl text parsers
// (ParseEthtoolX and the rest): the text is not what the command prints,
// or lacks a part it always prints. The message names the command, the
// line and what is wrong with it.
var ErrText = errors.New("unreadable command output")

// maxTextLines bounds how many lines a parser reads; the longest real
// output (ethtool -x of a 2048-entry table, ethtool -k) is a few hundred.
const maxTextLines = 1 << 16

// textErr is an error of the parser of cmd's output at line (1-based; 0
// for the text as a whole).
func textErr(cmd string, line int, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		return fmt.Errorf("%s: line %d: %s: %w", cmd, line, msg, ErrText)
	}
	return fmt.Errorf("%s: %s: %w", cmd, msg, ErrText)
}

// textLine is one line of a command's output, with its 1-based number.
type textLine struct {
	n    int
	text string // without the line break; a trailing \r is dropped
}

// textLines splits b into lines, leaving out blank lines and the '#' comments
// captures carry (a root prompt, a note of the author's: ethtool and ynl
// never print a line that starts with '#'). A shell prompt ("$ ") is an
// error: a session holds several outputs, SplitSession separates them.
func textLines(cmd string, b []byte) ([]textLine, error) {
	var out []textLine
	n := 0
	for len(b) > 0 {
		n++
		if n > maxTextLines {
			return nil, textErr(cmd, 0, "more than %d lines", maxTextLines)
		}
		var l []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i], b[i+1:]
		} else {
			l, b = b, nil
		}
		s := strings.TrimSuffix(string(l), "\r")
		t := strings.TrimSpace(s)
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
			continue
		case strings.HasPrefix(t, "$ "):
			return nil, textErr(cmd, n, "a shell prompt %q: a session holds several outputs, split it with SplitSession", textClip(t))
		}
		out = append(out, textLine{n: n, text: s})
	}
	return out, nil
}

// textElided reports whether a line is a capture author's mark of left-out
// output ("...", "[...]", "[...snip...]", "...skip similar lines..."),
// which ethtool and ynl never print.
func textElided(t string) bool {
	t = strings.TrimSpace(t)
	return strings.HasPrefix(t, "...") || strings.HasPrefix(t, "[...")
}

// textKV splits "key: value" at its first colon, trimming both sides;
// the tabs ethtool aligns values with may be spaces or missing in a
// capture. ok is false without a colon.
func textKV(s string) (key, value string, ok bool) {
	i := strings.IndexByte(s, ':')
	if i < 0 {
		return "", "", false
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:]), true
}

// textNA is what ethtool prints for a value the kernel did not
// report.
const textNA = "n/a"

// textU32 reads a decimal u32 as ethtool prints it with %u.
func textU32(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number from 0 to %d", textClip(s), uint32(1<<32-1))
	}
	return uint32(v), nil
}

// textOnOff reads ethtool's "on" or "off".
func textOnOff(s string) (bool, error) {
	switch s {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is neither on nor off", textClip(s))
}

// textClip shortens a piece of input quoted in an error.
func textClip(s string) string {
	const limit = 60
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}

// textErrnoWhy maps the strerror text ethtool prints after a failed request
// to why the part is unknown.
func textErrnoWhy(msg string) unknown.Kind {
	switch msg {
	case "Operation not supported", "Not supported":
		return unknown.KindDriver
	case "Operation not permitted", "Permission denied":
		return unknown.KindPermission
	}
	return unknown.KindFailed
}

// ethtoolFailure reports whether b is ethtool's message that a request
// failed, and no output: "Cannot get device ring settings: Operation not
// supported", "netlink error: Operation not supported" (what ethtool
// writes to stderr, which a sosreport keeps in the command's file). The
// reason says what the kernel answered; Detail quotes the message.
func ethtoolFailure(b []byte) (unknown.Reason, bool) {
	ls, err := textLines("ethtool", b)
	if err != nil || len(ls) == 0 {
		return unknown.Reason{}, false
	}
	for _, l := range ls {
		t := strings.TrimSpace(l.text)
		if !strings.HasPrefix(t, "Cannot ") && !strings.HasPrefix(t, "netlink error: ") {
			return unknown.Reason{}, false
		}
	}
	last := strings.TrimSpace(ls[len(ls)-1].text)
	msg := last[strings.LastIndex(last, ": ")+2:]
	return unknown.Reason{Kind: textErrnoWhy(msg), Detail: textClip(last)}, true
}

// SessionCommand is one command of a captured shell session and what it printed.
type SessionCommand struct {
	// Line is the text of the prompt line without "$ "; "" for output
	// before the first prompt.
	Line   string
	Output []byte
}

// splitSession splits a captured terminal session into its commands: each
// line that starts with "$ " begins one, and its output runs to the next.
// Text before the first prompt is a SessionCommand with an empty Line (a capture
// that is not a session is one such SessionCommand).
func splitSession(b []byte) []SessionCommand {
	var out []SessionCommand
	cur := SessionCommand{}
	started := false
	for len(b) > 0 {
		var l []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i+1], b[i+1:]
		} else {
			l, b = b, nil
		}
		t := strings.TrimSpace(string(l))
		if strings.HasPrefix(t, "$ ") {
			if started || len(cur.Output) > 0 {
				out = append(out, cur)
			}
			cur = SessionCommand{Line: strings.TrimSpace(t[2:])}
			started = true
			continue
		}
		cur.Output = append(cur.Output, l...)
	}
	if started || len(cur.Output) > 0 {
		out = append(out, cur)
	}
	return out
}

// errf is fmt.Errorf for the parsers' inner errors, which textErr wraps
// with the command and line.
func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }
