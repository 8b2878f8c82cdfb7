package main

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// worker1 returns the unpacked cnto-worker1 capture: an OpenShift worker
// (80 CPUs, 2 nodes, even/odd) booted with isolcpus=managed_irq,0-4,11-79
// nohz_full=0-4,11-79 intel_iommu=on iommu=pt, captured without
// cpu/isolated, cpu/nohz_full or /sys/class/iommu.
func worker1(t *testing.T) string {
	t.Helper()
	realhosts.Require(t)
	c := realhosts.MustLookup(t, "cnto-worker1")
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

// TestAuditIsolatedRealHost: on cnto-worker1, 312 of the 336 queue IRQs
// of its six NICs have effective_affinity_list on the isolated CPUs
// 0-4,11-79 (counted by hand from proc/interrupts and proc/irq/N in the
// capture: eno1 73 of 80, eno2 78 of 80, eno3 8 of 8, eno4 7 of 8, ens7f0
// 75 of 80, ens7f1 71 of 80; the other 24 sit on CPUs 5-10). The audit
// says so with one isolated-irq finding per IRQ, naming the kinds and that
// the command line set them; the IOMMU mode is known from iommu=pt.
func TestAuditIsolatedRealHost(t *testing.T) {
	root := worker1(t)
	doc, code := auditJSON(t, root)
	if code != cli.ExitFindings {
		t.Errorf("exit %d, want %d (warnings)", code, cli.ExitFindings)
	}
	isolated, err := cpuset.ParseList("0-4,11-79")
	if err != nil {
		t.Fatal(err)
	}
	wantPerNIC := map[string]int{"eno1": 73, "eno2": 78, "eno3": 8, "eno4": 7, "ens7f0": 75, "ens7f1": 71}
	perNIC := map[string]int{}
	irqs := map[int]bool{}
	for _, f := range byCheck(doc, audit.CheckIsolatedIRQ) {
		perNIC[f.NIC]++
		cpus, err := cpuset.ParseList(f.CPUs)
		if err != nil || cpus.IsEmpty() || !cpus.IsSubsetOf(isolated) || len(f.IRQ) != 1 || f.Severity != "warning" {
			t.Errorf("isolated-irq %+v: want one IRQ, a warning, on CPUs within %s", f, isolated)
			continue
		}
		irqs[f.IRQ[0]] = true
		if !strings.Contains(f.Message, "(isolcpus managed_irq, nohz_full from the kernel command line)") {
			t.Errorf("isolated-irq message %q does not name the kinds and their source", f.Message)
		}
	}
	if len(irqs) != 312 || len(byCheck(doc, audit.CheckIsolatedIRQ)) != 312 {
		t.Errorf("isolated-irq covers %d IRQs in %d findings, want 312 of the 336 queue IRQs",
			len(irqs), len(byCheck(doc, audit.CheckIsolatedIRQ)))
	}
	if !maps.Equal(perNIC, wantPerNIC) {
		t.Errorf("isolated-irq per NIC %v, want %v", perNIC, wantPerNIC)
	}
	queues := 0
	stdout, _, _ := runCLI(t, "--root", root, "-o", "json", "irq", "list")
	var list struct {
		IRQs []struct {
			IRQ       int     `json:"irq"`
			Kind      string  `json:"kind"`
			Effective *string `json:"effective"`
		} `json:"irqs"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatal(err)
	}
	for _, q := range list.IRQs {
		if q.Kind != "queue" {
			continue
		}
		queues++
		if !irqs[q.IRQ] {
			if eff, _ := cpuset.ParseList(*q.Effective); eff.Intersects(isolated) {
				t.Errorf("queue IRQ %d on %s (isolated) has no isolated-irq finding", q.IRQ, eff)
			}
		}
	}
	if queues != 336 {
		t.Errorf("%d queue IRQs, want 336", queues)
	}
	// Node 0 keeps only CPUs 6, 8 and 10 out of isolation, node 1 only 5,
	// 7 and 9, and each NIC's queues already reach them or are too many
	// for an even share to be exceeded: no CPU is left to call free. (Before
	// the isolation was read, eno1 and eno2 were told that isolated CPUs
	// 38,40,50,60 and 2,4,6,... "serve none".)
	for _, f := range byCheck(doc, audit.CheckIRQSharedCPU) {
		t.Errorf("irq-shared-cpu %+v, want none", f)
	}
	for _, f := range byCheck(doc, audit.CheckIOMMUMode) {
		t.Errorf("iommu-mode %+v with iommu=pt on the command line, want none", f)
	}
	for _, f := range byCheck(doc, audit.CheckNotChecked) {
		if f.Subject == string(audit.CheckIOMMUMode) {
			t.Errorf("%+v: the command line's iommu=pt says the IOMMU passes DMA through", f)
		}
	}
}
