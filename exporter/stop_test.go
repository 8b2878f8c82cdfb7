package exporter

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/audit"
	"github.com/irqnuma/irqnuma/internal/hosttest"
)

// serveStoppable starts the exporter on a loopback port with g as its
// read and returns its base URL, the exporter, a function that stops it
// as a stop signal does, and the channel Serve's error arrives on.
func serveStoppable(t *testing.T, g gather) (string, *Exporter, context.CancelFunc, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := New(hosttest.Open(t, ""), audit.Selection{}, nil)
	e.read = g
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, e.Handler()) }()
	t.Cleanup(cancel)
	return "http://" + ln.Addr().String(), e, cancel, done
}

type answer struct {
	code int
	body string
	err  error
}

func get(url string) <-chan answer {
	c := make(chan answer, 1)
	go func() {
		resp, err := http.Get(url)
		if err != nil {
			c <- answer{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		c <- answer{code: resp.StatusCode, body: string(b), err: err}
	}()
	return c
}

// waitInFlight waits until n scrapes are reading.
func waitInFlight(t *testing.T, e *Exporter, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(e.inFlight) < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d scrapes in flight after 5 s, want %d", len(e.inFlight), n)
		}
	}
}

// TestServeLetsScrapesFinish: a scrape in flight when Serve is stopped
// is answered in full (issue 27: an empty 503), and Serve returns nil.
func TestServeLetsScrapesFinish(t *testing.T) {
	release := make(chan struct{})
	base, e, stop, done := serveStoppable(t, func() (*audit.State, error) {
		<-release
		return gatherTree(hosttest.Root("vm-virtio"))()
	})
	a := get(base + "/metrics")
	waitInFlight(t, e, 1)
	stop()
	time.Sleep(100 * time.Millisecond)
	close(release)
	got := <-a
	if got.err != nil || got.code != http.StatusOK || !strings.Contains(got.body, "irqnuma_build_info") {
		t.Errorf("scrape in flight at the stop: %d, %v, body %q; want 200 with the metrics", got.code, got.err, clip(got.body))
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}

// TestServeCutsShortWithABody: a scrape still reading when the stop's
// wait runs out is answered 503 with a body saying why, in time, and
// Serve returns within ShutdownWait.
func TestServeCutsShortWithABody(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	base, e, stop, done := serveStoppable(t, func() (*audit.State, error) {
		<-release
		return nil, io.EOF
	})
	a := get(base + "/metrics")
	waitInFlight(t, e, 1)
	start := time.Now()
	stop()
	got := <-a
	if got.err != nil || got.code != http.StatusServiceUnavailable || !strings.Contains(got.body, "stopping") {
		t.Errorf("scrape cut short: %d, %v, body %q; want 503 saying irqnuma is stopping", got.code, got.err, clip(got.body))
	}
	select {
	case err := <-done:
		if took := time.Since(start); took > ShutdownWait+200*time.Millisecond {
			t.Errorf("Serve returned %v after the stop, want within %v", took, ShutdownWait)
		}
		if err != nil {
			t.Errorf("Serve = %v, want nil: the scrape was answered", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still running 5 s after the stop")
	}
}

// TestRefusalsLogged: 500 refused scrapes log one line at once and one
// line counting the rest when the interval ends (issue 27: 465 lines).
func TestRefusalsLogged(t *testing.T) {
	release := make(chan struct{})
	var log syncBuffer
	e := New(hosttest.Open(t, ""), audit.Selection{}, &log)
	e.refEvery = 300 * time.Millisecond
	e.read = func() (*audit.State, error) { <-release; return nil, io.EOF }
	h := e.Handler()
	var wg sync.WaitGroup
	for range MaxInFlight {
		wg.Go(func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/metrics", nil)) })
	}
	waitInFlight(t, e, MaxInFlight)
	start := time.Now()
	for i := range 500 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("scrape %d past the bound: %d, want 503", i, rec.Code)
		}
	}
	sent := time.Since(start)
	if n := strings.Count(log.String(), "refused"); n != 1 && sent < e.refEvery {
		t.Errorf("%d lines logged for 500 refusals within %v, want 1:\n%s", n, sent, clip(log.String()))
	}
	for deadline := time.Now().Add(5 * time.Second); strings.Count(log.String(), "refused") < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	got := log.String()
	var lines []string
	for l := range strings.Lines(got) {
		if strings.Contains(l, "refused") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[0], "scrape from") || !strings.Contains(lines[1], "499 more scrapes refused") {
		t.Errorf("log after 500 refusals:\n%s\nwant the first refusal, then \"499 more scrapes refused\"", clip(got))
	}
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}
