package tune

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// This file is tune: one reading of the host, its audit, a plan that
// answers every finding at or above a severity that has a machine fix,
// applied as one transaction of Pin's (one state file, one restore), and
// the audit again. What it cannot fix it says, with the change a person
// must make.

// ErrTuned is wrapped by the error a tune gives when an earlier tune or
// pin is still in place: tunes do not stack, so that a restore always
// puts back the host as it was before the first.
var ErrTuned = errors.New("an earlier tune or pin is in place")

// TuneRequest says what Tune does.
type TuneRequest struct {
	Root kfile.FS
	// Selection names the NICs (none: every NIC with IRQs) and the
	// application's processes, as audit takes them.
	Selection audit.Selection
	// FailOn: findings at or above it are planned (the audit's --fail-on).
	FailOn audit.Severity
	// AppCPUs, when not empty, are the CPUs kept for the application: no
	// queue IRQ, NAPI thread or RPS goes there.
	AppCPUs cpuset.Set
	// Reserve, when above 0, keeps that many cores of each NIC's node for
	// the application instead (the highest-numbered ones).
	Reserve   int
	DryRun    bool
	StatePath string
	Writer    Writer
	Threads   ThreadAffinity
	// Setter changes NIC steering (channels, the RSS table); nil on a
	// captured root, where those fixes are said, not made.
	Setter nicset.Setter
	Now    time.Time
	// Planned, when set, is called with the plan before anything is
	// written; an error it returns stops the tune before any write.
	Planned func(*TuneResult) error
}

// TuneFix is one finding and what the tune changes for it.
type TuneFix struct {
	Check    audit.Check    `json:"check"`
	Severity audit.Severity `json:"severity"`
	NIC      string         `json:"nic"`
	Subject  string         `json:"subject"`
	// By says what answers it: "irq pin eth0", "eth0 rx-0 rps_cpus".
	By string `json:"by"`
}

// TuneCannot is one finding a tune leaves, with why and the change a
// person must make.
type TuneCannot struct {
	Check    audit.Check    `json:"check"`
	Severity audit.Severity `json:"severity"`
	NIC      string         `json:"nic"`
	Subject  string         `json:"subject"`
	NoFix    string         `json:"no_fix"`
	Change   string         `json:"change"`
}

// TuneResult is what Tune planned and did.
type TuneResult struct {
	// AppCPUs are the CPUs kept for the application, and where that set
	// came from ("--app-cpus", "--reserve 2", "the processes' CPUs");
	// empty when none is kept.
	AppCPUs   cpuset.Set
	AppSource string
	// Before is the audit before the tune; After the audit after it (nil
	// in a dry run, or when nothing was changed).
	Before, After []audit.Finding
	Fixes         []TuneFix
	Cannot        []TuneCannot
	// Pin is the transaction: the IRQ, thread, steering and setting steps.
	Pin *PinResult
	// Exec and Mask are how to run the application on the CPUs the tune
	// left it: an irqnuma exec line and an irqnuma mask line.
	Exec, Mask string
	Notes      []string
}

// Err says how a tune that wrote went wrong (Pin's Err), nil otherwise.
func (r *TuneResult) Err() error {
	if r.Pin == nil {
		return nil
	}
	return r.Pin.Err()
}

