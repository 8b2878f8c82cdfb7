package tune

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/benchcpu"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
)

// TestNAPIFixes: the napi-set steps that end napi-settings'
// contradictions set each instance to what changes no behaviour:
// defer-hard-irqs 0 where no gro-flush-timeout armed the timer, and
// irq-suspend-timeout 0 where defer and timeout are not both set; an
// instance whose settings are not reported, or that defers for real, is
// left alone.
func TestNAPIFixes(t *testing.T) {
	u32 := func(v uint32) *uint32 { return &v }
	u64 := func(v uint64) *uint64 { return &v }
	n := &steer.NIC{Name: "eth0", NAPIs: []steer.NAPI{
		{ID: 1, DeferHardIRQs: u32(2), GROFlushTimeout: u64(0)},                                // defers nothing
		{ID: 2, DeferHardIRQs: u32(2), GROFlushTimeout: u64(20000), IRQSuspendTimeout: u64(1)}, // defers, suspend works
		{ID: 3, DeferHardIRQs: u32(0), GROFlushTimeout: u64(0), IRQSuspendTimeout: u64(500)},   // suspend alone
		{ID: 4, DeferHardIRQs: u32(2), GROFlushTimeout: u64(0), IRQSuspendTimeout: u64(500)},   // both
		{ID: 5}, // not reported
	}}
	show := func(steps []NAPIStep) string {
		out := ""
		for _, s := range steps {
			out += (SteerStep{NIC: "eth0", NAPI: &s}).Name() + ";"
		}
		return out
	}
	if got, want := show(napiFixes(n, true)), "eth0 napi 1 defer-hard-irqs 0;eth0 napi 4 defer-hard-irqs 0;"; got != want {
		t.Errorf("defer without a timer: %s, want %s", got, want)
	}
	if got, want := show(napiFixes(n, false)), "eth0 napi 3 irq-suspend-timeout 0;eth0 napi 4 irq-suspend-timeout 0;"; got != want {
		t.Errorf("suspend alone: %s, want %s", got, want)
	}
	if got := napiFixes(nil, true); got != nil {
		t.Errorf("no steering: %v", got)
	}
}

// The synthetic hosts of the planning benchmarks: 512 CPUs on 4 nodes
// and 1,152 on 8, each with 8 NICs of 63 queues and about 1,000 IRQs.
var (
	tuneHost512  = hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488}
	tuneHost1152 = hosttest.SyntheticSpec{CPUs: 1152, Nodes: 8, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488}
)

