package exporter

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/syncbuf"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// gather is what an exporter reads on each scrape.
type gather func() (*audit.State, error)

// gatherTree reads and audits a host tree as serve does.
func gatherTree(root string) gather {
	return func() (*audit.State, error) {
		fsys, err := kfile.Open(root)
		if err != nil {
			return nil, err
		}
		defer fsys.Close()
		return audit.Read(fsys, audit.Selection{})
	}
}

// scrape answers one Scrape of an exporter that reads with g, logging to
// log (nil: nowhere), in the text format, and parses that with the
// Prometheus text parser. A series left out fails the test.
func scrape(t *testing.T, g gather, log io.Writer) map[string]*dto.MetricFamily {
	t.Helper()
	return parseScrape(t, &Exporter{read: g, log: log})
}

// parseScrape is scrape of the exporter e.
func parseScrape(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	var b bytes.Buffer
	skipped, err := WriteText(&b, e.Scrape())
	if err != nil || skipped != nil {
		t.Fatalf("WriteText: %v, left out %v", err, skipped)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(&b)
	if err != nil {
		t.Fatalf("parse the scrape: %v", err)
	}
	return mfs
}

// series renders a family's samples as "label=value,... value", sorted.
func series(mf *dto.MetricFamily) []string {
	if mf == nil {
		return nil
	}
	var out []string
	for _, m := range mf.GetMetric() {
		var ls []string
		for _, l := range m.GetLabel() {
			ls = append(ls, l.GetName()+"="+l.GetValue())
		}
		out = append(out, strings.Join(ls, ",")+" "+model.SampleValue(m.GetGauge().GetValue()).String())
	}
	sort.Strings(out)
	return out
}

func TestExporterNPS2(t *testing.T) {
	root := hosttest.Root("nps2")
	var log syncbuf.Buffer
	t.Cleanup(func() {
		if l := log.String(); l != "" {
			t.Errorf("logged: %s", l)
		}
	})
	mfs := scrape(t, gatherTree(root), &log)

	// One irqnuma_finding per finding of the audit, with its labels.
	st, err := gatherTree(root)()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range st.Findings {
		want = append(want, "check="+string(f.Check)+",nic="+f.NIC+",severity="+string(f.Severity)+",subject="+f.Subject+" 1")
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, series(mfs[MetricFinding])); diff != "" {
		t.Errorf("%s (-audit +scrape):\n%s", MetricFinding, diff)
	}
	if len(want) == 0 {
		t.Fatal("nps2 audits to no findings; the test needs its remote IRQs")
	}

	// comp6 (IRQ 107) on CPU 3 and comp7 (IRQ 108) on CPU 20 are off the
	// NIC's node 1 (CPUs 8-15); the async vector (IRQ 100) and comp0-5
	// are local.
	tests := []struct {
		metric string
		want   []string
	}{
		{MetricIRQLocal, []string{
			"irq=100,nic=enp65s0f0,queue= 1",
			"irq=101,nic=enp65s0f0,queue=0 1",
			"irq=102,nic=enp65s0f0,queue=1 1",
			"irq=103,nic=enp65s0f0,queue=2 1",
			"irq=104,nic=enp65s0f0,queue=3 1",
			"irq=105,nic=enp65s0f0,queue=4 1",
			"irq=106,nic=enp65s0f0,queue=5 1",
			"irq=107,nic=enp65s0f0,queue=6 0",
			"irq=108,nic=enp65s0f0,queue=7 0",
		}},
		{MetricIRQEffective, []string{
			"irq=100,nic=enp65s0f0,queue= 8",
			"irq=101,nic=enp65s0f0,queue=0 8",
			"irq=102,nic=enp65s0f0,queue=1 9",
			"irq=103,nic=enp65s0f0,queue=2 10",
			"irq=104,nic=enp65s0f0,queue=3 11",
			"irq=105,nic=enp65s0f0,queue=4 12",
			"irq=106,nic=enp65s0f0,queue=5 13",
			"irq=107,nic=enp65s0f0,queue=6 3",
			"irq=108,nic=enp65s0f0,queue=7 20",
		}},
		{MetricNICNode, []string{"nic=enp65s0f0 1"}},
		{MetricScrapeError, []string{" 0"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, series(mfs[tt.metric])); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.metric, diff)
		}
	}
	if d := mfs[MetricScrapeDuration]; d == nil || d.GetMetric()[0].GetGauge().GetValue() <= 0 {
		t.Errorf("%s missing or zero", MetricScrapeDuration)
	}
	for name := range mfs {
		if !strings.HasPrefix(name, "irqnuma_") {
			t.Errorf("unexpected family %s", name)
		}
	}
	// The irq-remote findings are errors: what the alert rule keys on.
	var remote int
	for _, s := range series(mfs[MetricFinding]) {
		if strings.HasPrefix(s, "check=irq-remote,nic=enp65s0f0,severity=error,") {
			remote++
		}
	}
	if remote != 2 {
		t.Errorf("%d irq-remote error findings, want 2 (IRQs 107, 108)", remote)
	}
}

