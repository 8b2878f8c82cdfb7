package audit

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestAuditIRQRemote changes one queue IRQ of the seed host in memory
// (Audit reads nothing itself) and checks the irq-remote verdict.
func TestAuditIRQRemote(t *testing.T) {
	tests := []struct {
		name         string
		give         func(q *irq.IRQ)
		wantSeverity Severity // "" for no finding
		wantCPUs     string
		wantMessage  string
	}{
		{name: "as captured", give: func(q *irq.IRQ) {}},
		{name: "effective remote", give: func(q *irq.IRQ) {
			q.Affinity, q.Effective = unknown.Of(cpuset.New(3)), unknown.Of(cpuset.New(3))
		}, wantSeverity: SeverityError, wantCPUs: "3", wantMessage: "IRQ 284 (queue 0) of eth0 is delivered to CPU 3 (node 0), off the NIC's node 1"},
		{name: "effective local, mask reaches remote", give: func(q *irq.IRQ) {
			q.Affinity = unknown.Of(cpuset.Range(0, 63))
		}, wantSeverity: SeverityWarning, wantCPUs: "0-15,32-47", wantMessage: "is delivered to local CPU 50, but its requested mask 0-63 also reaches CPUs 0-15,32-47 (node 0)"},
		{name: "effective unknown, mask all remote", give: func(q *irq.IRQ) {
			q.Effective, q.Affinity = unknown.Value[cpuset.Set]{}, unknown.Of(cpuset.Range(0, 15))
		}, wantSeverity: SeverityError, wantCPUs: "0-15", wantMessage: "may only go to CPUs 0-15 (node 0), off the NIC's node 1 (effective CPU unknown)"},
		{name: "effective unknown, mask mixed", give: func(q *irq.IRQ) {
			q.Effective, q.Affinity = unknown.Value[cpuset.Set]{}, unknown.Of(cpuset.Range(15, 16))
		}, wantSeverity: SeverityWarning, wantCPUs: "15", wantMessage: "has requested mask 15-16, which reaches CPU 15 (node 0) (effective CPU unknown)"},
		{name: "effective spans both nodes", give: func(q *irq.IRQ) {
			q.Affinity, q.Effective = unknown.Of(cpuset.New(3, 50)), unknown.Of(cpuset.New(3, 50))
		}, wantSeverity: SeverityWarning, wantCPUs: "3"},
		{name: "nothing known", give: func(q *irq.IRQ) {
			q.Effective, q.Affinity = unknown.Value[cpuset.Set]{}, unknown.Value[cpuset.Set]{}
		}},
		{name: "managed: the fix says it cannot be moved", give: func(q *irq.IRQ) {
			q.Affinity, q.Effective, q.Managed = unknown.Of(cpuset.New(3)), unknown.Of(cpuset.New(3)), unknown.Of(true)
		}, wantSeverity: SeverityError, wantCPUs: "3", wantMessage: "delivered to CPU 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, tb := loadHost(t, "seed")
			q, ok := tb.Get(284)
			if !ok {
				t.Fatal("seed has no IRQ 284")
			}
			tt.give(q)
			got := onlyCheck(Run(h, tb, nil, Options{Governor: performance}), CheckIRQRemote)
			if tt.wantSeverity == "" {
				if len(got) != 0 {
					t.Errorf("irq-remote %+v, want none", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d irq-remote findings, want 1: %+v", len(got), got)
			}
			f := got[0]
			if f.Severity != tt.wantSeverity || f.CPUs.List() != tt.wantCPUs || !slices.Equal(f.IRQ, []int{284}) ||
				!strings.Contains(f.Message, tt.wantMessage) {
				t.Errorf("irq-remote = %s CPUs %s IRQs %v %q; want %s CPUs %s IRQ 284 message containing %q",
					f.Severity, f.CPUs, f.IRQ, f.Message, tt.wantSeverity, tt.wantCPUs, tt.wantMessage)
			}
			if unknown.Is(q.Managed, true) && !strings.HasPrefix(f.Fix, "kernel-managed") {
				t.Errorf("fix for a managed IRQ = %q, want the kernel-managed explanation", f.Fix)
			}
		})
	}
}

// TestAuditSamePackage: on the NPS2 host the remote CPU's package is
// named (comp6 on node 0 shares package 0 with node 1; comp7 on node 2
// does not).
func TestAuditSamePackage(t *testing.T) {
	h, tb := loadHost(t, "nps2")
	got := onlyCheck(Run(h, tb, nil, Options{Governor: performance}), CheckIRQRemote)
	var msgs []string
	for _, f := range got {
		msgs = append(msgs, f.Message)
	}
	want := []string{
		"IRQ 107 (queue 6) of enp65s0f0 is delivered to CPU 3 (node 0, same package), off the NIC's node 1",
		"IRQ 108 (queue 7) of enp65s0f0 is delivered to CPU 20 (node 2, other package), off the NIC's node 1",
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("nps2 irq-remote messages (-want +got):\n%s", diff)
	}
	// The seed host has one node per package: no package words.
	h, tb = loadHost(t, "seed")
	q, _ := tb.Get(285)
	q.Effective = unknown.Of(cpuset.New(1))
	for _, f := range onlyCheck(Run(h, tb, nil, Options{Governor: performance}), CheckIRQRemote) {
		if strings.Contains(f.Message, "package") {
			t.Errorf("seed message names packages: %q", f.Message)
		}
	}
}

// TestAuditIsolation: CPUs isolated by any kind, from sysfs or the
// command line, are where isolated-irq fires and are never offered as
// free CPUs by irq-shared-cpu. On the seed host IRQs 286 and 290 share
// CPU 53 while 17 local CPUs take no queue IRQ.
func TestAuditIsolation(t *testing.T) {
	fromCmdline := topology.IsolationSources{Isolated: unknown.Of(topology.SourceCmdline), NohzFull: unknown.Of(topology.SourceCmdline),
		ManagedIRQ: unknown.Of(topology.SourceCmdline), IRQAffinity: unknown.Of(topology.SourceCmdline)}
	tests := []struct {
		name       string
		give       func(h *topology.Host)
		wantShared string // a part of the irq-shared-cpu message; "" for none
		wantIso    []string
	}{
		{name: "no isolation", give: func(h *topology.Host) {},
			wantShared: "while 17 local CPUs serve none of eth0's queue IRQs (16,18-19,22,25,27-29,31,48-49,52,54,56-57,59,62)"},
		{name: "isolcpus=managed_irq on four free CPUs", give: func(h *topology.Host) {
			h.ManagedIRQ, h.IsolationFrom = cpuset.New(16, 18, 19, 22), fromCmdline
		}, wantShared: "while 13 local non-isolated CPUs serve none of eth0's queue IRQs (25,27-29,31,48-49,52,54,56-57,59,62)"},
		{name: "every free CPU isolated", give: func(h *topology.Host) {
			free, _ := cpuset.ParseList("16,18-19,22,25,27-29,31,48-49,52,54,56-57,59,62")
			h.NohzFull, h.IsolationFrom = free, fromCmdline
		}},
		{name: "the shared CPU isolated by managed_irq and nohz_full", give: func(h *topology.Host) {
			h.ManagedIRQ, h.NohzFull, h.IsolationFrom = cpuset.New(53), cpuset.New(53), fromCmdline
		}, wantShared: "while 17 local non-isolated CPUs serve none", wantIso: []string{
			"IRQ 286 (queue 2) of eth0 is delivered to isolated CPU 53 (isolcpus managed_irq, nohz_full from the kernel command line)",
			"IRQ 290 (queue 6) of eth0 is delivered to isolated CPU 53 (isolcpus managed_irq, nohz_full from the kernel command line)"}},
		{name: "domain from sysfs, managed_irq from the command line", give: func(h *topology.Host) {
			h.Isolated, h.ManagedIRQ = cpuset.New(53), cpuset.New(53)
			h.IsolationFrom = topology.IsolationSources{Isolated: unknown.Of(topology.SourceSysfs), ManagedIRQ: unknown.Of(topology.SourceCmdline)}
		}, wantShared: "non-isolated", wantIso: []string{
			"isolated CPU 53 (isolcpus; isolcpus managed_irq from the kernel command line)",
			"isolated CPU 53 (isolcpus; isolcpus managed_irq from the kernel command line)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, tb := loadHost(t, "seed")
			tt.give(h)
			fs := Run(h, tb, nil, Options{Governor: performance})
			shared := onlyCheck(fs, CheckIRQSharedCPU)
			switch {
			case tt.wantShared == "" && len(shared) > 0:
				t.Errorf("irq-shared-cpu %+v, want none (no free CPU left)", shared)
			case tt.wantShared != "" && (len(shared) != 1 || !strings.Contains(shared[0].Message, tt.wantShared)):
				t.Errorf("irq-shared-cpu %+v, want one saying %q", shared, tt.wantShared)
			}
			iso := onlyCheck(fs, CheckIsolatedIRQ)
			if len(iso) != len(tt.wantIso) {
				t.Fatalf("isolated-irq %+v, want %d", iso, len(tt.wantIso))
			}
			for i, f := range iso {
				if !strings.Contains(f.Message, tt.wantIso[i]) || f.CPUs.List() != "53" {
					t.Errorf("isolated-irq %q (CPUs %s), want it to contain %q on CPU 53", f.Message, f.CPUs, tt.wantIso[i])
				}
			}
		})
	}
}

// TestAuditIRQPlacementUnknown: a NIC whose queue IRQs have no affinity
// files gets one not-checked irq-remote warning (a gate must not pass
// on it) and no placement findings.
func TestAuditIRQPlacementUnknown(t *testing.T) {
	h, tb := loadHost(t, "seed")
	for i := range tb.IRQs {
		tb.IRQs[i].Affinity, tb.IRQs[i].Effective = unknown.Value[cpuset.Set]{}, unknown.Value[cpuset.Set]{}
	}
	h.Isolated = cpuset.New(50)
	var got []string
	for _, f := range Run(h, tb, nil, Options{Governor: performance}) {
		if f.Check == CheckIRQRemote || f.Check == CheckIsolatedIRQ || f.Subject == string(CheckIRQRemote) {
			got = append(got, fmt.Sprintf("%s %s %s %s: %s", f.Severity, f.Check, f.NIC, f.Subject, f.Message))
		}
	}
	want := []string{"warning not-checked eth0 irq-remote: no /proc/irq/N affinity files for eth0's queue IRQs: placement unknown"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}
