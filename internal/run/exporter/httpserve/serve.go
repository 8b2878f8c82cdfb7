// Package httpserve serves the exporter's HTTP until its context ends and
// then stops gracefully, letting the scrapes in flight finish. It is
// irqnuma-exporter's alone: the CLI links internal/run/exporter for its
// text format and the audit's reading, and no net/http with it.
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/irqnuma/irqnuma/internal/run/exporter"
)

// ShutdownWait is exporter.ShutdownWait: how long Serve lets the scrapes
// in flight finish after ctx ends.
const ShutdownWait = exporter.ShutdownWait

// cutShort before ShutdownWait ends, the requests still in flight are
// cancelled (errStopping), so that a handler that heeds its request's
// context answers them while there is time to (promhttp's answers 503).
const cutShort = 200 * time.Millisecond

// errStopping is the cause the requests still in flight are cancelled
// with when a stop's wait nears its end (context.Cause of their
// context).
var errStopping = errors.New("irqnuma is stopping")

// Serve answers HTTP on ln with h until ctx ends, then shuts down
// gracefully: it takes no new request, and lets those in flight finish
// for up to ShutdownWait. Their contexts do not end with ctx; cutShort
// before the wait ends they are cancelled with the cause errStopping, so
// a handler that heeds its context answers them in time (the binary's
// promhttp handler answers 503). It returns nil after a shutdown caused
// by ctx in which every request was answered, an error naming how many
// were not if some handler outlived the wait, and the server's error if
// it stopped for another reason.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	return ServeWith(ctx, ln, h, func(srv *http.Server, ln net.Listener) error { return srv.Serve(ln) })
}

// ServeWith is Serve with the serving given: serve answers on ln with
// srv until srv is shut down, and returns http.ErrServerClosed then, as
// srv.Serve does. The binary's serves through exporter-toolkit's
// web.Serve, which wraps srv's handler in the TLS and basic auth of its
// web configuration file before serving.
func ServeWith(ctx context.Context, ln net.Listener, h http.Handler, serve func(srv *http.Server, ln net.Listener) error) error {
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
	go func() { done <- serve(srv, ln) }()
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