// Tune reads the host once, audits it, plans a fix for every finding at
// or above req.FailOn that has one, shows the plan (req.Planned), applies
// it as one transaction (unless req.DryRun), and audits again.
func Tune(ctx context.Context, req TuneRequest) (*TuneResult, error) {
	if req.FailOn.Rank() == 0 {
		return nil, usage.New("tune: no severity to plan for")
	}
	if err := notTuned(req.Root); err != nil {
		return nil, err
	}
	st, err := audit.ReadHost(req.Root, req.Selection)
	if err != nil {
		return nil, err
	}
	p := &tunePlanner{req: req, st: st, pins: map[string][]audit.Check{}, res: &TuneResult{}}
	if err := p.appCPUs(); err != nil {
		return nil, err
	}
	sel := req.Selection
	sel.AppCPUs = p.res.AppCPUs
	if err := st.Audit(req.Root, sel); err != nil {
		return nil, err
	}
	p.res.Before = st.Findings
	for _, f := range audit.AtOrAbove(st.Findings, req.FailOn) {
		if err := p.finding(f); err != nil {
			return nil, err
		}
	}
	pr := p.pinRequest()
	pr.Planned = func(r *PinResult) error {
		p.res.Pin = r
		if req.Planned != nil {
			return req.Planned(p.res)
		}
		return nil
	}
	if p.res.Pin, err = Pin(ctx, pr); err != nil {
		return nil, err
	}
	p.irqbalanceAtRestart()
	if !req.DryRun && p.res.Pin.Changes > 0 && p.res.Pin.StateFile != "" {
		after, err := audit.Read(req.Root, sel)
		if err != nil {
			return nil, fmt.Errorf("audit after the tune: %w", err)
		}
		p.res.After = after.Findings
	}
	p.execLine()
	return p.res, nil
}

// notTuned refuses a tune while a state file of an earlier tune or pin
// is in place in root's state folder (a --state FILE elsewhere is the
// user's to restore).
func notTuned(fsys kfile.FS) error {
	p, err := newestState(fsys)
	if errors.Is(err, errNoState) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: %s; undo it first with: irqnuma restore %s", ErrTuned, p, p)
}

// tunePlanner turns findings into the changes of one PinRequest.
type tunePlanner struct {
	req TuneRequest
	st  *audit.State
	res *TuneResult
	// pins are the NICs whose IRQs (and NAPI threads, XPS) are placed
	// again, with the checks that asked for it.
	pins     map[string][]audit.Check
	xps      bool
	ban      []int // IRQs irqbalance is to leave alone
	settings []SettingChange
	steer    []SteerStep
}

// pinChecks are the findings a placement of the NIC's IRQs answers: the
// IRQs and their NAPI threads spread over the NIC's local CPUs, off the
// isolated ones and those kept for the application.
var pinChecks = []audit.Check{
	audit.CheckIRQRemote, audit.CheckIsolatedIRQ, audit.CheckIRQSharedCPU, audit.CheckIRQAppCPU,
	audit.CheckNAPIThreadRemote, audit.CheckNAPIThreadUnpinned, audit.CheckNAPIThreadShared,
	audit.CheckProcIRQOverlap, audit.CheckCgroupIRQ, audit.CheckXPSRemote,
	// A rule that sends a flow to a queue whose IRQ is remote: the
	// queue's IRQ comes local.
	audit.CheckNtupleRemote,
}

// finding plans the fix of one finding, or says why there is none.
func (p *tunePlanner) finding(f audit.Finding) error {
	switch {
	case slices.Contains(pinChecks, f.Check):
		return p.pin(f)
	case f.Check == audit.CheckRPSRemote:
		return p.rps(f)
	case f.Check == audit.CheckCPUGovernor:
		return p.governor(f)
	case f.Check == audit.CheckNAPISettings:
		return p.napiSettings(f)
	case f.Check == audit.CheckRSSQueueMissing, f.Check == audit.CheckRSSQueueUnused:
		return p.rssDefault(f)
	case f.Check == audit.CheckQueuesVsCPUs, f.Check == audit.CheckChannelsVsCores:
		return p.channels(f)
	case f.Check == audit.CheckIrqbalance:
		return p.irqbalance(f)
	}
	p.cannot(f, cannotWhy(f))
	return nil
}

// cannotWhy says why a tune does not fix a finding.
func cannotWhy(f audit.Finding) string {
	switch f.Check {
	case audit.CheckIRQManaged:
		return "the kernel places managed IRQs itself and refuses writes of their affinity"
	case audit.CheckNICNodeUnknown:
		return "where the NIC sits is the firmware's to say"
	case audit.CheckIOMMUMode:
		return "the IOMMU mode is set on the kernel command line at boot; tune does not change boot arguments"
	case audit.CheckProcRemote, audit.CheckProcMemRemote, audit.CheckCgroupNICRemote, audit.CheckCgroupMemRemote, audit.CheckCgroupSharedCore:
		return "tune places the NIC's work, not running processes: start the application on the CPUs it leaves (the exec line below)"
	case audit.CheckNotChecked:
		return "not checked: nothing is known to fix"
	}
	return "no machine fix: the change is a person's to make"
}

