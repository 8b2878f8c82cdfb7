package audit

import (
	"cmp"
	"errors"
	"slices"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
)

// check is one registered unit of the audit: a check, or a small family
// of checks that share their work, in a file of its own
// (check_<name>.go) that registers it from init. It says which Check ids
// its findings carry, what facts it cannot judge without, and how it
// runs: per audited NIC, per watched process judged against a NIC, once
// for the host after every NIC, or a mix (iommu-mode judges a NIC whose
// IOMMU group is known, then the host for the rest).
//
// A run function adds its findings with a.add and returns nil, also when
// there is nothing to report; when it cannot judge, it returns
// skip(...): a *notChecked error saying why, which the audit turns into
// a not-checked finding (node_exporter's ErrNoData, kept apart from
// "nothing to report"). Any other error is reported the same way, with
// the error as the why.
type check struct {
	// ids are the Check ids of its findings.
	ids []Check
	// needs are the facts it cannot judge without: when one is missing
	// the audit says not-checked naming the check (TestCheckNeeds holds
	// every check to that).
	needs []fact
	// fix says how to make the check possible, for its not-checked
	// findings; "" for the general fix (run on the live host, or capture
	// the missing file).
	fix  string
	nic  func(a *auditor, c *nicCtx) error
	proc func(a *auditor, c *nicCtx, p *proc.Process) error
	host func(a *auditor) error
}

// fact is something a check reads beyond the topology and the IRQs.
type fact string

// The facts checks need.
const (
	factAffinity   fact = "the queue IRQs' /proc/irq/N affinity"    // irq.IRQ.Affinity, Effective
	factQueues     fact = "/sys/class/net/NIC/queues"               // topology.NIC.Queues
	factIrqbalance fact = "irqbalance's settings"                   // Options.Irqbalance
	factGovernor   fact = "the CPUs' cpufreq governors"             // Options.Governor
	factIOMMU      fact = "the IOMMU (/sys/class/iommu, groups)"    // Options.IOMMU
	factCmdline    fact = "the kernel command line"                 // Options.Cmdline
	factNumaMaps   fact = "a watched process's /proc/PID/numa_maps" // proc.Process.NodeKB
)

// registry holds every check, in the order their files registered them.
var registry []*check

// register adds a check; each check's file calls it from init. Where
// its ids stand among the others is order's to say (order.go).
func register(c *check) { registry = append(registry, c) }

// registered returns the checks in run order: by the place of their
// first id. Run order only decides which of two not-checked findings of
// the same NIC and subject is kept (the first); the findings themselves
// are sorted (sortFindings).
func registered() []*check {
	out := slices.Clone(registry)
	slices.SortStableFunc(out, func(x, y *check) int { return cmp.Compare(x.ids[0].Place(), y.ids[0].Place()) })
	return out
}

// judges adapts the run function of a check that can always judge (it
// needs no fact a tree may lack).
func judges(f func(a *auditor, c *nicCtx)) func(a *auditor, c *nicCtx) error {
	return func(a *auditor, c *nicCtx) error {
		f(a, c)
		return nil
	}
}

// notChecked is the error a check returns when it cannot judge: the
// not-checked finding it becomes, for a NIC ("" for the host).
type notChecked struct {
	sev     Severity
	nic     string
	subject string // the check, "rps-remote, xps-remote", or "proc-mem-remote for PID 7"
	why     string
	fix     string // "" for the check's fix
}

func (e *notChecked) Error() string { return "not checked: " + e.subject + ": " + e.why }

// skip is the info-level not-checked error of a check (subject) for a NIC
// ("" for the host), with why.
func skip(nic, subject, why string) error {
	return &notChecked{sev: SeverityInfo, nic: nic, subject: subject, why: why}
}

// runChecks runs every registered check: per NIC those that run per NIC
// or per process, then those that run for the host.
func (a *auditor) runChecks(nics []*topology.NIC) {
	checks := registered()
	for _, nic := range nics {
		c := a.nicContext(nic)
		for _, ch := range checks {
			a.runNIC(ch, c)
		}
	}
	for _, ch := range checks {
		if ch.host != nil {
			a.notCheckedErr("", ch, ch.host(a))
		}
	}
}

// runNIC runs a check on one NIC, and on each watched process judged
// against it.
func (a *auditor) runNIC(ch *check, c *nicCtx) {
	if ch.nic != nil {
		a.notCheckedErr(c.nic.Name, ch, ch.nic(a, c))
	}
	if ch.proc == nil {
		return
	}
	for i, p := range a.procs {
		if slices.Contains(a.pns[i].Judged, c.nic.Name) {
			a.notCheckedErr(c.nic.Name, ch, ch.proc(a, c, p))
		}
	}
}

// notCheckedErr turns what a check returned into a not-checked finding:
// nothing for nil, the finding a *notChecked says, or for another error
// an info finding for nic naming the check, with the error as the why.
func (a *auditor) notCheckedErr(nic string, ch *check, err error) {
	if err == nil {
		return
	}
	var nc *notChecked
	if !errors.As(err, &nc) {
		nc = &notChecked{sev: SeverityInfo, nic: nic, subject: string(ch.ids[0]), why: err.Error()}
	}
	fix := cmp.Or(nc.fix, ch.fix)
	if fix == "" {
		a.notCheckedAt(nc.sev, nc.nic, nc.subject, nc.why)
		return
	}
	a.notCheckedFix(nc.sev, nc.nic, nc.subject, nc.why, fix)
}
