package httpserve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveStoppable runs Serve with h on a loopback port and returns its base
// URL, a function that stops it as a stop signal does, and the channel
// Serve's error arrives on.
func serveStoppable(t *testing.T, h http.Handler) (string, context.CancelFunc, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, h) }()
	t.Cleanup(cancel)
	return "http://" + ln.Addr().String(), cancel, done
}

type answer struct {
	code int
	body string
	err  error
	at   time.Time // when the answer was read
}

// get sends a GET on a connection of its own.
func get(url string) <-chan answer {
	c := make(chan answer, 1)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	go func() {
		resp, err := client.Get(url)
		if err != nil {
			c <- answer{err: err, at: time.Now()}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		c <- answer{code: resp.StatusCode, body: string(b), err: err, at: time.Now()}
	}()
	return c
}

// slow is a handler whose requests each say they started on started,
// then wait: for release, to answer 200 "done", or, when heedCtx is set,
// for their context to end, to answer 503 with its cause.
type slow struct {
	started chan struct{}
	release chan struct{}
	heedCtx bool
}

func newSlow(heedCtx bool) *slow {
	return &slow{started: make(chan struct{}, 8), release: make(chan struct{}), heedCtx: heedCtx}
}

func (s *slow) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.started <- struct{}{}
	var ctxDone <-chan struct{}
	if s.heedCtx {
		ctxDone = r.Context().Done()
	}
	select {
	case <-s.release:
		io.WriteString(w, "done")
	case <-ctxDone:
		http.Error(w, context.Cause(r.Context()).Error(), http.StatusServiceUnavailable)
	}
}

// waitStarted waits for one request to reach the handler.
func waitStarted(t *testing.T, s *slow) {
	t.Helper()
	select {
	case <-s.started:
	case <-time.After(5 * time.Second):
		t.Fatal("no request reached the handler in 5 s")
	}
}

// TestServeLetsRequestsFinish: a stop takes no new request, a request in
// flight keeps its context and is answered in full (issue 27: an empty
// 503), and Serve returns nil.
func TestServeLetsRequestsFinish(t *testing.T) {
	h := newSlow(true)
	base, stop, done := serveStoppable(t, h)
	a := get(base + "/metrics")
	waitStarted(t, h)
	stop()
	// A dial, not a request: a request that raced the close would be
	// one more in flight, held by the slow handler until the cut.
	addr := strings.TrimPrefix(base, "http://")
	for deadline := time.Now().Add(time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			break // the listener is closed
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still taking new connections 1 s after the stop")
		}
	}
	close(h.release)
	got := <-a
	if got.err != nil || got.code != http.StatusOK || got.body != "done" {
		t.Errorf("request in flight at the stop: %d, %v, body %q; want 200 done", got.code, got.err, got.body)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}

// TestServeCutsShort: a request still running when the stop's wait nears
// its end has its context cancelled with errStopping, cutShort before the
// wait ends, so its handler answers it; Serve returns nil within
// ShutdownWait.
func TestServeCutsShort(t *testing.T) {
	h := newSlow(true)
	defer close(h.release)
	base, stop, done := serveStoppable(t, h)
	a := get(base + "/metrics")
	waitStarted(t, h)
	start := time.Now()
	stop()
	got := <-a
	if got.err != nil || got.code != http.StatusServiceUnavailable || strings.TrimSpace(got.body) != errStopping.Error() {
		t.Errorf("request cut short: %d, %v, body %q; want 503 %q", got.code, got.err, got.body, errStopping)
	}
	if took := got.at.Sub(start); took < ShutdownWait-cutShort || took > ShutdownWait+200*time.Millisecond {
		t.Errorf("answered %v after the stop, want between %v and about %v", took, ShutdownWait-cutShort, ShutdownWait)
	}
	select {
	case err := <-done:
		if took := time.Since(start); took > ShutdownWait+200*time.Millisecond {
			t.Errorf("Serve returned %v after the stop, want within %v", took, ShutdownWait)
		}
		if err != nil {
			t.Errorf("Serve = %v, want nil: the request was answered", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still running 5 s after the stop")
	}
}

// TestServeNamesUnanswered: a handler that ignores its context outlives
// the wait; Serve returns in time all the same, with an error saying so.
func TestServeNamesUnanswered(t *testing.T) {
	h := newSlow(false)
	base, stop, done := serveStoppable(t, h)
	a := get(base + "/metrics")
	waitStarted(t, h)
	start := time.Now()
	stop()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still running 5 s after the stop")
	}
	took := time.Since(start)
	close(h.release)
	<-a
	if took > ShutdownWait+200*time.Millisecond {
		t.Errorf("Serve returned %v after the stop, want within %v", took, ShutdownWait)
	}
	if err == nil || !strings.Contains(err.Error(), "1 requests still in flight") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Serve = %v, want 1 request still in flight, wrapping the deadline", err)
	}
}