// cannot records a finding the tune leaves.
func (p *tunePlanner) cannot(f audit.Finding, why string) {
	p.res.Cannot = append(p.res.Cannot, TuneCannot{Check: f.Check, Severity: f.Severity, NIC: f.NIC, Subject: f.Subject, NoFix: why, Change: f.Fix})
}

// fixed records a finding the tune answers.
func (p *tunePlanner) fixed(f audit.Finding, by string) {
	p.res.Fixes = append(p.res.Fixes, TuneFix{Check: f.Check, Severity: f.Severity, NIC: f.NIC, Subject: f.Subject, By: by})
}

// nic returns the finding's NIC, or says the tune cannot name it (a
// capture that names the NIC by its PCI address has no interface to
// write under).
func (p *tunePlanner) nic(f audit.Finding) (*topology.NIC, bool) {
	n, ok := p.st.Host.NICByName(f.NIC)
	if !ok || f.NIC == "" {
		p.cannot(f, "the finding names no NIC of this host")
		return nil, false
	}
	return n, true
}

// notLive is why a steering fix is not made on a captured root.
const notLive = "this root is not the running kernel: its NIC steering cannot be changed"

// liveNIC is nic for a fix that changes the NIC's steering, which only
// the live root's Setter can.
func (p *tunePlanner) liveNIC(f audit.Finding) (*topology.NIC, bool) {
	n, ok := p.nic(f)
	if ok && p.req.Setter == nil {
		p.cannot(f, notLive)
		return nil, false
	}
	return n, ok
}

func (p *tunePlanner) pin(f audit.Finding) error {
	if _, ok := p.nic(f); !ok {
		return nil
	}
	if len(p.st.IRQs.ForNIC(f.NIC)) == 0 {
		p.cannot(f, "the NIC has no IRQ this host lists")
		return nil
	}
	p.pins[f.NIC] = append(p.pins[f.NIC], f.Check)
	if f.Check == audit.CheckXPSRemote {
		p.xps = true
	}
	p.fixed(f, "irq pin "+f.NIC)
	return nil
}

// target is where the NIC's work goes: its local CPUs less the isolated
// ones and those kept for the application.
func (p *tunePlanner) target(n *topology.NIC) (cpuset.Set, error) {
	tg, err := targetFor(p.st.Host, n, PlanOptions{Exclude: p.res.AppCPUs})
	return tg.CPUs, err
}

func (p *tunePlanner) rps(f audit.Finding) error {
	n, ok := p.nic(f)
	if !ok {
		return nil
	}
	to, err := p.target(n)
	if err != nil {
		p.cannot(f, err.Error())
		return nil
	}
	var names []string
	for _, q := range n.Queues {
		cpus, known := q.CPUs.Get()
		if string(q.Kind) != "rx" || !known || cpus.IsEmpty() || cpus.Difference(to).IsEmpty() {
			continue
		}
		p.setting(RPSPath(n.Name, q.Index), to.Mask(p.st.Host.MaxCPUs()), f.Check)
		names = append(names, "rx-"+strconv.Itoa(q.Index))
	}
	if len(names) == 0 {
		p.cannot(f, "no rx queue's rps_cpus is readable")
		return nil
	}
	p.fixed(f, fmt.Sprintf("%s rps_cpus of %s to %s", n.Name, strings.Join(names, ","), to))
	return nil
}

