package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/run/exporter"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestCgroupFlag: --cgroup (repeatable) reaches the selection as the
// user wrote it, and a scrape of the seed host with an isolated cpuset
// partition on CPUs 16-17 (eth0's IRQ 285 lands on 17) answers the
// group's irqnuma_pod_* series through client_golang, in the text format
// and in OpenMetrics, both passing promtool check metrics.
func TestCgroupFlag(t *testing.T) {
	o, done, err := parse([]string{"--cgroup", "/sys/fs/cgroup/pod", "--cgroup", "other"}, io.Discard)
	if err != nil || done {
		t.Fatalf("parse: %v, done %v", err, done)
	}
	if want := []string{"/sys/fs/cgroup/pod", "other"}; !slices.Equal(o.sel.Cgroups, want) {
		t.Errorf("Cgroups = %q, want %q", o.sel.Cgroups, want)
	}

	root := hosttest.Copy(t, "seed")
	for name, data := range map[string]string{"cgroup.controllers": "cpuset cpu io memory pids\n", "cgroup.procs": "",
		"pod/cgroup.procs": "", "pod/cpuset.cpus.effective": "16-17\n", "pod/cpuset.mems.effective": "1\n",
		"pod/cpuset.cpus.partition": "isolated\n"} {
		p := filepath.Join(root, "sys/fs/cgroup", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	h := handlerOf(t, root, audit.Selection{Selection: o.sel.Selection})
	_, text := get(t, h, http.MethodGet, "/metrics", "")
	for _, want := range []string{
		`irqnuma_pod_exclusive_cpu_irqs{cgroup="/pod",container="",namespace="",nic="eth0",pod=""} 1`,
		`irqnuma_pod_cpus{cgroup="/pod",container="",namespace="",pod=""} 2`,
		`irqnuma_pod_finding{cgroup="/pod",check="cgroup-exclusive-irq",container="",namespace="",nic="eth0",pod="",severity="warning"} 1`,
		`irqnuma_process_present{selector="--cgroup /sys/fs/cgroup/pod"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", irqnumaPart(text))
	}
	promtool(t, text)
	_, om := get(t, h, http.MethodGet, "/metrics", "application/openmetrics-text; version=1.0.0; charset=utf-8")
	part := irqnumaPart(om)
	if !strings.Contains(part, exporter.MetricPodExclusiveIRQ+"{") {
		t.Errorf("OpenMetrics lacks %s:\n%s", exporter.MetricPodExclusiveIRQ, part)
	}
	promtool(t, part)
}