// benchTunePlan is tune --dry-run --fail-on info --reserve N of every
// NIC, N cores of each node's kept for the application (the synthetic
// host spreads its queue IRQs well; they move off the kept cores): the
// reading, the audit and the plan, nothing written.
func benchTunePlan(b *testing.B, spec hosttest.SyntheticSpec, reserve int) {
	fsys := hosttest.Open(b, hosttest.Synthetic(b, spec))
	req := TuneRequest{Root: fsys, FailOn: audit.SeverityInfo, Reserve: reserve, DryRun: true, Writer: FileWriter{}}
	var changes int
	stop := benchcpu.Start(b)
	for b.Loop() {
		res, err := Tune(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		changes = res.Pin.Changes
	}
	stop()
	if changes == 0 {
		b.Fatal("the plan changes nothing: the benchmark measures no planning")
	}
	b.ReportMetric(float64(changes), "changes")
}

// BenchmarkTunePlan512 plans on the 512-CPU host, keeping 48 of each
// node's 64 cores.
func BenchmarkTunePlan512(b *testing.B) { benchTunePlan(b, tuneHost512, 48) }

// BenchmarkTunePlan1152 plans on the 1,152-CPU host, keeping 56 of each
// node's 72 cores.
func BenchmarkTunePlan1152(b *testing.B) { benchTunePlan(b, tuneHost1152, 56) }

// TestTuneSteeringPlan: on a live-like root (a Setter), a table that
// names missing queues goes back to the driver's default before the
// channels shrink to one per core of the NIC's CPUs, and a per-NAPI
// defer without a timer is set to 0; the steps run in one Pin, and
// restore puts the NIC back as it was. On a captured root (no Setter)
// each is a finding the tune cannot fix, saying why.
func TestTuneSteeringPlan(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	fsys := hosttest.Open(t, root)
	fake := newFakeNIC(4)
	fake.configured = true
	for i := range fake.table {
		fake.table[i] = uint32(3 - i%4) // the user's, not the driver's spread
	}
	table := slices.Clone(fake.table)
	two := uint32(2)
	fake.napi.DeferHardIRQs = &two
	set := &fakeSetter{nic: fake}
	st, err := audit.ReadHost(fsys, audit.Selection{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := set.Read("eth0")
	if err != nil {
		t.Fatal(err)
	}
	st.Steer = &steer.Host{NICs: []*steer.NIC{n}}
	// CPUs 16-29 and 48-61 kept: eth0's work has the 2 cores 30-31 (with
	// their threads 62-63), fewer than its 4 channels.
	app, _ := cpuset.ParseList("16-29,48-61")
	findings := []audit.Finding{
		{Check: audit.CheckChannelsVsCores, Severity: audit.SeverityInfo, NIC: "eth0", Subject: "4 combined channels"},
		{Check: audit.CheckRSSQueueMissing, Severity: audit.SeverityWarning, NIC: "eth0", Subject: "queue 3"},
		{Check: audit.CheckNAPISettings, Severity: audit.SeverityWarning, NIC: "eth0", Subject: "NAPI 8193"},
	}
	plan := func(setter nicset.Setter) *tunePlanner {
		p := &tunePlanner{req: TuneRequest{Root: fsys, Setter: setter, Writer: FileWriter{}, Now: time.Now()}, st: st,
			pins: map[string][]audit.Check{}, res: &TuneResult{AppCPUs: app}}
		for _, f := range findings {
			if err := p.finding(f); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	captured := plan(nil)
	if len(captured.res.Cannot) != 3 || len(captured.steer) != 0 {
		t.Fatalf("captured root: cannot %+v, steer %+v; want all three said, none planned", captured.res.Cannot, captured.steer)
	}
	for _, c := range captured.res.Cannot {
		if c.NoFix != notLive {
			t.Errorf("captured root: %s: %q, want %q", c.Check, c.NoFix, notLive)
		}
	}
	p := plan(set)
	req := p.pinRequest()
	var names []string
	for _, s := range req.Steer.Steps {
		names = append(names, s.Name())
	}
	want := "eth0 rss table default,eth0 napi 8193 defer-hard-irqs 0,eth0 channels combined 2"
	if got := strings.Join(names, ","); got != want {
		t.Fatalf("steps %s, want %s", got, want)
	}
	res, err := Pin(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Err(); err != nil || fake.combined != 2 || fake.configured || *fake.napi.DeferHardIRQs != 0 {
		t.Fatalf("after the pin: %v; combined %d, configured %v, defer %d", err, fake.combined, fake.configured, *fake.napi.DeferHardIRQs)
	}
	openSetter = func(kfile.FS) (nicset.Setter, error) { return set, nil }
	defer func() { openSetter = nicset.OpenSetter }()
	if rr, err := Restore(context.Background(), fsys, res.StateFile, FileWriter{}, noThreads{}); err != nil || rr.Err() != nil {
		t.Fatalf("Restore: %v, %v", err, rr.Err())
	}
	if fake.combined != 4 || !fake.configured || !slices.Equal(fake.table, table) || *fake.napi.DeferHardIRQs != 2 {
		t.Errorf("after restore: combined %d, configured %v, table %v, defer %d; want 4, true, %v, 2", fake.combined, fake.configured, fake.table, *fake.napi.DeferHardIRQs, table)
	}
}

// TestOwnDefers: the NAPI instances whose own defer-hard-irqs is not the
// NIC's sysfs napi_defer_hard_irqs are those a write of the file would
// overwrite (every instance's, on a kernel with per-NAPI settings); the
// tune leaves the file for them and says why. An instance whose value is
// not reported, or a NIC whose sysfs value is unknown, names none.
func TestOwnDefers(t *testing.T) {
	u32 := func(v uint32) *uint32 { return &v }
	n := &steer.NIC{Name: "eth2", Sysfs: steer.Sysfs{DeferHardIRQs: u32(2)}, NAPIs: []steer.NAPI{
		{ID: 8204, DeferHardIRQs: u32(0)}, // its own: 0
		{ID: 8201, DeferHardIRQs: u32(2)}, // the file's
		{ID: 8203, DeferHardIRQs: u32(3)}, // its own: 3
		{ID: 8202},                        // not reported (before 6.13)
	}}
	if got := ownDefers(n); !slices.Equal(got, []uint32{8203, 8204}) {
		t.Errorf("ownDefers = %v, want [8203 8204]", got)
	}
	want := "a write of eth2's napi_defer_hard_irqs sets every NAPI instance's defer-hard-irqs on this kernel, and NAPIs 8203, 8204 have values of their own (napi-set): the write would overwrite them, and a restore could not bring them back"
	if got := ownDefersWhy("eth2", ownDefers(n)); got != want {
		t.Errorf("why:\n got %s\nwant %s", got, want)
	}
	if got := ownDefersWhy("eth2", []uint32{8203}); got != "a write of eth2's napi_defer_hard_irqs sets every NAPI instance's defer-hard-irqs on this kernel, and NAPI 8203 has a value of its own (napi-set): the write would overwrite it, and a restore could not bring it back" {
		t.Errorf("why for one: %s", got)
	}
	n.Sysfs.DeferHardIRQs = nil
	if got := ownDefers(n); got != nil {
		t.Errorf("sysfs unknown: %v", got)
	}
	if got := ownDefers(nil); got != nil {
		t.Errorf("no steering: %v", got)
	}
}
