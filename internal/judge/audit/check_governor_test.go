package audit

import (
	"slices"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
)

// TestAuditGovernorInjected: the governor reader is called for the local
// online CPUs only, and its answers make the finding.
func TestAuditGovernorInjected(t *testing.T) {
	h, tb := loadHost(t, "seed")
	var asked []int
	gov := func(cpu int) (string, error) {
		asked = append(asked, cpu)
		if cpu == 20 || cpu == 48 {
			return "powersave", nil
		}
		return "performance", nil
	}
	got := onlyCheck(Run(h, tb, nil, Options{Governor: gov}), CheckCPUGovernor)
	slices.Sort(asked)
	if want := cpuset.New(append(cpuset.Range(16, 31).IDs(), cpuset.Range(48, 63).IDs()...)...).IDs(); !slices.Equal(asked, want) {
		t.Errorf("governor asked for %v, want %v", asked, want)
	}
	if len(got) != 1 || got[0].CPUs.List() != "20,48" || got[0].Fix != "cpupower -c 20,48 frequency-set -g performance" {
		t.Errorf("cpu-governor = %+v, want CPUs 20,48 with a cpupower fix", got)
	}
}
