package shutdown

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestNotifyContext sends this process SIGINT, SIGTERM and SIGHUP: the
// context is cancelled with the signal kept, for exit 130, 143 and 129.
func TestNotifyContext(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		ctx, stop := NotifyContext(context.Background())
		if err := syscall.Kill(os.Getpid(), tt.sig); err != nil {
			stop()
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			stop()
			t.Fatalf("%v: context not cancelled", tt.sig)
		}
		code, ok := ExitCode(ctx)
		stop()
		if !ok || code != tt.want {
			t.Errorf("%v: exit code %d, %v; want %d", tt.sig, code, ok, tt.want)
		}
	}
	ctx, stop := NotifyContext(context.Background())
	stop()
	if code, ok := ExitCode(ctx); ok {
		t.Errorf("stopped without a signal: exit code %d", code)
	}
}

// TestRunReturns: a command that returns within its grace gives its own
// code, and the exit functions are left for it to run.
func TestRunReturns(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ran := false
	undo := OnExit(func() error { ran = true; return nil })
	code := Run(ctx, 1, func() int {
		cancel(Cause(syscall.SIGTERM))
		return 7
	})
	if code != 7 || ran {
		t.Errorf("code %d, exit function ran %v; want 7, false", code, ran)
	}
	if err := undo(); err != nil || !ran {
		t.Errorf("undo: %v, ran %v", err, ran)
	}
	if err := undo(); err != nil {
		t.Errorf("second undo: %v", err)
	}
}

// TestRunPastGrace: a command stuck past its grace is left behind once no
// critical section runs; the exit functions run and the code is 128+signo.
// A critical section holds the exit until it ends.
func TestRunPastGrace(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	removed := make(chan struct{})
	undo := OnExit(func() error { close(removed); return errors.New("unused") })
	defer undo()
	end := Critical()
	stuck := make(chan struct{})
	defer close(stuck)
	// The critical section ends once Run, past the grace, has found it
	// running and waited on: what Run does then is what is tested, not
	// how long a sleep lasted.
	held := make(chan struct{})
	var once sync.Once
	heldPastGrace = func() { once.Do(func() { close(held) }) }
	defer func() { heldPastGrace = nil }()
	var ended atomic.Bool
	removedEarly := make(chan bool, 1)
	go func() {
		<-held
		select {
		case <-removed:
			removedEarly <- true
		default:
			removedEarly <- false
		}
		ended.Store(true)
		end()
	}()
	start := time.Now()
	code := Run(ctx, 1, func() int {
		cancel(Cause(syscall.SIGINT))
		<-stuck
		return 0
	})
	if code != 130 {
		t.Errorf("code %d, want 130", code)
	}
	if !ended.Load() {
		t.Error("returned while the critical section ran")
	}
	if <-removedEarly {
		t.Error("the exit functions ran while the critical section ran")
	}
	select {
	case <-removed:
	default:
		t.Error("the exit function did not run")
	}
	if d := time.Since(start); d < Grace {
		t.Errorf("returned after %v, within the grace", d)
	}
	// A context cancelled without a signal gives the fallback.
	ctx2, cancel2 := context.WithCancel(context.Background())
	code = Run(ctx2, 1, func() int {
		cancel2()
		<-stuck
		return 0
	})
	if code != 1 {
		t.Errorf("cancelled without a signal: code %d, want 1", code)
	}
}

// TestRunWaitsForCleanupInFlight: a command that, as its grace ends, is
// running an exit function itself (a snapshot folder being removed by
// its deferred close) holds the exit until that function returns: Run
// finds the function gone from the list and must not take that for
// done.
func TestRunWaitsForCleanupInFlight(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	inside := make(chan struct{})
	release := make(chan struct{})
	var finished atomic.Bool
	undo := OnExit(func() error {
		close(inside)
		<-release
		finished.Store(true)
		return nil
	})
	held := make(chan struct{})
	var once sync.Once
	heldPastGrace = func() { once.Do(func() { close(held) }) }
	defer func() { heldPastGrace = nil }()
	go func() {
		<-held // Run is past the grace and waits on the function
		close(release)
	}()
	stuck := make(chan struct{})
	defer close(stuck)
	code := Run(ctx, 1, func() int {
		cancel(Cause(syscall.SIGTERM))
		go undo()
		<-inside
		<-stuck
		return 0
	})
	if code != 143 {
		t.Errorf("code %d, want 143", code)
	}
	if !finished.Load() {
		t.Error("Run returned while an exit function was still running")
	}
}
