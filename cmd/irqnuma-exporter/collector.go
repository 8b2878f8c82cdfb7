package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/irqnuma/irqnuma/internal/run/exporter"
	"github.com/irqnuma/irqnuma/internal/version"
)

// scrapeTimeout bounds one scrape, as the CLI's exporter did: past it the
// answer is 503.
const scrapeTimeout = 30 * time.Second

// collector turns each scrape of the exporter package into client_golang
// metrics: every Family a gauge of the same name, help and label names,
// every Sample one series. It adds nothing of its own, so a series or a
// label the exporter package adds (per-pod labels) is served as it is.
// One Collect is one read of the host.
type collector struct {
	scrape func() []exporter.Family
	log    io.Writer
}

// Describe sends nothing: the families and their labels are the exporter
// package's, known at each scrape (an unchecked collector; the registry
// still refuses two series of one name with different labels).
func (c *collector) Describe(chan<- *prometheus.Desc) {}

// Collect reads the host once and sends every series. A series whose
// label value is not valid UTF-8 (an interface name may hold any byte) is
// left out and logged, as exporter.WriteText does; the rest is sent.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, f := range c.scrape() {
		desc := prometheus.NewDesc(f.Name, f.Help, f.Labels, nil)
		for _, s := range f.Samples {
			m, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, s.Value, s.Values...)
			if err != nil {
				c.logf("series left out: %s: %v", f.Name, err)
				continue
			}
			ch <- m
		}
	}
}

func (c *collector) logf(format string, args ...any) {
	if c.log != nil {
		fmt.Fprintf(c.log, "irqnuma-exporter: "+format+"\n", args...)
	}
}

// newHandler is the exporter's HTTP handler: the metrics at path, and a
// landing page at / linking to them (exporter-toolkit's, as every
// Prometheus exporter has; none when path is /), GET and HEAD only,
// nothing else. The metrics come from a registry of its own holding the
// host's series (scrape, an exporter.Exporter's Scrape), the process and
// Go collectors and promhttp's own counters; OpenMetrics to a client
// that asks for it, gzip or zstd when accepted, four scrapes at a time (a
// fifth is 503), 503 past 30 s. Gathering errors are logged and what
// could be gathered is served.
func newHandler(scrape func() []exporter.Family, logw io.Writer, path string) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector(),
		&collector{scrape: scrape, log: logw},
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	metrics := promhttp.InstrumentMetricHandler(reg, promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:            log.New(logw, "irqnuma-exporter: scrape: ", 0),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: exporter.MaxInFlight,
		Timeout:             scrapeTimeout,
		EnableOpenMetrics:   true,
	}))
	landing := http.NotFoundHandler() // metrics at /: no landing page
	if path != "/" {
		v := version.Get()
		page, err := web.NewLandingPage(web.LandingConfig{
			Name:        "irqnuma-exporter",
			Description: short,
			Version:     v.String(),
			Links:       []web.LandingLinks{{Address: path, Text: "Metrics"}},
			Profiling:   "false", // no /debug/pprof is served
		})
		if err != nil {
			return nil, fmt.Errorf("landing page: %w", err)
		}
		landing = page
	}
	// Paths compared as they are, not as http.ServeMux patterns: a
	// --web.telemetry-path holding "{" is a path, not a wildcard.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var h http.Handler
		switch r.URL.Path {
		case path:
			h = metrics
		case "/":
			h = landing
		default:
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
}
