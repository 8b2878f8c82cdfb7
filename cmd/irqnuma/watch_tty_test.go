package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/testsupport/syncbuf"
)

// openPTY opens a pseudo-terminal of the given size and returns its
// controller and terminal sides.
func openPTY(t *testing.T, cols, rows uint16) (ctl, tty *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ctl.Close() })
	if err := unix.IoctlSetPointerInt(int(ctl.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ctl.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		t.Fatal(err)
	}
	return ctl, tty
}

var escapes = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// TestWatchTerminal runs watch on a pseudo-terminal 70 columns wide: the
// screen is drawn in place and fitted to the width, the terminal is in raw
// mode while it runs and restored however watch is stopped.
func TestWatchTerminal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give string
		stop func(ctl *os.File, cancel context.CancelFunc)
	}{
		{"q", func(ctl *os.File, _ context.CancelFunc) { ctl.Write([]byte("q")) }},
		{"ctrl-c", func(ctl *os.File, _ context.CancelFunc) { ctl.Write([]byte{3}) }},
		{"signal", func(_ *os.File, cancel context.CancelFunc) { cancel() }}, // main cancels the context on SIGINT/SIGTERM
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			root, ws := seedUnderLoad(t)
			ctl, tty := openPTY(t, 70, 40)
			before, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			var screen syncbuf.Buffer
			go func() {
				buf := make([]byte, 4096)
				for {
					n, err := ctl.Read(buf)
					screen.Write(buf[:n])
					if err != nil {
						return
					}
				}
			}()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stderr bytes.Buffer
			done := make(chan int, 1)
			go func() {
				done <- runSys(ctx, ws, []string{"--root", root, "watch", "--interval", "20ms", "--pid", "5001"}, tty, tty, &stderr)
			}()
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(screen.String(), "irqnuma watch  #2") {
				if time.Now().After(deadline) {
					t.Fatalf("no second frame after 20s; screen:\n%q\nstderr: %s", screen.String(), stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			raw, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			if raw.Lflag&unix.ICANON != 0 || raw.Lflag&unix.ECHO != 0 {
				t.Errorf("while watching, the terminal is not in raw mode (lflag %#x)", raw.Lflag)
			}
			tt.stop(ctl, cancel)
			select {
			case code := <-done:
				if code != 0 {
					t.Errorf("exit %d, stderr %q", code, stderr.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatal("watch did not stop")
			}
			after, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			if *after != *before {
				t.Errorf("terminal not restored:\nbefore %+v\nafter  %+v", *before, *after)
			}
			// Wait for the last bytes to come through the pty (a loaded
			// machine may take a while) before reading the screen.
			showCursor := func() bool {
				return strings.HasSuffix(strings.TrimRight(screen.String(), "\r\n"), "\x1b[?25h")
			}
			for wait := time.Now().Add(5 * time.Second); !showCursor() && time.Now().Before(wait); {
				time.Sleep(10 * time.Millisecond)
			}
			shown := screen.String()
			if !strings.HasSuffix(strings.TrimRight(shown, "\r\n"), "\x1b[?25h") {
				t.Errorf("cursor not shown again at exit; screen ends %q", shown[max(0, len(shown)-40):])
			}
			if !strings.Contains(shown, "\x1b[H") {
				t.Error("frames are not drawn from the top left")
			}
			for line := range strings.SplitSeq(escapes.ReplaceAllString(shown, ""), "\r\n") {
				if w := utf8.RuneCountInString(line); w > 70 {
					t.Errorf("line %d columns wide on a 70-column terminal: %q", w, line)
				}
			}
			if !strings.Contains(shown, "eth0: RX softirq on CPU 53 (node 1, local) at 99%") {
				t.Errorf("the verdict is not on screen:\n%s", escapes.ReplaceAllString(shown, ""))
			}
		})
	}
}
