package exporter

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/irqnuma/irqnuma/audit"
	"github.com/irqnuma/irqnuma/internal/hosttest"
	"github.com/irqnuma/irqnuma/internal/version"
)

// TestWriteText: the exact bytes of the text format, in the order
// Prometheus' client writes them (families by name, labels by name,
// samples by label values), with escaping and special values.
func TestWriteText(t *testing.T) {
	fams := []Family{
		{Name: "b_metric", Help: `two\lines` + "\nhere", Labels: []string{"z", "a"}, Samples: []Sample{
			{Values: []string{"2", "x"}, Value: 1},
			{Values: []string{"1", "x"}, Value: 1e6},
			{Values: []string{"1", `q"\` + "\n"}, Value: math.Inf(-1)},
		}},
		{Name: "a_metric", Help: "plain", Samples: []Sample{{Value: 0.25}}},
		{Name: "c_empty", Help: "no samples: left out", Labels: []string{"x"}},
		{Name: "d_nan", Help: "special", Samples: []Sample{{Value: math.NaN()}}},
	}
	var b bytes.Buffer
	skipped, err := WriteText(&b, fams)
	if skipped != nil || err != nil {
		t.Fatalf("WriteText: skipped %v, err %v", skipped, err)
	}
	want := `# HELP a_metric plain
# TYPE a_metric gauge
a_metric 0.25
# HELP b_metric two\\lines\nhere
# TYPE b_metric gauge
b_metric{a="q\"\\\n",z="1"} -Inf
b_metric{a="x",z="1"} 1e+06
b_metric{a="x",z="2"} 1
# HELP d_nan special
# TYPE d_nan gauge
d_nan NaN
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("WriteText (-want +got):\n%s", diff)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("Prometheus' parser refuses the output: %v", err)
	}
	if got := mfs["b_metric"].GetMetric()[0].GetLabel()[0].GetValue(); got != "q\"\\\n" {
		t.Errorf("escaped label value parses back as %q", got)
	}
}

// TestWriteTextSkips: a sample with a label value that is not UTF-8, or
// with the wrong number of values, is left out and named; the rest is
// written.
func TestWriteTextSkips(t *testing.T) {
	fams := []Family{{Name: "m", Help: "h", Labels: []string{"nic"}, Samples: []Sample{
		{Values: []string{"eth\xff"}, Value: 1},
		{Values: []string{"eth0", "extra"}, Value: 1},
		{Values: []string{"eth1"}, Value: 2},
	}}}
	var b bytes.Buffer
	skipped, err := WriteText(&b, fams)
	if err != nil {
		t.Fatal(err)
	}
	if skipped == nil || !strings.Contains(skipped.Error(), `nic="eth\xff" is not valid UTF-8`) ||
		!strings.Contains(skipped.Error(), "2 label values for 1 labels") {
		t.Errorf("skipped = %v, want both bad samples named", skipped)
	}
	if want := "# HELP m h\n# TYPE m gauge\nm{nic=\"eth1\"} 2\n"; b.String() != want {
		t.Errorf("output %q, want %q", b.String(), want)
	}
}

// TestHandlerGzipHead: gzip when asked for, the same metrics; HEAD gets
// the headers only.
func TestHandlerGzipHead(t *testing.T) {
	base := serve(t, gatherTree(hosttest.Root("nps2")), nil)
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req) // no transparent decompression
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", resp.Header.Get("Content-Encoding"))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil || !bytes.Contains(body, []byte("\nirqnuma_scrape_error 0\n")) {
		t.Errorf("gzip body: %v, %.200q", err, body)
	}
	head, err := http.Head(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(head.Body)
	head.Body.Close()
	if head.StatusCode != http.StatusOK || len(b) != 0 || head.ContentLength <= 0 {
		t.Errorf("HEAD: %s, %d body bytes, Content-Length %d", head.Status, len(b), head.ContentLength)
	}
}

// TestHandlerInFlight: past MaxInFlight scrapes at once the next is
// answered 503 and logged, and the others complete.
func TestHandlerInFlight(t *testing.T) {
	release := make(chan struct{})
	g := func() (*audit.State, error) {
		<-release
		return gatherTree(hosttest.Root("vm-virtio"))()
	}
	var log syncBuffer
	e := New(hosttest.Open(t, ""), audit.Selection{}, &log)
	e.read = g
	h := e.Handler()
	get := func() int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		return rec.Code
	}
	var wg sync.WaitGroup
	codes := make([]int, MaxInFlight)
	for i := range MaxInFlight {
		wg.Go(func() { codes[i] = get() })
	}
	for len(e.inFlight) < MaxInFlight { // one reads, the others wait their turn
		time.Sleep(time.Millisecond)
	}
	if code := get(); code != http.StatusServiceUnavailable {
		t.Errorf("scrape %d: %d, want 503", MaxInFlight+1, code)
	}
	close(release)
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("scrape %d: %d, want 200", i, c)
		}
	}
	if got := log.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "refused") {
		t.Errorf("logged %q, want the refusal once", got)
	}
}

// TestFamiliesBuildInfo: every answer names the build, read or not.
func TestFamiliesBuildInfo(t *testing.T) {
	v := version.Get()
	for _, readErr := range []error{nil, errors.New("boom")} {
		var b bytes.Buffer
		if _, err := WriteText(&b, families(nil, readErr, time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("irqnuma_build_info{goversion=%q,revision=%q,version=%q} 1\n", v.GoVersion, v.Revision, v.Version)
		if !strings.Contains(b.String(), want) {
			t.Errorf("read error %v: no %q in\n%s", readErr, want, b.String())
		}
	}
}
