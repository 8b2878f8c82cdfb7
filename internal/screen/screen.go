// Package screen draws text in place on a terminal, fitted to its size,
// and reads q or Ctrl-C from the keyboard in raw mode: what a live view
// such as irqnuma watch needs and nothing more.
package screen

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// Screen is a terminal being redrawn. Close restores it; callers defer
// it, so every way out (q, Ctrl-C, a stop signal through the context,
// an error, a panic) restores the terminal.
type Screen struct {
	out    *os.File
	in     *os.File      // nil when stdin is not a terminal
	state  *term.State   // the terminal's mode before raw mode
	done   chan struct{} // closed on q or Ctrl-C
	closed bool
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Open takes over the terminal out: it hides the cursor and, when stdin
// is a terminal too, puts it in raw mode to read keys.
func Open(out *os.File, stdin io.Reader) (*Screen, error) {
	s := &Screen{out: out, done: make(chan struct{})}
	if in, ok := stdin.(*os.File); ok && term.IsTerminal(int(in.Fd())) {
		st, err := term.MakeRaw(int(in.Fd()))
		if err != nil {
			return nil, fmt.Errorf("terminal raw mode: %w", err)
		}
		s.in, s.state = in, st
		go s.readKeys()
	}
	if _, err := io.WriteString(out, "\x1b[?25l"); err != nil { // hide the cursor
		s.Close()
		return nil, err
	}
	return s, nil
}

// readKeys closes done on q, Q or Ctrl-C (raw mode delivers it as a byte,
// not a signal). It ends when stdin does.
func (s *Screen) readKeys() {
	buf := make([]byte, 16)
	for {
		n, err := s.in.Read(buf)
		if bytes.ContainsAny(buf[:n], "qQ\x03") {
			close(s.done)
			return
		}
		if err != nil {
			return
		}
	}
}

// Quit is closed when the user presses q or Ctrl-C.
func (s *Screen) Quit() <-chan struct{} { return s.done }

// Size is the window's width and height, 80x24 when it cannot be told.
func (s *Screen) Size() (w, h int) {
	w, h, err := term.GetSize(int(s.out.Fd()))
	if err != nil || w <= 0 || h <= 0 {
		return 80, 24
	}
	return w, h
}

// Draw puts text at the top left, each line cleared to its end, the rest
// of the screen cleared, and cuts it to the window's size. Raw mode turns
// off the newline translation, so lines end in CR LF.
func (s *Screen) Draw(text string) error {
	width, height := s.Size()
	_, err := io.WriteString(s.out, fit(text, width, height))
	return err
}

// fit is the terminal output Draw writes for text on a window of width
// by height: cut to the window, the last line saying what was cut.
func fit(text string, width, height int) string {
	height = max(height, 3)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) > height-1 {
		more := len(lines) - (height - 2)
		lines = append(lines[:height-2], fmt.Sprintf("... %d more lines: enlarge the window", more))
	}
	var b strings.Builder
	b.WriteString("\x1b[H")
	for _, l := range lines {
		if r := []rune(l); len(r) > width {
			l = string(r[:width])
		}
		b.WriteString(l + "\x1b[K\r\n")
	}
	b.WriteString("\x1b[J")
	return b.String()
}

// Close shows the cursor again and restores the terminal mode.
func (s *Screen) Close() {
	if s.closed {
		return
	}
	s.closed = true
	io.WriteString(s.out, "\x1b[?25h")
	if s.state != nil {
		term.Restore(int(s.in.Fd()), s.state)
	}
}

// Width is how many columns a command's human output may take: columns
// (the value of $COLUMNS, which the caller reads) when it is a positive
// number, else the terminal's width when out is one, else 0: output to a
// pipe or a file is not wrapped, so each finding stays on one line for
// grep.
func Width(columns string, out any) int {
	if n, err := strconv.Atoi(strings.TrimSpace(columns)); err == nil && n > 0 {
		return n
	}
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 0
}
