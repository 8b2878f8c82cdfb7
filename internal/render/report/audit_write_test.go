package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// loadHost reads a committed host tree in place (read-only).
func loadHost(t testing.TB, name string) (*topology.Host, *irq.Table) {
	t.Helper()
	h, err := topology.Read(hosttest.Open(t, hosttest.Root(name)))
	if err != nil {
		t.Fatal(err)
	}
	tb, err := irq.Load(h, irq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h, tb
}

// performance is a Governor that says every CPU runs "performance".
func performance(int) (string, error) { return "performance", nil }

func TestVerdict(t *testing.T) {
	w := audit.Finding{Severity: audit.SeverityWarning}
	e := audit.Finding{Severity: audit.SeverityError}
	i := audit.Finding{Severity: audit.SeverityInfo}
	tests := []struct {
		give   []audit.Finding
		failOn audit.Severity
		want   string
	}{
		{give: nil, failOn: audit.SeverityWarning, want: "verdict: ready: no findings"},
		{give: []audit.Finding{i, i}, failOn: audit.SeverityWarning, want: "verdict: ready: nothing at or above warning (2 info)"},
		{give: []audit.Finding{i}, failOn: audit.SeverityInfo, want: "verdict: NOT READY: 1 info at or above info (1 info in all)"},
		{give: []audit.Finding{e, w, w, i}, failOn: audit.SeverityWarning, want: "verdict: NOT READY: 1 error, 2 warnings at or above warning (1 error, 2 warnings, 1 info in all)"},
		{give: []audit.Finding{w, i}, failOn: audit.SeverityError, want: "verdict: ready: nothing at or above error (1 warning, 1 info)"},
		{give: []audit.Finding{e}, failOn: "", want: "verdict: 1 error (--fail-on never)"},
	}
	for _, tt := range tests {
		if got := verdict(tt.give, tt.failOn); got != tt.want {
			t.Errorf("verdict(%d findings, %q) = %q, want %q", len(tt.give), tt.failOn, got, tt.want)
		}
	}
}

// TestAuditJSONShape: every structured field is present, arrays never
// null, the summary counts by severity.
func TestAuditJSONShape(t *testing.T) {
	h, tb := loadHost(t, "seed")
	fs := audit.Run(h, tb, nil, audit.Options{})
	doc := NewAuditDoc(&audit.State{Host: h, IRQs: tb, Findings: fs})
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Findings []map[string]json.RawMessage `json:"findings"`
		Summary  map[string]int               `json:"summary"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw.Findings) == 0 {
		t.Fatal("no findings")
	}
	for _, f := range raw.Findings {
		var keys []string
		for k := range f {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"check", "cpus", "fix", "irq", "message", "nic", "nodes", "pid", "severity", "subject", "tid"}; !slices.Equal(keys, want) {
			t.Errorf("finding keys %v, want %v", keys, want)
		}
		for _, k := range []string{"irq", "tid", "nodes"} {
			if string(f[k]) == "null" {
				t.Errorf("finding %s: %s is null", f["check"], k)
			}
		}
	}
	if diff := cmp.Diff(map[string]int{"error": 0, "warning": 1, "info": 4}, raw.Summary); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

// TestAuditOrder: NICs by name, host-wide last, worst first in a group.
func TestAuditOrder(t *testing.T) {
	h, tb := loadHost(t, "offline-2node")
	fs := audit.Run(h, tb, nil, audit.Options{Governor: performance})
	var groups []string
	for i, f := range fs {
		if len(groups) == 0 || groups[len(groups)-1] != f.NIC {
			groups = append(groups, f.NIC)
		}
		if i > 0 && fs[i-1].NIC == f.NIC && fs[i-1].Severity.Rank() < f.Severity.Rank() {
			t.Errorf("finding %d (%s %s) after a less severe one", i, f.Severity, f.Check)
		}
	}
	if want := []string{"ens1f0", "ens2f0", ""}; !slices.Equal(groups, want) {
		t.Errorf("groups %q, want %q", groups, want)
	}
	var buf bytes.Buffer
	if err := WriteAudit(&buf, NewAuditDoc(&audit.State{Host: h, IRQs: tb, Findings: fs}), audit.SeverityWarning, 0); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("trailing space in %q", line)
		}
	}
	if !strings.Contains(buf.String(), "ens2f0: i40e 0000:5e:00.0, local node 1 (from local_cpulist), 4 queue IRQs\n") {
		t.Errorf("no ens2f0 header in:\n%s", buf.String())
	}
}

// TestGroupFindings: findings of one NIC saying the same thing of
// different IRQs become one row at the first one's place; a different
// cause, fix or a finding alone stays as it is.
func TestGroupFindings(t *testing.T) {
	remote := func(irqN, cpu int, grp string) audit.Finding {
		return audit.Finding{Check: audit.CheckIRQRemote, Severity: audit.SeverityError, NIC: "eth0",
			Subject: fmt.Sprintf("IRQ %d", irqN), Message: "one", Fix: "irqnuma irq pin eth0",
			IRQ: []int{irqN}, CPUs: cpuset.New(cpu), Group: grp}
	}
	toNode1 := "are delivered to %s (node 1), off the NIC's node 0"
	toNode2 := "are delivered to %s (node 2), off the NIC's node 0"
	info := audit.Finding{Check: audit.CheckQueuesVsCPUs, Severity: audit.SeverityInfo, NIC: "eth0", Subject: "8 queues", Message: "m"}
	got := groupFindings([]audit.Finding{remote(62, 4, toNode1), remote(70, 9, toNode2), info, remote(63, 5, toNode1), remote(64, 6, toNode1)})
	var lines []string
	for _, f := range got {
		lines = append(lines, f.Subject+": "+f.Message)
	}
	want := []string{
		"IRQs 62-64 (3): IRQs 62-64 of eth0 are delivered to CPUs 4-6 (node 1), off the NIC's node 0",
		"IRQ 70: one",
		"8 queues: m",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("grouped (-want +got):\n%s", diff)
	}
}
