package audit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
)

// cpufreq governors of the local CPUs: cpu-governor.
const CheckCPUGovernor Check = "cpu-governor"

func init() {
	register(&check{ids: []Check{CheckCPUGovernor}, needs: []fact{factGovernor},
		fix: "nothing to do on a VM without cpufreq; otherwise capture /sys/devices/system/cpu/cpu*/cpufreq",
		nic: (*auditor).checkGovernor})
}

// checkGovernor: cpu-governor. Local CPUs whose cpufreq governor is not
// performance.
func (a *auditor) checkGovernor(c *nicCtx) error {
	if !c.loc.Known() {
		return nil
	}
	if a.opts.Governor == nil {
		return skip(c.nic.Name, string(CheckCPUGovernor), "cpufreq governors were not read")
	}
	local := a.online(c.loc.CPUs)
	byGov := map[string][]int{}
	seen := 0
	for cpu := range local.All() {
		g, ok := a.governors[cpu]
		if !ok {
			var err error
			if g, err = a.opts.Governor(cpu); err != nil {
				return skip(c.nic.Name, string(CheckCPUGovernor), err.Error())
			}
			a.governors[cpu] = g
		}
		if g == "" {
			continue
		}
		seen++
		if g != "performance" {
			byGov[g] = append(byGov[g], cpu)
		}
	}
	if seen == 0 {
		return skip("", string(CheckCPUGovernor), "no cpufreq/scaling_governor for the NICs' local CPUs (no cpufreq driver, or not captured)")
	}
	if len(byGov) == 0 {
		return nil
	}
	var all cpuset.Set
	var parts []string
	for _, g := range slices.Sorted(maps.Keys(byGov)) {
		set := cpuset.New(byGov[g]...)
		all = all.Union(set)
		parts = append(parts, fmt.Sprintf("%s on CPUs %s", g, set.List()))
	}
	a.add(Finding{Check: CheckCPUGovernor, Severity: SeverityInfo, NIC: c.nic.Name,
		Subject: "governor of local CPUs", CPUs: all, Nodes: nodeIDs(c.loc.Node.Or(-1)),
		Message: fmt.Sprintf("%d of %s's %d local CPUs do not use the performance governor (%s): clock ramp-up adds run-to-run variance",
			all.Len(), c.nic.Name, local.Len(), strings.Join(parts, "; ")),
		Fix: fmt.Sprintf("cpupower -c %s frequency-set -g performance", all.List())})
	return nil
}
