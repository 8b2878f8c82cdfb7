package main

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

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/run/exporter"
	"github.com/irqnuma/irqnuma/internal/run/exporter/httpserve"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// blocked is a host tree's scrape that says it started, on started, then
// waits for release before reading.
type blocked struct {
	started chan struct{}
	release chan struct{}
	scrape  func() []exporter.Family
	running sync.WaitGroup
}

// newBlocked is a blocked scrape of root. The scrapes a test leaves
// running (one answered 503 still reads the host) are waited for before
// the tree is closed: cleanups run last registered first.
func newBlocked(t *testing.T, root string) *blocked {
	b := &blocked{
		started: make(chan struct{}, 16),
		release: make(chan struct{}),
		scrape:  exporter.New(hosttest.Open(t, root), audit.Selection{}, nil).Scrape,
	}
	t.Cleanup(b.running.Wait)
	return b
}

func (b *blocked) Scrape() []exporter.Family {
	b.running.Add(1)
	defer b.running.Done()
	b.started <- struct{}{}
	<-b.release
	return b.scrape()
}

func (b *blocked) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-b.started:
	case <-time.After(5 * time.Second):
		t.Fatal("no scrape started in 5 s")
	}
}

// TestHandlerInFlight: of MaxInFlight+1 scrapes at once one is answered
// 503 at once, the others in full once the host is read, and the refusal
// is counted in promhttp_metric_handler_requests_total{code="503"}, as
// the README promises.
func TestHandlerInFlight(t *testing.T) {
	b := newBlocked(t, hosttest.Root("vm-virtio"))
	h, err := newHandler(b.Scrape, io.Discard, "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		code int
		body string
	}
	answers := make(chan answer, exporter.MaxInFlight+1)
	var wg sync.WaitGroup
	for range exporter.MaxInFlight + 1 {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			answers <- answer{rec.Code, rec.Body.String()}
		})
	}
	// Every scrape waits for release but the one refused.
	select {
	case a := <-answers:
		if a.code != http.StatusServiceUnavailable || !strings.Contains(a.body, "Limit of concurrent requests reached (4)") {
			t.Errorf("first answer: %d %q, want 503 naming the limit of 4", a.code, a.body)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no scrape of %d refused in 5 s", exporter.MaxInFlight+1)
	}
	close(b.release)
	wg.Wait()
	close(answers)
	for a := range answers {
		if a.code != http.StatusOK || !strings.Contains(a.body, "\nirqnuma_scrape_error 0\n") {
			t.Errorf("scrape in the bound: %d, body %.200q; want 200 with the host's series", a.code, a.body)
		}
	}
	_, text := get(t, h, http.MethodGet, "/metrics", "")
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	for _, m := range mfs["promhttp_metric_handler_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "code" {
				counts[l.GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	if counts["503"] != 1 || counts["200"] != exporter.MaxInFlight {
		t.Errorf("promhttp_metric_handler_requests_total by code: %v, want 503: 1, 200: %d", counts, exporter.MaxInFlight)
	}
}

// serveBlocked serves the binary's handler on b with httpserve.Serve, as
// run does, and returns its base URL, a stop as a signal's, and the
// channel Serve's error arrives on.
func serveBlocked(t *testing.T, b *blocked) (string, context.CancelFunc, <-chan error) {
	t.Helper()
	h, err := newHandler(b.Scrape, io.Discard, "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- httpserve.Serve(ctx, ln, h) }()
	t.Cleanup(cancel)
	return "http://" + ln.Addr().String(), cancel, done
}

type scrapeAnswer struct {
	code int
	body string
	err  error
}

func scrapeAsync(url string) <-chan scrapeAnswer {
	c := make(chan scrapeAnswer, 1)
	go func() {
		resp, err := http.Get(url)
		if err != nil {
			c <- scrapeAnswer{err: err}
			return
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		c <- scrapeAnswer{resp.StatusCode, string(body), err}
	}()
	return c
}

// waitRefused waits until a connection to addr is refused: Serve's
// shutdown has closed the listener, so a stop is under way. It fails the
// test after 5 s.
func waitRefused(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("%s still accepts connections 5 s after the stop", addr)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStopLetsScrapeFinish: a scrape in flight at a stop is answered in
// full when the host's read ends within the wait (released once the
// listener is closed), and Serve returns nil.
func TestStopLetsScrapeFinish(t *testing.T) {
	b := newBlocked(t, hosttest.Root("vm-virtio"))
	base, stop, done := serveBlocked(t, b)
	a := scrapeAsync(base + "/metrics")
	b.waitStarted(t)
	stop()
	waitRefused(t, strings.TrimPrefix(base, "http://")) // the stop has begun
	close(b.release)
	got := <-a
	if got.err != nil || got.code != http.StatusOK || !strings.Contains(got.body, "\nirqnuma_scrape_error 0\n") {
		t.Errorf("scrape in flight at the stop: %d, %v, body %.200q; want 200 with the host's series", got.code, got.err, got.body)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}

// TestStopCutsScrapeShort: a scrape still reading when the stop's wait
// nears its end is answered 503 (promhttp's timeout handler, its context
// cancelled), not left without an answer, and Serve returns nil within
// ShutdownWait.
func TestStopCutsScrapeShort(t *testing.T) {
	b := newBlocked(t, hosttest.Root("vm-virtio"))
	defer close(b.release)
	base, stop, done := serveBlocked(t, b)
	a := scrapeAsync(base + "/metrics")
	b.waitStarted(t)
	start := time.Now()
	stop()
	got := <-a
	if got.err != nil || got.code != http.StatusServiceUnavailable {
		t.Errorf("scrape cut short: %d, %v; want 503", got.code, got.err)
	}
	select {
	case err := <-done:
		if took := time.Since(start); took > exporter.ShutdownWait+200*time.Millisecond {
			t.Errorf("Serve returned %v after the stop, want within %v", took, exporter.ShutdownWait)
		}
		if err != nil {
			t.Errorf("Serve = %v, want nil: the scrape was answered", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still running 5 s after the stop")
	}
}
