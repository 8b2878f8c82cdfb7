package exporter

import "time"

// DefaultListen is where the exporter listens unless told otherwise:
// loopback only, so exposing the host's layout is a deliberate choice.
const DefaultListen = "127.0.0.1:9143"

// MaxInFlight bounds the scrapes the exporter answers at once (the
// binary's promhttp.HandlerOpts.MaxRequestsInFlight); one more is
// answered 503 Service Unavailable. Each scrape reads the whole host, and
// they read one at a time (Exporter.Scrape).
const MaxInFlight = 4

// ShutdownWait is how long the server (httpserve.Serve) lets the scrapes
// in flight when a stop comes finish: under the one second a command has
// after a stop signal (internal/shutdown.Grace), so they are answered
// before the process exits.
const ShutdownWait = 900 * time.Millisecond
