package audit

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/irqbalance"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestRegistry: every check id but not-checked belongs to exactly one
// registered check, every registered check runs somewhere, order names
// each registered id once and nothing else, and the run order is order's.
func TestRegistry(t *testing.T) {
	owner := map[Check]int{}
	for i, ch := range registry {
		if len(ch.ids) == 0 {
			t.Errorf("registered check %d has no ids", i)
			continue
		}
		if ch.nic == nil && ch.proc == nil && ch.host == nil {
			t.Errorf("check %s has no run function", ch.ids[0])
		}
		for _, id := range ch.ids {
			if !slices.Contains(order, id) {
				t.Errorf("check %s is registered but not in order (order.go)", id)
			}
			if j, ok := owner[id]; ok {
				t.Errorf("check id %s registered twice (checks %d and %d)", id, j, i)
			}
			owner[id] = i
		}
	}
	seen := map[Check]bool{}
	for _, id := range order {
		if seen[id] {
			t.Errorf("order names %s twice", id)
		}
		seen[id] = true
		if _, ok := owner[id]; !ok && id != CheckNotChecked {
			t.Errorf("order names %s but no check registers it", id)
		}
	}
	var got []Check
	for _, ch := range registered() {
		got = append(got, ch.ids[0])
	}
	want := []Check{CheckNICNodeUnknown, CheckIRQRemote, CheckIRQSharedCPU, CheckIRQAppCPU, CheckIrqbalance, CheckProcAbsent, CheckProcRemote, CheckCgroupIRQ, CheckPodIRQBalancing,
		CheckCgroupNICRemote, CheckCgroupMemRemote, CheckCgroupSharedCore, CheckSteeringMalformed,
		CheckRPSRemote, CheckRSSQueueMissing, CheckNtupleRemote, CheckNAPIThreadRemote, CheckIRQManaged, CheckUDPHashNoPorts,
		CheckQueuesVsCPUs, CheckChannelsVsCores, CheckCPUGovernor, CheckNAPISettings, CheckIOMMUMode, CheckProcNICUnknown,
		CheckZCBlocked}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run order (-want +got):\n%s", diff)
	}
	// A check's ids stand together in order, as its file lists them.
	for _, ch := range registry {
		for i, id := range ch.ids[1:] {
			if id.Place() != ch.ids[i].Place()+1 {
				t.Errorf("check %s: id %s does not follow %s in order", ch.ids[0], id, ch.ids[i])
			}
		}
	}
}

// TestChecksOrder: the order in which findings of equal severity were
// always shown holds (a new check's ids may fall anywhere between
// them), not-checked stays last, and Checks is a copy a caller cannot
// reorder the audit by.
func TestChecksOrder(t *testing.T) {
	shown := []Check{
		CheckNICNodeUnknown, CheckIRQRemote, CheckIsolatedIRQ, CheckIRQSharedCPU, CheckIrqbalance,
		CheckProcAbsent, CheckProcRemote, CheckProcIRQOverlap, CheckProcMemRemote, CheckRPSRemote, CheckXPSRemote,
		CheckIRQManaged, CheckQueuesVsCPUs, CheckCPUGovernor, CheckIOMMUMode, CheckProcNICUnknown, CheckProcNICUnaudited,
		CheckNotChecked,
	}
	var got []Check
	for _, id := range Checks() {
		if slices.Contains(shown, id) {
			got = append(got, id)
		}
	}
	if diff := cmp.Diff(shown, got); diff != "" {
		t.Errorf("Checks order (-want +got):\n%s", diff)
	}
	all := Checks()
	if all[len(all)-1] != CheckNotChecked {
		t.Errorf("Checks ends with %s, want not-checked last", all[len(all)-1])
	}
	all[0] = CheckNotChecked
	if Checks()[0] != CheckNICNodeUnknown || CheckNICNodeUnknown.Place() != 0 {
		t.Error("changing the slice Checks returned changed the audit's order")
	}
	if p := Check("no-such-check").Place(); p != len(all) {
		t.Errorf("an unknown id's Place = %d, want %d", p, len(all))
	}
}

// takeAway removes one fact from an audit of the seed host in which every
// check otherwise runs (an active IOMMU, so iommu-mode needs the command
// line).
var takeAway = map[fact]func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process){
	factAffinity: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) {
		for i := range tb.IRQs {
			tb.IRQs[i].Affinity, tb.IRQs[i].Effective = unknown.Value[cpuset.Set]{}, unknown.Value[cpuset.Set]{}
		}
	},
	factQueues:     func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) { h.NICs[0].Queues = nil },
	factIrqbalance: func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) { o.Irqbalance = nil },
	factGovernor:   func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) { o.Governor = nil },
	factIOMMU:      func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) { o.IOMMU = nil },
	factCmdline:    func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) { o.Cmdline = nil },
	factNumaMaps:   func(h *topology.Host, tb *irq.Table, o *Options, p *proc.Process) { p.NodeKB = nil },
}