// setting adds one setting change, once per file.
func (p *tunePlanner) setting(path, to string, why audit.Check) {
	for i := range p.settings {
		if p.settings[i].Path == path {
			if !slices.Contains(p.settings[i].For, string(why)) {
				p.settings[i].For = append(p.settings[i].For, string(why))
			}
			return
		}
	}
	p.settings = append(p.settings, SettingChange{Path: path, To: to, For: []string{string(why)}})
}

// governor sets the performance governor on the CPUs the finding names,
// where cpufreq offers it.
func (p *tunePlanner) governor(f audit.Finding) error {
	var set []int
	for cpu := range f.CPUs.All() {
		if !p.offers(cpu, "performance") {
			p.cannot(f, fmt.Sprintf("CPU %d's cpufreq driver does not offer the performance governor (scaling_available_governors)", cpu))
			return nil
		}
		set = append(set, cpu)
	}
	if len(set) == 0 {
		p.cannot(f, "the finding names no CPU")
		return nil
	}
	for _, cpu := range set {
		p.setting(GovernorPath(cpu), "performance", f.Check)
	}
	p.fixed(f, fmt.Sprintf("scaling_governor of CPUs %s to performance", cpuset.New(set...)))
	return nil
}

// offers reports whether a CPU's scaling_available_governors names gov; a
// root without the file (a capture) is taken at its governor file's word.
func (p *tunePlanner) offers(cpu int, gov string) bool {
	fsys := p.req.Root
	b, err := fsys.ReadLimit(fsys.Path("sys/devices/system/cpu/cpu"+strconv.Itoa(cpu)+"/cpufreq/scaling_available_governors"), 4096)
	if err != nil {
		return kfile.IsNotExist(err)
	}
	return slices.Contains(strings.Fields(string(b)), gov)
}

// napiSettings answers NAPI settings that contradict each other: a
// napi_defer_hard_irqs without a gro_flush_timeout defers nothing, so
// setting it to 0 changes no behaviour and ends the contradiction (the
// other way, a timeout, would change how the NIC interrupts); the same
// per NAPI instance over napi-set (napiFixes), on the live root. Busy
// polling beside threaded NAPI is the person's.
func (p *tunePlanner) napiSettings(f audit.Finding) error {
	n, ok := p.nic(f)
	if !ok {
		return nil
	}
	switch {
	case f.Subject == "napi_defer_hard_irqs":
		if own := ownDefers(p.st.Steer.NIC(n.Name)); len(own) > 0 {
			p.cannot(f, ownDefersWhy(n.Name, own))
			return nil
		}
		p.setting(NICSettingPath(n.Name, "napi_defer_hard_irqs"), "0", f.Check)
		p.fixed(f, n.Name+" napi_defer_hard_irqs to 0 (it deferred nothing without a gro_flush_timeout)")
		return nil
	case !strings.HasPrefix(f.Subject, "NAPI"):
		p.cannot(f, "busy polling beside threaded NAPI is a choice between the two: the person's")
		return nil
	case p.req.Setter == nil:
		p.cannot(f, notLive)
		return nil
	}
	steps := napiFixes(p.st.Steer.NIC(n.Name), f.Severity == audit.SeverityWarning)
	if len(steps) == 0 {
		p.cannot(f, "the NAPI instances' settings are unknown")
		return nil
	}
	var names []string
	for _, s := range steps {
		p.steer = append(p.steer, SteerStep{NIC: n.Name, NAPI: &s})
		names = append(names, (SteerStep{NIC: n.Name, NAPI: &s}).Name())
	}
	p.fixed(f, strings.Join(names, "; "))
	return nil
}

// ownDefers are the NAPI instances of n whose own defer-hard-irqs
// (netdev napi-get) is not the NIC's sysfs napi_defer_hard_irqs. On a
// kernel with per-NAPI settings (6.13 and later) a write of the sysfs
// file sets every instance's value (netdev_set_defer_hard_irqs), so a
// tune that wrote it would overwrite theirs, and a restore of the file
// could not bring them back: it too sets them all.
func ownDefers(n *steer.NIC) []uint32 {
	if n == nil || n.Sysfs.DeferHardIRQs == nil {
		return nil
	}
	var out []uint32
	for _, napi := range n.NAPIs {
		if napi.DeferHardIRQs != nil && *napi.DeferHardIRQs != *n.Sysfs.DeferHardIRQs {
			out = append(out, napi.ID)
		}
	}
	slices.Sort(out)
	return out
}

