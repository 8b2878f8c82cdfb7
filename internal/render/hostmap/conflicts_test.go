package hostmap

import (
	"slices"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// audited builds the map as the CLI does: with the audit's findings on
// the same reading, whose conflicts it draws.
func audited(tb testing.TB, h *topology.Host, t *irq.Table, procs []*proc.Process, opt Options) *Map {
	tb.Helper()
	opt.Findings = audit.Run(h, t, procs, audit.Options{NICs: opt.NICs, Uses: opt.Uses})
	return Build(h, t, procs, opt)
}

// TestConflictsAreTheAudits: on every host tree, each conflict the map
// draws is one the audit found (same check, NIC, CPU and IRQs), and each
// CPU an irq-shared-cpu finding names is drawn as a conflict of its NIC.
func TestConflictsAreTheAudits(t *testing.T) {
	for _, name := range hosttest.Names() {
		t.Run(name, func(t *testing.T) {
			st, err := audit.Read(hosttest.FS(t, name), audit.Selection{})
			if err != nil {
				t.Fatal(err)
			}
			m := Build(st.Host, st.IRQs, st.Procs, Options{Uses: st.Uses, Findings: st.Findings})
			if name == "seed" && len(m.Conflicts) != 1 {
				t.Errorf("seed: %d conflicts, want 1 (eth0 queues 2 and 6 on CPU 53)", len(m.Conflicts))
			}
			for _, c := range m.Conflicts {
				if c.Kind != ConflictKindSharedCPU {
					t.Errorf("conflict %+v without a watched process", c)
					continue
				}
				found := slices.ContainsFunc(st.Findings, func(f audit.Finding) bool {
					return f.Check == audit.CheckIRQSharedCPU && f.NIC == c.NIC && f.CPUs.Contains(c.CPU) &&
						!slices.ContainsFunc(c.IRQs, func(n int) bool { return !slices.Contains(f.IRQ, n) })
				})
				if !found {
					t.Errorf("map conflict %+v is no audit finding", c)
				}
			}
			for _, f := range st.Findings {
				if f.Check != audit.CheckIRQSharedCPU {
					continue
				}
				for cpu := range f.CPUs.All() {
					if !slices.ContainsFunc(m.Conflicts, func(c Conflict) bool { return c.NIC == f.NIC && c.CPU == cpu }) {
						t.Errorf("audit finding %q names CPU %d; the map draws no conflict there", f.Message, cpu)
					}
				}
			}
		})
	}
}
