package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/hosttest"
)

// syncBuffer (watch_tty_test.go) collects the server's stderr.

var servingRE = regexp.MustCompile(`serving http://([^/]+)/metrics`)

// startServe runs `irqnuma serve` on a free loopback port and returns its
// address; the server stops when the test ends, and must exit 0.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...), strings.NewReader(""), &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if c := <-code; c != 0 {
			t.Errorf("serve exit %d, stderr %q", c, stderr.String())
		}
		if stdout.String() != "" {
			t.Errorf("serve wrote to stdout: %q", stdout.String())
		}
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := servingRE.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		select {
		case c := <-code:
			t.Fatalf("serve exited %d: %s", c, stderr.String())
		default:
		}
	}
	t.Fatalf("serve did not start: %s", stderr.String())
	return ""
}

func scrapeCLI(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return mfs
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

// TestServeMatchesAudit: on every host tree, the exporter started by the
// CLI answers one irqnuma_finding per finding of `irqnuma audit`.
func TestServeMatchesAudit(t *testing.T) {
	t.Parallel()
	for _, name := range hosttest.Names() {
		t.Run(name, func(t *testing.T) {
			root := hosttest.Root(name)
			out, errOut, code := runCLI(t, "audit", "-o", "json", "--fail-on", "never", "--root", root)
			if code != 0 {
				t.Fatalf("audit: exit %d: %s", code, errOut)
			}
			var doc struct {
				Findings []struct {
					Check, Severity, NIC, Subject string
				}
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, f := range doc.Findings {
				want = append(want, strings.Join([]string{f.Check, f.Severity, f.NIC, f.Subject}, " | ")+" = 1")
			}
			sort.Strings(want)
			mfs := scrapeCLI(t, startServe(t, "--root", root))
			if diff := cmp.Diff(want, findingSeries(mfs["irqnuma_finding"])); diff != "" {
				t.Errorf("irqnuma_finding (-audit +serve):\n%s", diff)
			}
			if e := mfs["irqnuma_scrape_error"]; e == nil || e.GetMetric()[0].GetGauge().GetValue() != 0 {
				t.Errorf("irqnuma_scrape_error = %v, want 0", e)
			}
		})
	}
}

// TestServeGolden keeps the exporter's answer for each host tree under
// testdata/golden/serve/: every series but the findings (which
// TestServeMatchesAudit holds to the audit's own, as the audit's wording
// evolves), the scrape duration and the build.
func TestServeGolden(t *testing.T) {
	t.Parallel()
	for _, name := range hosttest.Names() {
		t.Run(name, func(t *testing.T) {
			addr := startServe(t, "--root", hosttest.Root(name))
			resp, err := http.Get("http://" + addr + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			var keep []string
			for _, l := range strings.SplitAfter(string(b), "\n") {
				if !strings.HasPrefix(l, "irqnuma_scrape_duration_seconds ") && !strings.HasPrefix(l, "irqnuma_finding{") &&
					!strings.HasPrefix(l, "irqnuma_build_info{") {
					keep = append(keep, l)
				}
			}
			golden(t, "serve/"+name+".prom", strings.Join(keep, ""))
		})
	}
}

// TestServeSnapshot: the exporter serves a snapshot file, with the remote
// IRQs of nps2 at irqnuma_irq_local 0.
func TestServeSnapshot(t *testing.T) {
	t.Parallel()
	file := snapshotOf(t, hosttest.Root("nps2"))
	mfs := scrapeCLI(t, startServe(t, "--root", file))
	var remote []string
	for _, m := range mfs["irqnuma_irq_local"].GetMetric() {
		if m.GetGauge().GetValue() == 0 {
			for _, l := range m.GetLabel() {
				if l.GetName() == "irq" {
					remote = append(remote, l.GetValue())
				}
			}
		}
	}
	sort.Strings(remote)
	if diff := cmp.Diff([]string{"107", "108"}, remote); diff != "" {
		t.Errorf("remote IRQs (-want +got):\n%s", diff)
	}
}

func TestServeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"serve", "--listen", "9143", "--root", hosttest.Root("seed")}, cli.ExitUsage, `--listen "9143": want HOST:PORT`},
		{[]string{"serve", "--pid", "0", "--root", hosttest.Root("seed")}, cli.ExitUsage, "--pid 0: not a process id"},
	}
	for _, tt := range tests {
		_, errOut, code := runCLI(t, tt.give...)
		if code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) {
			t.Errorf("irqnuma %s = exit %d, stderr %q; want exit %d with %q", strings.Join(tt.give, " "), code, errOut, tt.wantCode, tt.wantErr)
		}
	}
}

// gauge returns the value of the series of mf whose labels include want,
// and whether there is one.
func gauge(mf *dto.MetricFamily, want map[string]string) (float64, bool) {
	for _, m := range mf.GetMetric() {
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

// TestServeKeepsServing: what the host lacks at start or loses later is
// served as series that say so, never an exit (under systemd's
// Restart=on-failure or a DaemonSet that is a crash loop). A root that
// cannot be read and a NIC that is not there yet answer
// irqnuma_scrape_error 1; a --comm whose process starts and stops after
// the exporter keeps the NIC and IRQ series throughout while
// irqnuma_process_present follows it.
func TestServeKeepsServing(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--root", "/nonexistent"},
		{"--root", hosttest.Root("seed"), "--nic", "eth9"},
	} {
		addr := startServe(t, args...)
		mfs := scrapeCLI(t, addr)
		if v, _ := gauge(mfs["irqnuma_scrape_error"], nil); v != 1 {
			t.Errorf("serve %v: irqnuma_scrape_error %v, want 1", args, v)
		}
	}

	// A process of a name no other has: a copy of sleep.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("irqnbench%d", os.Getpid()%100000)
	bin := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	sel := map[string]string{"selector": "--comm " + name}
	addr := startServe(t, "--comm", name)
	check := func(when string, present float64) {
		t.Helper()
		mfs := scrapeCLI(t, addr)
		if v, ok := gauge(mfs["irqnuma_process_present"], sel); !ok || v != present {
			t.Errorf("%s: irqnuma_process_present %v (%v), want %v", when, v, ok, present)
		}
		if v, _ := gauge(mfs["irqnuma_scrape_error"], nil); v != 0 {
			t.Errorf("%s: irqnuma_scrape_error %v, want 0", when, v)
		}
		if mfs["irqnuma_nic_numa_node"] == nil && mfs["irqnuma_finding"] == nil {
			t.Errorf("%s: no NIC series: %v", when, keys(mfs))
		}
	}
	check("before it starts", 0)
	cmd := exec.Command(bin, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	check("while it runs", 1)
	cmd.Process.Kill()
	cmd.Wait()
	check("after it stopped", 0)
}

func keys(m map[string]*dto.MetricFamily) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
