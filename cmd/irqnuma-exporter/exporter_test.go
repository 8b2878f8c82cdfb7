package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/snapshot"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/run/exporter"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/syncbuf"
	"github.com/irqnuma/irqnuma/internal/usage"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/exporter")

// handlerOf is the binary's handler on a host tree.
func handlerOf(t testing.TB, root string, sel audit.Selection) http.Handler {
	t.Helper()
	h, err := newHandler(exporter.New(hosttest.Open(t, root), sel, nil).Scrape, io.Discard, "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// get answers one request of method with the Accept header accept ("":
// none) and returns the response and its body.
func get(t testing.TB, h http.Handler, method, path, accept string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// families returns the metric family names of a text-format body.
func families(t *testing.T, body string) map[string]bool {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}
	out := map[string]bool{}
	for n := range mfs {
		out[n] = true
	}
	return out
}

// promtool runs `promtool check metrics` on body. Without promtool the
// test fails under CI=true (.ci/run installs it) and skips otherwise.
func promtool(t *testing.T, body string) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not installed (apt-get install prometheus); CI must have it")
		}
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// irqnumaPart is the irqnuma_* families of an exposition (HELP, TYPE and
// samples), in order, without the scrape's duration's sample.
func irqnumaPart(body string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(body, "\n") {
		name := l
		if rest, ok := strings.CutPrefix(l, "# HELP "); ok {
			name = rest
		} else if rest, ok := strings.CutPrefix(l, "# TYPE "); ok {
			name = rest
		}
		if strings.HasPrefix(name, "irqnuma_") && !strings.HasPrefix(l, exporter.MetricScrapeDuration+" ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestHandlerFormats: the text format 0.0.4 by default, OpenMetrics 1.0
// ending in "# EOF" when asked for, both with the exporter's own health
// (process_*, go_*) beside the host's series, both passing promtool.
func TestHandlerFormats(t *testing.T) {
	h := handlerOf(t, hosttest.Root("nps2"), audit.Selection{})
	want := []string{"process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds",
		"go_goroutines", "go_memstats_alloc_bytes", "go_info", exporter.MetricFinding, exporter.MetricIRQLocal,
		exporter.MetricScrapeError, exporter.MetricBuildInfo}

	resp, text := get(t, h, http.MethodGet, "/metrics", "")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("plain scrape: Content-Type %q, want text/plain; version=0.0.4", ct)
	}
	got := families(t, text)
	for _, n := range want {
		if !got[n] {
			t.Errorf("text: no %s", n)
		}
	}
	if strings.Contains(text, "# EOF") {
		t.Error("text format has # EOF")
	}
	promtool(t, text)

	resp, om := get(t, h, http.MethodGet, "/metrics", "application/openmetrics-text; version=1.0.0; charset=utf-8,text/plain;q=0.5")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text; version=1.0.0") {
		t.Errorf("OpenMetrics scrape: Content-Type %q", ct)
	}
	if !strings.HasSuffix(om, "\n# EOF\n") {
		t.Errorf("OpenMetrics body does not end in # EOF: ...%q", om[max(0, len(om)-80):])
	}
	for _, n := range []string{"process_cpu_seconds", "go_goroutines", exporter.MetricFinding} {
		if !strings.Contains(om, "# TYPE "+n+" ") {
			t.Errorf("OpenMetrics: no family %s", n)
		}
	}
	// promtool check metrics parses the text format only; the irqnuma_*
	// gauges read the same in both, so that part of the OpenMetrics
	// answer goes through it (the counters' OpenMetrics names do not, and
	// go_memstats_alloc_bytes{,_total} collide there: client_golang#829).
	part := irqnumaPart(om)
	if !strings.Contains(part, `irqnuma_irq_local{irq="107",nic="enp65s0f0",queue="6"} 0`) {
		t.Errorf("OpenMetrics irqnuma part lacks IRQ 107's locality:\n%s", part)
	}
	promtool(t, part)
}

// TestSeriesUnchanged: on every host tree the binary serves the
// irqnuma_* series exactly as the exporter package writes them (the
// text format of `irqnuma audit --textfile`), help and type lines
// included; only the scrape's duration differs between two reads.
func TestSeriesUnchanged(t *testing.T) {
	for _, name := range hosttest.Names() {
		t.Run(name, func(t *testing.T) {
			root := hosttest.Root(name)
			var want bytes.Buffer
			if _, err := exporter.WriteText(&want, exporter.New(hosttest.Open(t, root), audit.Selection{}, nil).Scrape()); err != nil {
				t.Fatal(err)
			}
			_, got := get(t, handlerOf(t, root, audit.Selection{}), http.MethodGet, "/metrics", "")
			if diff := cmp.Diff(irqnumaPart(want.String()), irqnumaPart(got)); diff != "" {
				t.Errorf("irqnuma_* series (-exporter package +binary):\n%s", diff)
			}
			if !strings.Contains(got, exporter.MetricScrapeDuration+" ") {
				t.Error("no scrape duration")
			}
		})
	}
}

// TestGolden keeps the binary's irqnuma_* answer for each host tree under
// testdata/golden/exporter/ (as `irqnuma serve` answered it): every
// series but the findings (TestFindingsMatchAudit), the scrape duration
// and the build.
func TestGolden(t *testing.T) {
	for _, name := range hosttest.Names() {
		t.Run(name, func(t *testing.T) {
			_, body := get(t, handlerOf(t, hosttest.Root(name), audit.Selection{}), http.MethodGet, "/metrics", "")
			var keep []string
			for _, l := range strings.SplitAfter(irqnumaPart(body), "\n") {
				if !strings.HasPrefix(l, "irqnuma_finding{") && !strings.HasPrefix(l, "irqnuma_build_info{") {
					keep = append(keep, l)
				}
			}
			golden(t, name+".prom", strings.Join(keep, ""))
		})
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "golden", "exporter", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (go test ./cmd/irqnuma-exporter -update writes it): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

// TestFindingsMatchAudit: on every host tree, one irqnuma_finding per
// finding of the audit.
func TestFindingsMatchAudit(t *testing.T) {
	for _, name := range hosttest.Names() {
		t.Run(name, func(t *testing.T) {
			root := hosttest.Root(name)
			st, err := audit.Read(hosttest.Open(t, root), audit.Selection{})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, f := range st.Findings {
				want = append(want, fmt.Sprintf("%s|%s|%s|%s", f.Check, f.Severity, f.NIC, f.Subject))
			}
			sort.Strings(want)
			_, body := get(t, handlerOf(t, root, audit.Selection{}), http.MethodGet, "/metrics", "")
			p := expfmt.NewTextParser(model.UTF8Validation)
			mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range mfs[exporter.MetricFinding].GetMetric() {
				l := map[string]string{}
				for _, p := range m.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				for range int(m.GetGauge().GetValue()) {
					got = append(got, fmt.Sprintf("%s|%s|%s|%s", l["check"], l["severity"], l["nic"], l["subject"]))
				}
			}
			sort.Strings(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings (-audit +exporter):\n%s", diff)
			}
		})
	}
}

// TestHandlerMethodsPaths: /metrics and a landing page at / linking to
// it only, GET and HEAD only; a gzip scrape is compressed, and holds the
// same series. Under another --web.telemetry-path the metrics move there
// and the landing page links to it; under / there is no landing page.
func TestHandlerMethodsPaths(t *testing.T) {
	h := handlerOf(t, hosttest.Root("seed"), audit.Selection{})
	for _, path := range []string{"/debug/pprof/", "/metrics/", "/index.html", "/{x}"} {
		if resp, _ := get(t, h, http.MethodGet, path, ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
	resp, page := get(t, h, http.MethodGet, "/", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `<a href="/metrics">Metrics</a>`) || !strings.Contains(page, "irqnuma-exporter") || strings.Contains(page, "debug/pprof") {
		t.Errorf("GET /: %d, %q; want the landing page linking /metrics, without pprof", resp.StatusCode, page)
	}
	for _, path := range []string{"/metrics", "/"} {
		resp, _ := get(t, h, http.MethodPost, path, "")
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("POST %s: %d, Allow %q; want 405, GET, HEAD", path, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	scrape := exporter.New(hosttest.Open(t, hosttest.Root("seed")), audit.Selection{}, nil).Scrape
	for path, want := range map[string]map[string]int{
		"/irqnuma/metrics": {"/irqnuma/metrics": 200, "/": 200, "/metrics": 404},
		"/":                {"/": 200, "/metrics": 404},
	} {
		h, err := newHandler(scrape, io.Discard, path)
		if err != nil {
			t.Fatal(err)
		}
		for p, code := range want {
			resp, body := get(t, h, http.MethodGet, p, "")
			metrics := strings.Contains(body, "\nirqnuma_scrape_error 0\n")
			if resp.StatusCode != code || (code == 200 && metrics != (p == path)) {
				t.Errorf("--web.telemetry-path %s: GET %s: %d, metrics %v; want %d, metrics %v", path, p, resp.StatusCode, metrics, code, p == path)
			}
			if p == "/" && path != "/" && !strings.Contains(body, `<a href="/irqnuma/metrics">`) {
				t.Errorf("--web.telemetry-path %s: the landing page does not link it: %q", path, body)
			}
		}
	}
	if resp, _ := get(t, h, http.MethodHead, "/metrics", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD /metrics: %d", resp.StatusCode)
	}
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip scrape: Content-Encoding %q", rec.Header().Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if body, err := io.ReadAll(zr); err != nil || !bytes.Contains(body, []byte("\nirqnuma_scrape_error 0\n")) {
		t.Errorf("gzip body: %v, %.200q; want the host's series", err, body)
	}
}

// TestBadLabelLeftOut: a series whose label value is not UTF-8 is left
// out and logged; the others are served.
func TestBadLabelLeftOut(t *testing.T) {
	var log syncbuf.Buffer
	c := &collector{log: &log, scrape: func() []exporter.Family {
		return []exporter.Family{{Name: exporter.MetricNICNode, Help: "h", Labels: []string{"nic"},
			Samples: []exporter.Sample{{Values: []string{"eth\xff"}, Value: 0}, {Values: []string{"eth0"}, Value: 1}}}}
	}}
	ch := make(chan prometheus.Metric, 4)
	c.Collect(ch)
	if len(ch) != 1 {
		t.Errorf("%d series sent, want 1 (eth0)", len(ch))
	}
	if !strings.Contains(log.String(), "series left out: irqnuma_nic_numa_node") {
		t.Errorf("log %q: want the series left out named", log.String())
	}
}

var servingRE = regexp.MustCompile(`msg=serving address=(\S+) `)

// start runs the binary's run on a free loopback port and returns its
// address; it is stopped when the test ends, and must exit 0.
func start(t *testing.T, args ...string) string {
	t.Helper()
	addr, _ := startLog(t, args...)
	return addr
}

// startLog is start, with what the exporter writes to stderr.
func startLog(t *testing.T, args ...string) (string, *serveLog) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout syncbuf.Buffer
	stderr := &serveLog{addr: make(chan string, 1)}
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, append([]string{"--web.listen-address", "127.0.0.1:0"}, args...), &stdout, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if c := <-code; c != 0 {
			t.Errorf("exit %d, stderr %q", c, stderr.String())
		}
		if stdout.String() != "" {
			t.Errorf("wrote to stdout: %q", stdout.String())
		}
	})
	select {
	case addr := <-stderr.addr:
		return addr, stderr
	case c := <-code:
		t.Fatalf("exited %d: %s", c, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("did not start in 20 s: %s", stderr.String())
	}
	return "", nil
}

// serveLog is the exporter's stderr in a test: what it wrote, and the
// address its serving line names, sent on addr once written.
type serveLog struct {
	syncbuf.Buffer
	once sync.Once
	addr chan string
}

func (l *serveLog) Write(p []byte) (int, error) {
	n, err := l.Buffer.Write(p)
	if m := servingRE.FindSubmatch(p); m != nil {
		l.once.Do(func() { l.addr <- string(m[1]) })
	}
	return n, err
}

// scrapeValue returns the value of the one series of name whose labels
// include want, from a scrape of addr.
func scrapeValue(t *testing.T, addr, name string, want map[string]string) (float64, bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mfs[name].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && l[k] == v
		}
		if match {
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// TestRunSnapshot: --root takes a snapshot file, with nps2's remote IRQs
// at irqnuma_irq_local 0.
func TestRunSnapshot(t *testing.T) {
	file := filepath.Join(t.TempDir(), "nps2.tar.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snapshot.Write(f, hosttest.Open(t, hosttest.Root("nps2")), snapshot.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	addr := start(t, "--root", file)
	for irq, want := range map[string]float64{"106": 1, "107": 0, "108": 0} {
		if v, ok := scrapeValue(t, addr, exporter.MetricIRQLocal, map[string]string{"irq": irq}); !ok || v != want {
			t.Errorf("irqnuma_irq_local{irq=%q} = %v (%v), want %v", irq, v, ok, want)
		}
	}
}

// TestRunKeepsServing: a root that cannot be read and a NIC not there
// yet are served as irqnuma_scrape_error 1, never an exit.
func TestRunKeepsServing(t *testing.T) {
	for _, args := range [][]string{
		{"--root", "/nonexistent"},
		{"--root", hosttest.Root("seed"), "--nic", "eth9"},
	} {
		addr := start(t, args...)
		if v, _ := scrapeValue(t, addr, exporter.MetricScrapeError, nil); v != 1 {
			t.Errorf("%v: irqnuma_scrape_error %v, want 1", args, v)
		}
		if _, ok := scrapeValue(t, addr, "process_start_time_seconds", nil); !ok {
			t.Errorf("%v: no process_start_time_seconds", args)
		}
	}
}

func TestRunErrors(t *testing.T) {
	seed := hosttest.Root("seed")
	tests := []struct {
		give     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"--web.listen-address", "9143", "--root", seed}, cli.ExitUsage, `--web.listen-address "9143": want HOST:PORT`},
		{[]string{"--web.telemetry-path", "metrics", "--root", seed}, cli.ExitUsage, `--web.telemetry-path "metrics": want a path starting with /`},
		{[]string{"--web.telemetry-path", `/m"><b>`, "--root", seed}, cli.ExitUsage, `--web.telemetry-path "/m\"><b>"`},
		{[]string{"--web.config.file", "/nonexistent/web.yml", "--root", seed}, cli.ExitError, "--web.config.file /nonexistent/web.yml: "},
		{[]string{"--log.level", "loud"}, cli.ExitUsage, "--log.level: unrecognized log level loud"},
		{[]string{"--log.format", "xml"}, cli.ExitUsage, "--log.format: unrecognized log format xml"},
		{[]string{"--pods", "app=web"}, cli.ExitUsage, "--pods: want all (no label selector"},
		{[]string{"--pods", "all", "--pods-max", "0"}, cli.ExitUsage, "--pods-max 0: want 1 or more"},
		{[]string{"--pods-max", "5"}, cli.ExitUsage, "--pods-max bounds --pods all"},
		{[]string{"--pid", "0", "--root", seed}, cli.ExitUsage, "--pid 0: not a process id"},
		{[]string{"--pid", "x"}, cli.ExitUsage, `--pid: "x": not a number`},
		{[]string{"--cgroup", "/a/../b", "--root", seed}, cli.ExitUsage, `--cgroup /a/../b: ".." is not a group`},
		{[]string{"--cgroup", "", "--root", seed}, cli.ExitUsage, "--cgroup: empty path"},
		{[]string{"--bogus"}, cli.ExitUsage, "unknown flag: --bogus"},
		{[]string{"-bogus"}, cli.ExitUsage, "unknown shorthand flag: 'b' in -bogus"},
		{[]string{"serve"}, cli.ExitUsage, `unexpected argument "serve"`},
		{[]string{"--root", "/etc/hostname"}, cli.ExitUsage, "neither a folder nor a snapshot"},
		{[]string{"--web.listen-address", "256.0.0.1:1", "--root", seed}, cli.ExitError, "listen:"},
	}
	for _, tt := range tests {
		var stdout, stderr syncbuf.Buffer
		code := run(context.Background(), tt.give, &stdout, &stderr)
		if code != tt.wantCode || !strings.Contains(stderr.String(), tt.wantErr) {
			t.Errorf("irqnuma-exporter %s = exit %d, stderr %q; want exit %d with %q", strings.Join(tt.give, " "), code, stderr.String(), tt.wantCode, tt.wantErr)
		}
	}
	for _, h := range []string{"-h", "--help", "-help"} {
		var stdout, stderr syncbuf.Buffer
		if code := run(context.Background(), []string{h}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "--web.listen-address HOST:PORT") || !strings.Contains(stdout.String(), "--pods-max N") {
			t.Errorf("%s: exit %d, stdout %q", h, code, stdout.String())
		}
	}
}

// BenchmarkScrape is one scrape through the binary's handler (read,
// audit, client_golang's encoding with the process and Go collectors) on
// a synthetic 512-CPU host with 4 NICs of 64 queues and 1,000 IRQs, beside
// the exporter package's own (BenchmarkScrapeSynthetic in exporter/).
func BenchmarkScrape(b *testing.B) {
	root := hosttest.Synthetic(b, hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 4, QueuesPerNIC: 64, ExtraIRQs: 736})
	for _, accept := range []string{"", "application/openmetrics-text; version=1.0.0"} {
		name := "text"
		if accept != "" {
			name = "openmetrics"
		}
		b.Run(name, func(b *testing.B) {
			h := handlerOf(b, root, audit.Selection{})
			b.ReportAllocs()
			for b.Loop() {
				if resp, _ := get(b, h, http.MethodGet, "/metrics", accept); resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}

// FuzzParse: any flag values give options that pass the selection's own
// validation and a HOST:PORT, or one usage error; never a panic.
func FuzzParse(f *testing.F) {
	f.Add("127.0.0.1:9143", "1,2", "iperf3", "eth0", "/kubepods.slice/a")
	f.Add("9143", "0", "", "", "")
	f.Add(":0", "-1", "a\x00b", "eth\xff", "/a/../b")
	f.Add("[::1]:1", "1,,2", "x", "", "/sys/fs/cgroup/cpuset/x")
	f.Fuzz(func(t *testing.T, listen, pids, comm, nic, cgroup string) {
		o, done, err := parse([]string{"--web.listen-address", listen, "--pid", pids, "--comm", comm, "--nic", nic, "--cgroup", cgroup}, io.Discard)
		if err != nil {
			if !usage.Is(err) {
				t.Fatalf("parse error %v is not a usage error", err)
			}
			return
		}
		if done {
			t.Fatal("done without -h")
		}
		if verr := o.sel.Validate(); verr != nil {
			t.Fatalf("accepted a selection Validate refuses: %v", verr)
		}
		if len(o.sel.PIDs) == 0 {
			t.Fatalf("--pid %q accepted as no process", pids)
		}
	})
}