// ownDefersWhy says why the tune leaves the sysfs napi_defer_hard_irqs
// of a NIC whose NAPI instances have values of their own.
func ownDefersWhy(nic string, own []uint32) string {
	ids := make([]string, len(own))
	for i, id := range own {
		ids[i] = strconv.FormatUint(uint64(id), 10)
	}
	return fmt.Sprintf("a write of %s's napi_defer_hard_irqs sets every NAPI instance's defer-hard-irqs on this kernel, and %s %s %s (napi-set): the write would overwrite %s, and a restore could not bring %s back",
		nic, units.Choose(len(own), "NAPI", "NAPIs"), strings.Join(ids, ", "), units.Choose(len(own), "has a value of its own", "have values of their own"),
		units.Choose(len(own), "it", "them"), units.Choose(len(own), "it", "them"))
}

// napiFixes are the napi-set steps that end the contradictions
// napi-settings finds in a NIC's NAPI instances, each to the value that
// changes no behaviour: with deferNoTimer, defer-hard-irqs 0 where no
// gro-flush-timeout made it defer anything; else irq-suspend-timeout 0
// where defer-hard-irqs and gro-flush-timeout are not both set, so it
// had no effect (Documentation/networking/napi.rst).
func napiFixes(n *steer.NIC, deferNoTimer bool) []NAPIStep {
	if n == nil {
		return nil
	}
	var out []NAPIStep
	for _, napi := range n.NAPIs {
		if napi.DeferHardIRQs == nil || napi.GROFlushTimeout == nil {
			continue
		}
		deferring := *napi.DeferHardIRQs > 0 && *napi.GROFlushTimeout > 0
		switch {
		case deferNoTimer && *napi.DeferHardIRQs > 0 && *napi.GROFlushTimeout == 0:
			zero := uint32(0)
			out = append(out, NAPIStep{ID: napi.ID, NAPISetting: nicset.NAPISetting{DeferHardIRQs: &zero}})
		case !deferNoTimer && napi.IRQSuspendTimeout != nil && *napi.IRQSuspendTimeout > 0 && !deferring:
			zero := uint64(0)
			out = append(out, NAPIStep{ID: napi.ID, NAPISetting: nicset.NAPISetting{IRQSuspendTimeout: &zero}})
		}
	}
	return out
}

// rssDefault puts back the driver's default RSS table, which spreads over
// every queue the NIC has, for a table that names queues it lacks.
func (p *tunePlanner) rssDefault(f audit.Finding) error {
	n, ok := p.liveNIC(f)
	if !ok {
		return nil
	}
	if !slices.ContainsFunc(p.steer, func(s SteerStep) bool { return s.NIC == n.Name && s.RSS != nil }) {
		p.steer = append(p.steer, SteerStep{NIC: n.Name, RSS: &nicset.RSSSetting{Default: true}})
	}
	p.fixed(f, n.Name+" RSS table to the driver's default")
	return nil
}

// channels sets the NIC's channels to one per core of the CPUs its work
// goes to: no queue then shares a core with another or runs remote. Only
// combined channels are set; a driver that counts rx and tx apart is the
// person's.
func (p *tunePlanner) channels(f audit.Finding) error {
	n, ok := p.liveNIC(f)
	if !ok {
		return nil
	}
	sn := p.st.Steer.NIC(n.Name)
	if sn == nil || sn.Channels == nil {
		p.cannot(f, "the NIC's channels (ethtool -l) are unknown")
		return nil
	}
	ch := sn.Channels
	if ch.Combined == 0 || ch.RX > 0 {
		p.cannot(f, "the NIC counts rx and tx channels apart: how many of each is the person's choice")
		return nil
	}
	to, err := p.target(n)
	if err != nil {
		p.cannot(f, err.Error())
		return nil
	}
	cores := uint32(len(p.st.Host.Cores(to)))
	if cores == 0 || cores >= ch.Combined {
		p.cannot(f, fmt.Sprintf("the NIC's %d combined channels are not more than the %d cores its work goes to", ch.Combined, cores))
		return nil
	}
	for _, s := range p.steer {
		if s.NIC == n.Name && s.Channels != nil {
			p.fixed(f, s.Name())
			return nil
		}
	}
	step := SteerStep{NIC: n.Name, Channels: &nicset.ChannelCounts{Combined: &cores}}
	p.steer = append(p.steer, step)
	p.fixed(f, step.Name())
	return nil
}

