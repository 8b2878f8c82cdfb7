package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/realhosts"
)

// worker1 returns the unpacked cnto-worker1 capture: an OpenShift worker
// (80 CPUs, 2 nodes, even/odd) booted with isolcpus=managed_irq,0-4,11-79
// nohz_full=0-4,11-79 intel_iommu=on iommu=pt, captured without
// cpu/isolated, cpu/nohz_full or /sys/class/iommu.
func worker1(t *testing.T) string {
	t.Helper()
	realhosts.Require(t)
	c, ok := realhosts.Lookup("cnto-worker1")
	if !ok {
		t.Skip("no cnto-worker1 capture")
	}
	return realhosts.Root(t, c)
}

// TestTopologyIsolationRealHost: topology says which CPUs are isolated,
// of which kind, and that the command line said so; and the IOMMU mode
// with the parameter that set it.
func TestTopologyIsolationRealHost(t *testing.T) {
	root := worker1(t)
	stdout, stderr, code := runCLI(t, "--root", root, "topology")
	if code != cli.ExitOK {
		t.Fatalf("topology: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"\nisolated CPUs 0-4,11-79: isolcpus managed_irq 0-4,11-79 (source: cmdline); nohz_full 0-4,11-79 (source: cmdline)\n",
		"\nIOMMU passthrough (source: cmdline iommu=pt)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("topology lacks %q:\n%s", want, stdout)
		}
	}

	stdout, stderr, code = runCLI(t, "--root", root, "-o", "json", "topology")
	if code != cli.ExitOK {
		t.Fatalf("topology -o json: exit %d: %s", code, stderr)
	}
	type sourced struct {
		CPUs   *string `json:"cpus"`
		Source string  `json:"source"`
	}
	var doc struct {
		Isolated  string `json:"isolated"`
		NohzFull  string `json:"nohz_full"`
		Isolation struct {
			CPUs        *string `json:"cpus"`
			Domain      sourced `json:"domain"`
			ManagedIRQ  sourced `json:"managed_irq"`
			NohzFull    sourced `json:"nohz_full"`
			IRQAffinity sourced `json:"irqaffinity"`
		} `json:"isolation"`
		IOMMU struct {
			Mode, Source, Param string
		} `json:"iommu"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	str := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	iso := doc.Isolation
	got := []string{str(iso.CPUs), str(iso.Domain.CPUs), iso.Domain.Source, str(iso.ManagedIRQ.CPUs), iso.ManagedIRQ.Source,
		str(iso.NohzFull.CPUs), iso.NohzFull.Source, doc.Isolated, doc.NohzFull,
		doc.IOMMU.Mode, doc.IOMMU.Source, doc.IOMMU.Param}
	want := []string{"0-4,11-79", "", "cmdline", "0-4,11-79", "cmdline",
		"0-4,11-79", "cmdline", "", "0-4,11-79",
		"passthrough", "cmdline", "iommu=pt"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("topology JSON isolation and IOMMU:\n got %q\nwant %q", got, want)
	}
}
