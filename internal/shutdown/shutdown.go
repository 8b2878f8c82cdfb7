// Package shutdown is how an irqnuma command ends when a stop signal
// (SIGINT, SIGTERM, SIGHUP) arrives: the command's context is cancelled
// with the signal kept as its cause, the command gets a grace period to
// return on its own (rolling back what it wrote), and past it the
// process removes its temporary folders and exits 128+signo, as a shell
// reports a signal.
//
// A section that must not be cut short (undoing writes to the host) is
// marked with Critical; the process waits for it however long it takes.
// SIGPIPE is ignored, so a write to a closed pipe (irqnuma ... | head) is
// an EPIPE error the command returns through its cleanup, instead of a
// death that leaves temporary folders behind.
package shutdown

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// signalCause is the cancel cause of a context stopped by a signal.
type signalCause struct{ sig os.Signal }

func (s signalCause) Error() string { return s.sig.String() + " signal received" }

// Cause returns the cause NotifyContext gives a context when sig
// arrives, for tests that cancel a context as a signal would.
func Cause(sig os.Signal) error { return signalCause{sig} }

// stopSignals are the signals that end a command.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// NotifyContext is signal.NotifyContext for SIGINT, SIGTERM and SIGHUP
// with a cause that keeps the signal. The signals stay caught until stop
// is called, so a second Ctrl-C cannot kill a rollback half-way.
func NotifyContext(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	signal.Ignore(syscall.SIGPIPE)
	go func() {
		select {
		case s := <-ch:
			cancel(signalCause{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// ExitCode returns 128+signo for a context cancelled by a signal (130
// for SIGINT, 143 for SIGTERM, 129 for SIGHUP), and false for any other
// context.
func ExitCode(ctx context.Context) (int, bool) {
	var sc signalCause
	if errors.As(context.Cause(ctx), &sc) {
		if n, ok := sc.sig.(syscall.Signal); ok {
			return 128 + int(n), true
		}
	}
	return 0, false
}

// Grace is how long a command has, after a stop signal, to return on its
// own before the process runs its exit functions and exits.
const Grace = time.Second

// process holds what must happen however the process ends: functions to
// run (temporary folders to remove), and how many sections that must
// finish are running.
var process struct {
	sync.Mutex
	cleanups map[int]func() error
	next     int
	critical int
}

// OnExit registers f to run when the process ends early; the returned
// function runs f now (if it has not run) and unregisters it. While the
// returned function runs f it is a critical section: a stop whose grace
// ends then waits for it, so a folder half removed is never left behind
// by the exit.
func OnExit(f func() error) func() error {
	process.Lock()
	id := process.next
	process.next++
	if process.cleanups == nil {
		process.cleanups = map[int]func() error{}
	}
	process.cleanups[id] = f
	process.Unlock()
	return func() error {
		process.Lock()
		g, ok := process.cleanups[id]
		delete(process.cleanups, id)
		if ok {
			process.critical++
		}
		process.Unlock()
		if !ok {
			return nil
		}
		defer func() {
			process.Lock()
			process.critical--
			process.Unlock()
		}()
		return g()
	}
}

// Critical marks a section a stop signal must not cut short; call the
// returned function when it ends.
func Critical() func() {
	process.Lock()
	process.critical++
	process.Unlock()
	return func() {
		process.Lock()
		process.critical--
		process.Unlock()
	}
}

// heldPastGrace, set by tests, is called each time Run, past the grace,
// finds a critical section running and waits on.
var heldPastGrace func()

// Run runs cmd and returns its exit code. After a stop signal cmd has
// Grace to return (a read blocked in the kernel, a huge archive half
// unpacked); past it, once no critical section is running, the OnExit
// functions run and Run returns 128+signo (fallback when ctx was
// cancelled otherwise), leaving cmd's goroutine behind for os.Exit.
func Run(ctx context.Context, fallback int, cmd func() int) int {
	done := make(chan int, 1)
	go func() { done <- cmd() }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	timer := time.NewTimer(Grace)
	defer timer.Stop()
	for {
		select {
		case code := <-done:
			return code
		case <-timer.C:
		}
		process.Lock()
		busy := process.critical > 0
		process.Unlock()
		if !busy {
			break
		}
		if heldPastGrace != nil {
			heldPastGrace()
		}
		timer.Reset(50 * time.Millisecond)
	}
	process.Lock()
	fs := process.cleanups
	process.cleanups = nil
	process.Unlock()
	for _, f := range fs {
		f()
	}
	if code, ok := ExitCode(ctx); ok {
		return code
	}
	return fallback
}
