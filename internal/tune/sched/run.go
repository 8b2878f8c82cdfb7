package sched

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// forwardedSignals reach the command as they reach the caller.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// Streams are the command's standard streams.
type Streams struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Run runs args[0], found in PATH, with args and the placement, its
// streams set to s, and passes SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to
// this process on to it. started is called once the command runs, with
// the stream s.Stderr ends up as (serialised with the command's own
// writes when it is no file). The code is the shell's: the command's
// exit status, 128+N when signal N killed it, 127 when args[0] is not
// found and 126 when it cannot be run; err says why it did not run, or
// why it could not be waited for.
func Run(p Placement, args []string, s Streams, started func(stderr io.Writer)) (code int, err error) {
	return runContext(context.Background(), p, args, s, started)
}

// killGrace is how long a command RunContext stops has to exit after
// SIGTERM before it is sent SIGKILL.
var killGrace = 5 * time.Second

// runContext is Run that also ends the command when ctx is done: it is
// sent SIGTERM, and SIGKILL if it is still running 5 s later, so
// that a caller stopping on a signal regains control in bounded time
// even from a command that ignores SIGTERM. The code is then the
// command's, 143 or 137 as a shell reports them.
func runContext(ctx context.Context, p Placement, args []string, s Streams, started func(stderr io.Writer)) (code int, err error) {
	path, err := exec.LookPath(args[0])
	if err != nil {
		if !errors.Is(err, exec.ErrNotFound) {
			return 126, err // found but not executable
		}
		return 127, err
	}
	child := exec.Command(path, args[1:]...)
	child.Args[0] = args[0]
	// A stream that is no *os.File is fed by a goroutine os/exec starts;
	// the caller's line goes through the same lock.
	stdout, stderr := s.Stdout, s.Stderr
	if _, ok := stderr.(*os.File); !ok {
		lw := &lockedWriter{w: stderr}
		if stdout == stderr {
			stdout = lw
		}
		stderr = lw
	}
	child.Stdin, child.Stdout, child.Stderr = s.Stdin, stdout, stderr
	grace := killGrace // read once: the goroutine below may outlive this call
	if ctx.Done() != nil {
		// A process the command left behind may hold its output pipes
		// open: they are closed this long after the command exits.
		child.WaitDelay = grace + time.Second
	}

	// Catch the signals before the child exists, so none sent meanwhile
	// is lost or kills the caller; they are passed on once it runs.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)

	if err := start(child, p); err != nil {
		code := 1
		if errors.Is(err, os.ErrPermission) {
			code = 126
		}
		return code, fmt.Errorf("start %s: %w", args[0], err)
	}
	if started != nil {
		started(stderr)
	}

	done := make(chan struct{})
	defer close(done)
	go func() {
		stop := ctx.Done()
		var kill <-chan time.Time
		for {
			select {
			case sig := <-sigs:
				_ = child.Process.Signal(sig) // it may have exited meanwhile
			case <-stop:
				stop = nil
				_ = child.Process.Signal(syscall.SIGTERM)
				t := time.NewTimer(grace)
				defer t.Stop()
				kill = t.C
			case <-kill:
				_ = child.Process.Kill()
			case <-done:
				return
			}
		}
	}()

	err = child.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay): // exited 0, output held open
		return 0, nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	default:
		return 1, fmt.Errorf("wait for %s: %w", args[0], err)
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
