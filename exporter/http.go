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
	"time"
)

// DefaultListen is where the exporter listens unless told otherwise:
// loopback only, so exposing the host's layout is a deliberate choice.
const DefaultListen = "127.0.0.1:9143"

// MaxInFlight bounds the scrapes answered at once; one more is answered
// 503 Service Unavailable (and logged), as Prometheus' own client does.
// Each scrape reads the whole host, and they run one at a time.
const MaxInFlight = 4

// contentType is the text exposition format's.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

// Handler serves the exporter's metrics at /metrics, to GET and HEAD
// only; every other path is 404 and every other method 405. A client
// that accepts gzip gets the body compressed. Series left out and
// refused scrapes are logged.
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
			defer func() { <-e.inFlight }()
		default:
			e.logf("scrape from %s refused: %d scrapes already in flight", r.RemoteAddr, MaxInFlight)
			http.Error(w, fmt.Sprintf("limit of concurrent requests reached (%d), try again later", MaxInFlight), http.StatusServiceUnavailable)
			return
		}
		var body bytes.Buffer
		if skipped, _ := WriteText(&body, e.Scrape()); skipped != nil {
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

// Serve answers HTTP on ln until ctx ends, then shuts down gracefully.
// It returns nil after a shutdown caused by ctx.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           http.TimeoutHandler(h, 30*time.Second, "scrape took longer than 30s"),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
