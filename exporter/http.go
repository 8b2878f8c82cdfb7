package exporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultListen is where the exporter listens unless told otherwise:
// loopback only, so exposing the host's layout is a deliberate choice.
const DefaultListen = "127.0.0.1:9143"

// MaxInFlight bounds the scrapes answered at once; one more is answered
// 503 Service Unavailable (and logged, at most a line per
// refusalLogEvery), as Prometheus' own client does. Each scrape reads the
// whole host, and they run one at a time.
const MaxInFlight = 4

// Bounds of one scrape and of a stop.
const (
	// scrapeTimeout bounds one scrape; past it the answer is 503 with
	// a body saying so.
	scrapeTimeout = 30 * time.Second
	// ShutdownWait is how long Serve lets the scrapes in flight when ctx
	// ends finish: under the one second a command has after a stop
	// signal (internal/shutdown.Grace), so they are answered before the
	// process exits.
	ShutdownWait = 900 * time.Millisecond
	// cutShort before ShutdownWait ends, a scrape still reading is
	// answered 503 with a body saying why, while there is time to.
	cutShort = 200 * time.Millisecond
	// refusalLogEvery spaces the log lines of refused scrapes: the first
	// is logged at once, the ones after it counted in a line per
	// interval.
	refusalLogEvery = 10 * time.Second
)

// errStopping cancels the scrapes still in flight when a stop's wait
// runs out.
var errStopping = errors.New("irqnuma is stopping")

// contentType is the text exposition format's.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

// Handler serves the exporter's metrics at /metrics, to GET and HEAD
// only; every other path is 404 and every other method 405. A client
// that accepts gzip gets the body compressed. Series left out and
// refused scrapes are logged. A scrape that takes longer than 30 s, or is
// cut short by Serve stopping, is answered 503 with a body saying which.
func (e *Exporter) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		select {
		case e.inFlight <- struct{}{}:
		default:
			e.refused(r.RemoteAddr)
			http.Error(w, fmt.Sprintf("limit of concurrent requests reached (%d), try again later", MaxInFlight), http.StatusServiceUnavailable)
			return
		}
		// The read runs on its own and holds the token until it ends, so
		// an answer given early never lets more reads run than the bound.
		done := make(chan []Family, 1)
		go func() {
			defer func() { <-e.inFlight }()
			done <- e.Scrape()
		}()
		timer := time.NewTimer(scrapeTimeout)
		defer timer.Stop()
		var fams []Family
		select {
		case fams = <-done:
		case <-timer.C:
			http.Error(w, fmt.Sprintf("scrape took longer than %v", scrapeTimeout), http.StatusServiceUnavailable)
			return
		case <-r.Context().Done():
			if errors.Is(context.Cause(r.Context()), errStopping) {
				http.Error(w, "irqnuma is stopping: scrape cut short, try again", http.StatusServiceUnavailable)
			}
			return // otherwise the client is gone
		}
		var body bytes.Buffer
		if skipped, _ := WriteText(&body, fams); skipped != nil {
			e.logf("scrape: series left out: %v", skipped)
		}
		h := w.Header()
		h.Set("Content-Type", contentType)
		if acceptsGzip(r) {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(body.Bytes())
			zw.Close()
			body = z
			h.Set("Content-Encoding", "gzip")
		}
		h.Set("Content-Length", strconv.Itoa(body.Len()))
		if r.Method == http.MethodHead {
			return
		}
		w.Write(body.Bytes())
	})
	return mux
}

// refused logs a refused scrape: at once when none was logged in the
// last interval, else counted and logged in one line when the interval
// ends, so a flood of scrapes writes a line per interval, not a line per
// scrape.
func (e *Exporter) refused(addr string) {
	e.refMu.Lock()
	defer e.refMu.Unlock()
	every := e.refEvery
	if every <= 0 {
		every = refusalLogEvery
	}
	now := time.Now()
	if e.refPending == 0 && (e.refLast.IsZero() || now.Sub(e.refLast) >= every) {
		e.refLast = now
		e.logf("scrape from %s refused: %d scrapes already in flight", addr, MaxInFlight)
		return
	}
	e.refPending++
	if e.refTimer == nil {
		e.refTimer = time.AfterFunc(every-now.Sub(e.refLast), func() {
			e.refMu.Lock()
			defer e.refMu.Unlock()
			e.logf("%d more scrapes refused in the last %v: %d scrapes already in flight", e.refPending, every, MaxInFlight)
			e.refPending, e.refLast, e.refTimer = 0, time.Now(), nil
		})
	}
}

// acceptsGzip reports whether the request's Accept-Encoding lists gzip
// with a non-zero quality.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) != "gzip" {
			continue
		}
		if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// Serve answers HTTP on ln until ctx ends, then shuts down gracefully:
// it takes no new scrape, and lets those in flight finish for up to
// ShutdownWait (one still reading near its end is answered 503 with a
// body saying it was cut short). It returns nil after a shutdown caused
// by ctx.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	// Scrapes do not end with ctx: a stop signal lets them finish.
	base, stop := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stop(nil)
	var active atomic.Int64 // handlers running
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			active.Add(1)
			defer active.Add(-1)
			h.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	cut := time.AfterFunc(ShutdownWait-cutShort, func() { stop(errStopping) })
	defer cut.Stop()
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownWait)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		// Shutdown polls for idle connections ever more slowly: past the
		// wait, every scrape may have been answered (cut short) all the
		// same, and what is left is idle.
		srv.Close()
		if n := active.Load(); n > 0 {
			err = fmt.Errorf("stop: %d requests still in flight after %v: %w", n, ShutdownWait, err)
		} else {
			err = nil
		}
	}
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