// irqbalance keeps a running irqbalance off the finding's IRQs: a ban
// over its socket where it answers, else in its environment file (Pin's
// irqbalance step says which, and what a restart of it does).
func (p *tunePlanner) irqbalance(f audit.Finding) error {
	if len(f.IRQ) == 0 {
		p.cannot(f, "the finding names no IRQ")
		return nil
	}
	for _, n := range f.IRQ {
		if !slices.Contains(p.ban, n) {
			p.ban = append(p.ban, n)
		}
	}
	p.fixed(f, "irqbalance ban of IRQs "+cpuset.New(f.IRQ...).List())
	return nil
}

// irqbalanceAtRestart: a ban Pin put in irqbalance's environment file
// (the daemon's socket did not answer, or the root is a capture) keeps a
// running daemon off the IRQs only from its next start, so its findings
// are left, with the restart as the person's change.
func (p *tunePlanner) irqbalanceAtRestart() {
	b := p.res.Pin.IrqbalanceBan
	if b == nil || b.Way != IrqbalanceWayConfig {
		return
	}
	fixes := p.res.Fixes[:0]
	for _, fx := range p.res.Fixes {
		if fx.Check != audit.CheckIrqbalance {
			fixes = append(fixes, fx)
			continue
		}
		p.res.Cannot = append(p.res.Cannot, TuneCannot{Check: fx.Check, Severity: fx.Severity, NIC: fx.NIC, Subject: fx.Subject,
			NoFix:  fmt.Sprintf("the ban goes into %s, which the running irqbalance reads only when it starts", b.Where),
			Change: "systemctl restart irqbalance  # after the tune, so it starts with the ban"})
	}
	p.res.Fixes = fixes
}

// appCPUs decides the CPUs kept for the application: --app-cpus, else
// --reserve N cores of each NIC's node, else the selected processes'
// and groups' CPUs where those leave the NIC some of its local CPUs.
func (p *tunePlanner) appCPUs() error {
	h := p.st.Host
	switch {
	case !p.req.AppCPUs.IsEmpty():
		if extra := p.req.AppCPUs.Difference(h.Possible); !extra.IsEmpty() {
			return usage.New(fmt.Sprintf("--app-cpus %s: CPUs %s do not exist on this host (possible: %s)", p.req.AppCPUs, extra, h.Possible))
		}
		p.res.AppCPUs, p.res.AppSource = p.req.AppCPUs, "--app-cpus"
	case p.req.Reserve > 0:
		set, err := p.reserve()
		if err != nil {
			return err
		}
		p.res.AppCPUs, p.res.AppSource = set, "--reserve "+strconv.Itoa(p.req.Reserve)
	default:
		p.processCPUs()
	}
	return nil
}

// reserve keeps the req.Reserve highest-numbered cores (every thread of
// each) of each NIC's local, online, non-isolated CPUs.
func (p *tunePlanner) reserve() (cpuset.Set, error) {
	h := p.st.Host
	var out cpuset.Set
	for _, name := range audit.AuditedNICs(h, p.st.IRQs, p.req.Selection.NICs) {
		n, _ := h.NICByName(name)
		loc := h.Locality(n)
		if !loc.Known() {
			continue
		}
		avail := loc.CPUs.Intersection(h.Online).Difference(h.IsolatedCPUs())
		cores := h.Cores(avail) // ascending
		if len(cores) <= p.req.Reserve {
			return cpuset.Set{}, usage.New(fmt.Sprintf("--reserve %d: %s has %d cores on its node (CPUs %s): none would be left for its IRQs", p.req.Reserve, n.Name, len(cores), avail))
		}
		for _, c := range cores[len(cores)-p.req.Reserve:] {
			out = out.Union(h.SiblingsOf(cpuset.New(c)).Intersection(avail))
		}
	}
	return out, nil
}