// TestExporterUnknownStaysAbsent: a two-node tree whose NIC's locality is
// unknown exports no irqnuma_irq_local and no node for it.
func TestExporterUnknownStaysAbsent(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	pci := filepath.Join(root, "sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0")
	for f, v := range map[string]string{"numa_node": "-1\n", "local_cpulist": "0-63\n"} {
		if err := os.WriteFile(filepath.Join(pci, f), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mfs := scrape(t, gatherTree(root), nil)
	for _, m := range []string{MetricIRQLocal, MetricNICNode} {
		if got := series(mfs[m]); len(got) != 0 {
			t.Errorf("%s = %q, want absent when the NIC's node is unknown", m, got)
		}
	}
	if got := series(mfs[MetricIRQEffective]); len(got) != 17 {
		t.Errorf("%s: %d series, want 17 (eth0's async and 16 queue IRQs)", MetricIRQEffective, len(got))
	}
	var unknown bool
	for _, s := range series(mfs[MetricFinding]) {
		unknown = unknown || strings.HasPrefix(s, "check=nic-node-unknown,nic=eth0,")
	}
	if !unknown {
		t.Errorf("no nic-node-unknown finding for eth0 in %q", series(mfs[MetricFinding]))
	}
}

func TestExporterScrapeError(t *testing.T) {
	var log syncbuf.Buffer
	boom := errors.New("read root: boom")
	mfs := scrape(t, func() (*audit.State, error) { return nil, boom }, &log)
	if diff := cmp.Diff([]string{" 1"}, series(mfs[MetricScrapeError])); diff != "" {
		t.Errorf("%s (-want +got):\n%s", MetricScrapeError, diff)
	}
	if mfs[MetricFinding] != nil || mfs[MetricIRQLocal] != nil {
		t.Error("a failed read exported findings or IRQs")
	}
	if got := log.String(); got != "irqnuma: scrape: read root: boom\n" {
		t.Errorf("logged %q, want the read error once", got)
	}
}

// TestExporterScrapePanic: a panic in the read, or in turning what was
// read into series (a State without its host), fails that scrape alone:
// irqnuma_scrape_error 1, no host series, the panic logged with the stack
// it was raised on; the next scrape reads afresh and answers in full.
func TestExporterScrapePanic(t *testing.T) {
	tests := []struct {
		name string
		give gather
	}{
		{"in the read", func() (*audit.State, error) { panic("ring count 2147483648") }},
		{"in the series", func() (*audit.State, error) { return &audit.State{}, nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log syncbuf.Buffer
			read := tt.give
			e := NewReader(func() (*audit.State, error) { return read() }, &log)
			mfs := parseScrape(t, e)
			if diff := cmp.Diff([]string{" 1"}, series(mfs[MetricScrapeError])); diff != "" {
				t.Errorf("%s (-want +got):\n%s", MetricScrapeError, diff)
			}
			if mfs[MetricFinding] != nil || mfs[MetricBuildInfo] == nil {
				t.Errorf("families %v: want the scrape's own only", keys(mfs))
			}
			got := log.String()
			if !strings.HasPrefix(got, "irqnuma: scrape: panic: ") || !strings.Contains(got, "\nirqnuma:   github.com/irqnuma/irqnuma/internal/run/exporter.(*Exporter).collect") {
				t.Errorf("logged %q, want the panic and its stack", got)
			}
			if strings.Contains(got, "\t") {
				t.Errorf("logged %q: a stack line holds a tab", got)
			}
			read = gatherTree(hosttest.Root("seed"))
			mfs = parseScrape(t, e)
			if diff := cmp.Diff([]string{" 0"}, series(mfs[MetricScrapeError])); diff != "" {
				t.Errorf("next scrape: %s (-want +got):\n%s", MetricScrapeError, diff)
			}
			if mfs[MetricFinding] == nil {
				t.Error("next scrape: no findings")
			}
		})
	}
}

func keys(mfs map[string]*dto.MetricFamily) []string {
	var out []string
	for k := range mfs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestScrapeIsReadOnly: scraping leaves every file of the tree as it was,
// content, mode and modification time.
func TestScrapeIsReadOnly(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	before := treeSum(t, root)
	for range 3 {
		scrape(t, gatherTree(root), nil)
	}
	if after := treeSum(t, root); after != before {
		t.Error("the tree changed during scrapes")
	}
}

func treeSum(t *testing.T, root string) [32]byte {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		io.WriteString(h, p+fi.Mode().String()+fi.ModTime().String()+"\n")
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

func TestWriteTextfile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "irqnuma.prom")
	e := New(hosttest.Open(t, hosttest.Root("nps2")), audit.Selection{}, nil)
	for range 2 { // the second write replaces the first
		if err := writeTextfile(path, e.Scrape()); err != nil {
			t.Fatalf("WriteTextfile: %v", err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	if got := series(mfs[MetricIRQLocal]); len(got) != 9 {
		t.Errorf("%s: %d series, want 9", MetricIRQLocal, len(got))
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("folder holds %d entries, want only irqnuma.prom (no temporary file left)", len(ents))
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 for node_exporter to read", st.Mode().Perm())
	}
	if err := writeTextfile(filepath.Join(dir, "nope", "x.prom"), e.Scrape()); err == nil {
		t.Error("WriteTextfile into a missing folder: no error")
	}
}

func BenchmarkScrapeSynthetic(b *testing.B) {
	root := hosttest.Synthetic(b, hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 4, QueuesPerNIC: 64, ExtraIRQs: 736})
	e := New(hosttest.Open(b, root), audit.Selection{}, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := WriteText(io.Discard, e.Scrape()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestExporterBadLabel: a NIC name that is not UTF-8 costs its own
// series, named in what WriteText left out, not the scrape.
func TestExporterBadLabel(t *testing.T) {
	root := hosttest.Root("vm-virtio")
	g := func() (*audit.State, error) {
		st, err := gatherTree(root)()
		if err == nil {
			st.Findings = append(st.Findings, audit.Finding{Check: audit.CheckIRQRemote, Severity: audit.SeverityError, NIC: "eth\xff", Subject: "IRQ 1"})
		}
		return st, err
	}
	var b bytes.Buffer
	skipped, err := WriteText(&b, (&Exporter{read: g}).Scrape())
	if err != nil || skipped == nil || !strings.Contains(skipped.Error(), MetricFinding) {
		t.Errorf("WriteText: %v, left out %v; want the bad %s named", err, skipped, MetricFinding)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(&b)
	if err != nil {
		t.Fatalf("parse the scrape: %v", err)
	}
	if got := series(mfs[MetricIRQLocal]); len(got) != 3 {
		t.Errorf("%s = %q, want vm-virtio's 3 series despite the bad finding", MetricIRQLocal, got)
	}
	for _, s := range series(mfs[MetricFinding]) {
		if strings.Contains(s, "eth\xff") {
			t.Errorf("invalid label value exported: %q", s)
		}
	}
}

// TestExporterProcessNIC: irqnuma_process_nic says, per selector, each
// NIC its running processes use, once, or what their sockets say
// instead; a selector with no running process has none.
func TestExporterProcessNIC(t *testing.T) {
	st := &audit.State{
		Matches: []proc.Match{
			{Selector: proc.CommSelector("nginx"), PIDs: []int{10, 11, 12}},
			{Selector: proc.PIDSelector(20), PIDs: []int{20}},
			{Selector: proc.CommSelector("iperf3")},
		},
		Uses: []nicuse.Use{
			{PID: 10, NICs: []string{"eth1"}, Attribution: unknown.Of(nicuse.AttributionSockets)},
			{PID: 11, NICs: []string{"eth0", "eth1"}, Attribution: unknown.Of(nicuse.AttributionSockets)},
			{PID: 12, NICs: []string{}, Attribution: unknown.Of(nicuse.AttributionAny)},
			{PID: 20, NICs: []string{}, Attribution: unknown.NotAs[nicuse.Attribution](unknown.KindNotReported, "its sockets say nothing of a NIC")},
		},
	}
	var buf bytes.Buffer
	if _, err := WriteText(&buf, []Family{processNICs(st)}); err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"attribution=any,nic=,selector=--comm nginx 1",
		"attribution=sockets,nic=eth0,selector=--comm nginx 1",
		"attribution=sockets,nic=eth1,selector=--comm nginx 1",
		"attribution=unknown,nic=,selector=--pid 20 1",
	}
	if diff := cmp.Diff(want, series(mfs[MetricProcessNIC])); diff != "" {
		t.Errorf("%s (-want +got):\n%s", MetricProcessNIC, diff)
	}
}
