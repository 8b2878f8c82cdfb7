package exporter

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

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
