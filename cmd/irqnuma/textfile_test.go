package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

func TestAuditTextfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prom := filepath.Join(dir, "irqnuma.prom")
	out, errOut, code := runCLI(t, "audit", "-o", "json", "--fail-on", "error", "--root", hosttest.Root("nps2"), "--textfile", prom)
	if code != cli.ExitFindings {
		t.Fatalf("audit: exit %d (%s), want %d: nps2 has remote IRQs", code, errOut, cli.ExitFindings)
	}
	var doc struct {
		Findings []struct{ Check, Severity, NIC, Subject string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range doc.Findings {
		want = append(want, strings.Join([]string{f.Check, f.Severity, f.NIC, f.Subject}, " | ")+" = 1")
	}
	sort.Strings(want)
	f, err := os.Open(prom)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("parse %s: %v", prom, err)
	}
	if diff := cmp.Diff(want, findingSeries(mfs["irqnuma_finding"])); diff != "" {
		t.Errorf("textfile findings (-stdout +textfile):\n%s", diff)
	}
	if n := len(mfs["irqnuma_irq_local"].GetMetric()); n != 9 {
		t.Errorf("irqnuma_irq_local: %d series, want 9", n)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the textfile folder, want 1 (no temporary left)", len(ents))
	}
}

func TestAuditTextfileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prom := filepath.Join(dir, "irqnuma.prom")
	// A root that cannot be read still leaves the failure in the file.
	_, errOut, code := runCLI(t, "audit", "--root", filepath.Join(dir, "nope"), "--textfile", prom)
	if code != cli.ExitError || !strings.Contains(errOut, "root") {
		t.Errorf("audit on a missing root: exit %d, stderr %q", code, errOut)
	}
	b, err := os.ReadFile(prom)
	if err != nil || !strings.Contains(string(b), "\nirqnuma_scrape_error 1\n") {
		t.Errorf("textfile after a failed read = %q, %v; want irqnuma_scrape_error 1", b, err)
	}
	_, errOut, code = runCLI(t, "audit", "--root", hosttest.Root("seed"), "--textfile", filepath.Join(dir, "no", "such", "x.prom"))
	if code != cli.ExitError || !strings.Contains(errOut, "textfile") {
		t.Errorf("audit --textfile into a missing folder: exit %d, stderr %q", code, errOut)
	}
}

// TestTextfileFolderMissing: a textfile that cannot be written (its folder
// is missing, as /var/lib/node_exporter/textfile_collector is on Debian)
// still shows the audit, then fails naming the path.
func TestTextfileFolderMissing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "no-such-folder", "irqnuma.prom")
	stdout, stderr, code := runCLI(t, "--root", hosttest.Root("seed"), "audit", "--textfile", path)
	if code != cli.ExitError || !strings.Contains(stdout, "verdict:") || !strings.Contains(stderr, path) {
		t.Errorf("exit %d, stderr %q, stdout %q; want exit 1 after the audit, naming %s", code, stderr, stdout, path)
	}
}

// findingSeries renders irqnuma_finding samples as "check severity nic
// subject = value", sorted.
func findingSeries(mf *dto.MetricFamily) []string {
	var out []string
	for _, m := range mf.GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		out = append(out, strings.Join([]string{l["check"], l["severity"], l["nic"], l["subject"]}, " | ")+" = "+model.SampleValue(m.GetGauge().GetValue()).String())
	}
	sort.Strings(out)
	return out
}