// TestCheckNeeds holds every check to what it declares it needs: with
// the fact, no not-checked finding names the check; without it, one
// does, with the check's fix.
func TestCheckNeeds(t *testing.T) {
	run := func(t *testing.T, take func(*topology.Host, *irq.Table, *Options, *proc.Process)) []Finding {
		h, tb := loadHost(t, "seed")
		opts := Options{Governor: performance, Irqbalance: &irqbalance.Settings{Running: unknown.Of(false)},
			IOMMU:   &topology.IOMMU{Units: unknown.Of([]string{"dmar0"}), Groups: unknown.Of(3)},
			Cmdline: topology.ParseCmdline("ro quiet"), Steer: seedSteer()}
		p := &proc.Process{PID: 7, Comm: "iperf3", Allowed: cpuset.New(22),
			Threads: []proc.Thread{{TID: 7, Allowed: cpuset.New(22), LastCPU: unknown.Of(22)}}, NodeKB: map[int]uint64{1: 10}}
		opts.Uses = usesOn("eth0", p)
		take(h, tb, &opts, p)
		return Run(h, tb, []*proc.Process{p}, opts)
	}
	// namesCheck returns the not-checked findings about ch; the steering
	// checks share theirs (steerSubject).
	namesCheck := func(fs []Finding, ch *check) []string {
		var out []string
		for _, f := range onlyCheck(fs, CheckNotChecked) {
			if f.Subject == steerSubject && slices.Contains(ch.needs, factSteer) {
				out = append(out, f.Subject+": "+f.Message)
				continue
			}
			for _, id := range ch.ids {
				if strings.Contains(f.Subject, string(id)) {
					out = append(out, f.Subject+": "+f.Message)
					break
				}
			}
		}
		return out
	}
	all := run(t, func(*topology.Host, *irq.Table, *Options, *proc.Process) {})
	for _, ch := range registry {
		if got := namesCheck(all, ch); len(got) > 0 {
			t.Errorf("with every fact, %s says %q", ch.ids[0], got)
		}
		for _, need := range ch.needs {
			t.Run(fmt.Sprintf("%s without %s", ch.ids[0], need), func(t *testing.T) {
				take, ok := takeAway[need]
				if !ok {
					t.Fatalf("takeAway has no way to remove %q: add one", need)
				}
				fs := run(t, take)
				if got := namesCheck(fs, ch); len(got) == 0 {
					t.Errorf("without %s, no not-checked finding names %s", need, ch.ids[0])
				}
				for _, f := range onlyCheck(fs, CheckNotChecked) {
					if ch.fix != "" && f.Subject == string(ch.ids[0]) && f.Fix != ch.fix {
						t.Errorf("not-checked %s fix = %q, want the check's %q", f.Subject, f.Fix, ch.fix)
					}
				}
			})
		}
	}
}

// TestRegisterCheck: a check added by register runs per NIC, per judged
// process and for the host, and what it returns becomes its finding or
// not-checked finding: skip's why, or another error as the why.
func TestRegisterCheck(t *testing.T) {
	saved := registry
	t.Cleanup(func() { registry = saved })
	const id = CheckQueuesVsCPUs // an id the test check borrows for its order
	var calls []string
	registry = []*check{{ids: []Check{id},
		nic: func(a *auditor, c *nicCtx) error {
			calls = append(calls, "nic "+c.nic.Name)
			a.add(Finding{Check: id, Severity: SeverityWarning, NIC: c.nic.Name, Subject: "test"})
			return skip(c.nic.Name, "test-nic", "the test NIC check cannot judge")
		},
		proc: func(a *auditor, c *nicCtx, p *proc.Process) error {
			calls = append(calls, fmt.Sprintf("proc %s %d", c.nic.Name, p.PID))
			return nil
		},
		host: func(*auditor) error {
			calls = append(calls, "host")
			return errors.New("read /sys/test: permission denied")
		},
	}}
	h, tb := loadHost(t, "seed")
	p := &proc.Process{PID: 7, Comm: "iperf3", Allowed: cpuset.New(22)}
	var got []string
	for _, f := range Run(h, tb, []*proc.Process{p}, Options{Uses: usesOn("eth0", p)}) {
		got = append(got, fmt.Sprintf("%s %s %q %q: %s", f.Severity, f.Check, f.NIC, f.Subject, f.Message))
	}
	want := []string{
		`warning queues-vs-cpus "eth0" "test": `,
		`info not-checked "eth0" "test-nic": the test NIC check cannot judge`,
		`info not-checked "" "queues-vs-cpus": read /sys/test: permission denied`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"nic eth0", "proc eth0 7", "host"}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestCatalogue: the catalogue is the registry, id for id, in Checks'
// order less not-checked, and says what each check needs.
func TestCatalogue(t *testing.T) {
	var got []Check
	for _, c := range Catalogue() {
		got = append(got, c.ID)
		if !slices.Contains(c.Family, c.ID) || !c.PerNIC && !c.PerProcess && !c.ForHost {
			t.Errorf("%s: family %v, runs nic %v proc %v host %v", c.ID, c.Family, c.PerNIC, c.PerProcess, c.ForHost)
		}
	}
	want := slices.DeleteFunc(Checks(), func(c Check) bool { return c == CheckNotChecked })
	if !slices.Equal(got, want) {
		t.Errorf("Catalogue ids = %v, want %v", got, want)
	}
	for _, c := range Catalogue() {
		if c.ID == CheckCPUGovernor && (len(c.Needs) != 1 || c.Needs[0] != string(factGovernor) || c.NotCheckedFix == "") {
			t.Errorf("cpu-governor: needs %q, fix %q", c.Needs, c.NotCheckedFix)
		}
	}
}
