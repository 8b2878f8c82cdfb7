package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// signalCause is the cancel cause of the command context when SIGINT or
// SIGTERM arrives, so a command can tell which one it was (pin exits 130
// or 143 after rolling back).
type signalCause struct{ sig os.Signal }

func (s signalCause) Error() string { return s.sig.String() + " signal received" }

// notifyContext is signal.NotifyContext for SIGINT and SIGTERM with a
// cause that keeps the signal. Signals stay caught until stop is called,
// so a second Ctrl-C cannot kill a rollback half-way.
func notifyContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
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
// (130 for SIGINT, 143 for SIGTERM), as a shell reports it.
func signalExitCode(ctx context.Context) (int, bool) {
	var sc signalCause
	if errors.As(context.Cause(ctx), &sc) {
		if n, ok := sc.sig.(syscall.Signal); ok {
			return 128 + int(n), true
		}
	}
	return 0, false
}