// processCPUs keeps the selected processes' CPUs (and their exclusive
// groups') for them, when they are fewer than every online CPU: a
// benchmark already pinned keeps its CPUs, and the NIC's work goes
// elsewhere. One that may run anywhere keeps nothing.
func (p *tunePlanner) processCPUs() {
	h := p.st.Host
	var set cpuset.Set
	for _, pr := range p.st.Procs {
		set = set.Union(pr.Allowed)
	}
	for _, g := range p.st.Groups() {
		if g.Exclusive {
			set = set.Union(g.CPUs.Or(cpuset.Set{}))
		}
	}
	set = set.Intersection(h.Online)
	if set.IsEmpty() || set.Equal(h.Online) {
		if len(p.st.Procs) > 0 {
			p.res.Notes = append(p.res.Notes, "the selected processes may run on every online CPU, so none is kept for them: pin them, or give --app-cpus or --reserve")
		}
		return
	}
	p.res.AppCPUs, p.res.AppSource = set, "the selected processes' CPUs"
}

// pinRequest is the one transaction of the plan.
func (p *tunePlanner) pinRequest() PinRequest {
	nics := make([]string, 0, len(p.pins))
	for n := range p.pins {
		nics = append(nics, n)
	}
	slices.Sort(nics)
	req := PinRequest{Root: p.req.Root, NICs: nics, DryRun: p.req.DryRun, StatePath: p.req.StatePath,
		Writer: p.req.Writer, Threads: p.req.Threads, Now: p.req.Now, Steering: p.st.Steer, Host: p.st.Host, IRQs: p.st.IRQs, IrqbalanceRead: p.st.Irqbalance,
		Options:  PlanOptions{Strategy: StrategySpread, Exclude: p.res.AppCPUs, ExcludeAs: "the application's CPUs", XPS: p.xps},
		Settings: p.settings}
	if len(p.ban) > 0 {
		slices.Sort(p.ban)
		req.Irqbalance = &IrqbalanceBan{IRQs: p.ban}
	}
	if len(p.steer) > 0 {
		// A table the user set must go back to the default before the
		// channels shrink under it: the kernel refuses channels a table
		// still names.
		slices.SortStableFunc(p.steer, func(a, b SteerStep) int {
			return steerOrder(a) - steerOrder(b)
		})
		req.Steer = &SteerChange{Setter: p.req.Setter, Steps: p.steer}
	}
	return req
}

// steerOrder ranks a steering step: the RSS table before the channels.
func steerOrder(s SteerStep) int {
	if s.Channels != nil {
		return 1
	}
	return 0
}

// execLine says how to start the application on the CPUs the tune left
// it.
func (p *tunePlanner) execLine() {
	if !p.res.AppCPUs.IsEmpty() {
		p.res.Exec = "irqnuma exec --cpus " + p.res.AppCPUs.String() + " --membind -- COMMAND"
		p.res.Mask = "irqnuma mask --cpus " + p.res.AppCPUs.String() + " --format taskset"
		return
	}
	nics := audit.AuditedNICs(p.st.Host, p.st.IRQs, p.req.Selection.NICs)
	if len(nics) == 0 {
		return
	}
	name := nics[0]
	p.res.Exec = "irqnuma exec --nic " + name + " --exclude-irq-cpus --one-per-core --membind -- COMMAND"
	p.res.Mask = "irqnuma mask --nic " + name + " --exclude-irq-cpus --one-per-core --format taskset"
}
