package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// signalCause is the cancel cause of the command context when SIGINT,
// SIGTERM or SIGHUP arrives, so a command can tell which one it was (pin
// exits 130 or 143 after rolling back).
type signalCause struct{ sig os.Signal }

func (s signalCause) Error() string { return s.sig.String() + " signal received" }

// stopSignals are the signals that end a command: it stops what it is
// doing, undoes what it must, removes its temporary folders and exits
// 128+signo.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// notifyContext is signal.NotifyContext for stopSignals with a cause that
// keeps the signal. Signals stay caught until stop is called, so a second
// Ctrl-C cannot kill a rollback half-way. SIGPIPE is ignored, so a write
// to a closed pipe (irqnuma ... | head) is an EPIPE error the command
// returns through its cleanup, instead of a death that leaves temporary
// folders behind.
func notifyContext(parent context.Context) (context.Context, context.CancelFunc) {
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

// signalExitCode returns 128+signo for a context cancelled by a signal
// (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP), as a shell reports it.
func signalExitCode(ctx context.Context) (int, bool) {
	var sc signalCause
	if errors.As(context.Cause(ctx), &sc) {
		if n, ok := sc.sig.(syscall.Signal); ok {
			return 128 + int(n), true
		}
	}
	return 0, false
}

// stopGrace is how long a command has, after a stop signal, to return on
// its own before the process removes its temporary folders and exits.
const stopGrace = time.Second

// process holds what must happen however the process ends: temporary
// folders to remove, and whether a command is in a section that must
// finish (a rollback) before the process may exit.
var process struct {
	sync.Mutex
	cleanups map[int]func() error
	next     int
	critical int
}

// onExit registers f to run when the process ends early; the returned
// function runs f now (if it has not run) and unregisters it.
func onExit(f func() error) func() error {
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
		process.Unlock()
		if !ok {
			return nil
		}
		return g()
	}
}

// critical marks a section a stop signal must not cut short (undoing
// writes to the host); call the returned function when it ends.
func critical() func() {
	process.Lock()
	process.critical++
	process.Unlock()
	return func() {
		process.Lock()
		process.critical--
		process.Unlock()
	}
}

// runUntilStopped runs the command and returns its exit code. After a
// stop signal the command has stopGrace to return (a read blocked in the
// kernel, a huge archive half unpacked); past it, once no critical
// section is running, the registered cleanups run and the process exits
// 128+signo.
func runUntilStopped(ctx context.Context, cmd func() int) int {
	done := make(chan int, 1)
	go func() { done <- cmd() }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
wait:
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
			break wait
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
	code, ok := signalExitCode(ctx)
	if !ok {
		code = exitError
	}
	return code
}
