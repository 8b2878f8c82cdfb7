package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/irqnuma/irqnuma/cpuset"
	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// fakeNIC is a NIC's steering as the kernel keeps it: a table the user
// configured stays, one nobody did is spread again over the channels
// when they change (ethtool_rxfh_indir_default), and channels cannot
// shrink under a configured table that names a queue past them (EINVAL,
// as ethtool_check_max_channel refuses).
type fakeNIC struct {
	maxCombined, combined uint32
	table                 []uint32
	configured            bool
	key                   []byte
	split                 *nicset.DataSplit // nil: not reported
	hds                   *uint32
	rules                 []steer.Rule
	refuse                map[string]error // by operation: "channels", "rss", "rings", "insert", "delete"
	// keeps: a table nobody configured stays as it is when the channels
	// change (virtio_net on 6.1) instead of being spread again.
	keeps bool
	// onChannels is what the driver does when the channels change (as
	// virtio_net sets its queue IRQs' affinity).
	onChannels func()
	// napi is the NIC's one NAPI instance; a nil setting is one the
	// kernel does not report.
	napi  steer.NAPI
	calls []string
}

func newFakeNIC(combined uint32) *fakeNIC {
	off := nicset.DataSplitOff
	hds := uint32(256)
	f := &fakeNIC{maxCombined: 4, combined: combined, table: make([]uint32, 16), key: []byte{1, 2, 3, 4}, split: &off, hds: &hds, refuse: map[string]error{}}
	zero, gro, suspend, threaded := uint32(0), uint64(0), uint64(0), false
	f.napi = steer.NAPI{ID: 8193, IRQ: unknown.Of(284), DeferHardIRQs: &zero, GROFlushTimeout: &gro, IRQSuspendTimeout: &suspend, Threaded: &threaded}
	f.spread()
	return f
}

// readSplit is the tcp-data-split the NIC reads back: the default reads
// as the driver's n/a.
func (f *fakeNIC) readSplit() unknown.Value[steer.TCPDataSplit] {
	switch {
	case f.split == nil:
		return unknown.Not[steer.TCPDataSplit](steer.DataSplitNotReported)
	case *f.split == nicset.DataSplitDefault:
		return unknown.Not[steer.TCPDataSplit](steer.DataSplitNA)
	}
	return unknown.Of(steer.TCPDataSplit(*f.split))
}

func (f *fakeNIC) spread() {
	for i := range f.table {
		f.table[i] = uint32(i) % f.combined
	}
}

// fakeSetter is nicset.Setter over one fakeNIC, named eth0.
type fakeSetter struct{ nic *fakeNIC }

func (s *fakeSetter) Close() error { return nil }

func (s *fakeSetter) Read(name string) (*steer.NIC, error) {
	f := s.nic
	if name != "eth0" {
		return nil, fmt.Errorf("interface %s: %w", name, steer.ErrUnknownInterface)
	}
	n := &steer.NIC{Name: name,
		Channels: &steer.Channels{MaxCombined: f.maxCombined, Combined: f.combined},
		RSS:      &steer.RSS{Rings: f.combined, Table: slices.Clone(f.table), Key: slices.Clone(f.key)},
		Rings:    &steer.Rings{TCPDataSplit: f.readSplit(), HDSThresh: f.hds},
		Rules:    &steer.Rules{TableSize: 8, Count: uint32(len(f.rules)), Rules: slices.Clone(f.rules)},
		NAPIs:    []steer.NAPI{cloneNAPI(f.napi)},
	}
	return n, nil
}

func (s *fakeSetter) refused(op string) error {
	s.nic.calls = append(s.nic.calls, op)
	return s.nic.refuse[op]
}

func (s *fakeSetter) SetChannels(_ string, c nicset.ChannelCounts) error {
	if err := s.refused("channels"); err != nil {
		return err
	}
	f := s.nic
	if c.Combined == nil {
		return nil
	}
	n := *c.Combined
	if n == 0 || n > f.maxCombined {
		return &nicset.SetError{Op: "channels-set", NIC: "eth0", Errno: unix.EINVAL}
	}
	if f.configured && slices.Max(f.table) >= n {
		return &nicset.SetError{Op: "channels-set", NIC: "eth0", Errno: unix.EINVAL, Message: "requested channel counts are too low for existing indirection table"}
	}
	f.combined = n
	if f.onChannels != nil {
		f.onChannels()
	}
	if !f.configured && !f.keeps {
		f.spread()
	}
	return nil
}

func (s *fakeSetter) SetRSS(_ string, r nicset.RSSSetting) error {
	if err := s.refused("rss"); err != nil {
		return err
	}
	f := s.nic
	switch {
	case r.Default:
		f.configured = false
		f.spread()
	case r.Table != nil:
		if len(r.Table) != len(f.table) || slices.Max(r.Table) >= f.combined {
			return &nicset.SetError{Op: "rss-set", NIC: "eth0", Errno: unix.EINVAL}
		}
		f.configured, f.table = true, slices.Clone(r.Table)
	}
	if r.Key != nil {
		f.key = slices.Clone(r.Key)
	}
	return nil
}

func (s *fakeSetter) SetRings(_ string, r nicset.RingSetting) error {
	if err := s.refused("rings"); err != nil {
		return err
	}
	if r.TCPDataSplit != nil {
		v := *r.TCPDataSplit
		s.nic.split = &v
	}
	if r.HDSThresh != nil {
		v := *r.HDSThresh
		s.nic.hds = &v
	}
	return nil
}

func (s *fakeSetter) InsertRule(_ string, r nicset.RuleSpec) (uint32, error) {
	if err := s.refused("insert"); err != nil {
		return 0, err
	}
	loc := uint32(0)
	for slices.ContainsFunc(s.nic.rules, func(x steer.Rule) bool { return x.Location == loc }) {
		loc++
	}
	port := r.DstPort
	s.nic.rules = append(s.nic.rules, steer.Rule{Location: loc, FlowType: r.FlowType, DstPort: &port, DstPortMask: 0xffff, Action: steer.RuleActionQueue, Queue: uint64(r.Queue)})
	return loc, nil
}

func (s *fakeSetter) DeleteRule(_ string, loc uint32) error {
	if err := s.refused("delete"); err != nil {
		return err
	}
	i := slices.IndexFunc(s.nic.rules, func(x steer.Rule) bool { return x.Location == loc })
	if i < 0 {
		return &nicset.SetError{Op: "ETHTOOL_SRXCLSRLDEL", NIC: "eth0", Errno: unix.ENOENT}
	}
	s.nic.rules = slices.Delete(s.nic.rules, i, i+1)
	return nil
}

// zcSteps are zc prepare's steps for queue 1 of a NIC with 4 channels.
func zcSteps() []SteerStep {
	four, zero := uint32(4), uint32(0)
	on := nicset.DataSplitOn
	return []SteerStep{
		{NIC: "eth0", Channels: &nicset.ChannelCounts{Combined: &four}},
		{NIC: "eth0", RSS: &nicset.RSSSetting{Table: nicset.EqualTable(16, []uint32{0, 2, 3})}},
		{NIC: "eth0", Rule: &nicset.RuleSpec{FlowType: "tcp6", DstPort: 9000, Queue: 1}},
		{NIC: "eth0", Rings: &nicset.RingSetting{TCPDataSplit: &on, HDSThresh: &zero}},
	}
}

// fakeState is what a restore must bring back: every field the kernel
// shows, and whether the table is the user's.
func fakeState(f *fakeNIC) string {
	return fmt.Sprintf("combined %d table %v configured %v key %v split %s hds %d rules %d", f.combined, f.table, f.configured, f.key, *f.split, *f.hds, len(f.rules))
}

func steerPin(t *testing.T, root string, f *fakeNIC, fault func(int) error) (*PinResult, error) {
	t.Helper()
	return steerPinSteps(t, root, f, fault, zcSteps())
}

// steerPinSteps is steerPin with other steps.
func steerPinSteps(t *testing.T, root string, f *fakeNIC, fault func(int) error, steps []SteerStep) (*PinResult, error) {
	t.Helper()
	// Like virtio_net, the driver sets its queue IRQs (queue 0's, and
	// queue 1's, which the pin places) when the channels change: the
	// transaction must put them back too.
	f.onChannels = func() {
		for _, n := range []string{"284", "285"} {
			if err := os.WriteFile(filepath.Join(root, "proc/irq", n, "smp_affinity_list"), []byte("0\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	stepFault = fault
	defer func() { stepFault = nil }()
	return Pin(context.Background(), PinRequest{
		Root: hosttest.Open(t, root), NICs: []string{"eth0"}, Options: PlanOptions{IRQs: []int{285}, CPUs: cpuset.New(16)},
		Writer: FileWriter{}, Now: time.Now(), Threads: noThreads{},
		Steer: &SteerChange{Setter: &fakeSetter{nic: f}, Steps: steps},
	})
}

// noThreads is a ThreadAffinity of a host tree's threads: none move.
type noThreads struct{}

func (noThreads) Get(int) (cpuset.Set, error) {
	return cpuset.Set{}, errors.New("no threads in a host tree")
}
func (noThreads) Set(int, cpuset.Set) error { return errors.New("no threads in a host tree") }

// TestSteerPinRestore: zc prepare's steps are made before the queue's
// IRQ, saved to a version 3 state file first, and irq restore puts the
// NIC back exactly, the table to the driver's default (not configured)
// before the channels shrink, and the rule it added deleted.
func TestSteerPinRestore(t *testing.T) {
	for _, keeps := range []bool{false, true} {
		t.Run(fmt.Sprintf("keeps-table-%v", keeps), func(t *testing.T) { steerPinRestore(t, keeps) })
	}
}

func steerPinRestore(t *testing.T, keeps bool) {
	root := hosttest.Copy(t, "seed")
	before := hosttest.Files(t, root)
	f := newFakeNIC(1)
	f.keeps = keeps
	want := fakeState(f)
	res, err := steerPin(t, root, f, nil)
	if err != nil || res.Err() != nil {
		t.Fatalf("Pin: %v, %v", err, res.Err())
	}
	if got := fakeState(f); got != "combined 4 table [0 2 3 0 2 3 0 2 3 0 2 3 0 2 3 0] configured true key [1 2 3 4] split on hds 0 rules 1" {
		t.Errorf("after prepare: %s", got)
	}
	if len(res.Rows) != 1 || !unknown.Is(res.Rows[0].Queue, 1) || res.Rows[0].Result != ResultChanged {
		t.Errorf("IRQ rows %+v, want queue 1's IRQ changed", res.Rows)
	}
	if res.Changed != 5 {
		t.Errorf("Changed %d, want 5 (4 steering steps and the IRQ)", res.Changed)
	}
	var st pinState
	b, err := os.ReadFile(res.StateFile)
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil || st.Version != stateVersionSteer || len(st.Steer) != 4 || !st.Steer[1].RSS.Default || st.Steer[2].Rule == nil {
		t.Fatalf("state file %s: %v, %+v", res.StateFile, err, st)
	}
	openSetter = func(kfile.FS) (nicset.Setter, error) { return &fakeSetter{nic: f}, nil }
	defer func() { openSetter = nicset.OpenSetter }()
	rr, err := Restore(context.Background(), hosttest.Open(t, root), res.StateFile, FileWriter{}, noThreads{})
	if err != nil || rr.Err() != nil {
		t.Fatalf("Restore: %v, %v", err, rr.Err())
	}
	if got := fakeState(f); got != want {
		t.Errorf("after restore: %s\nwant %s", got, want)
	}
	if got := f.calls[4:]; !slices.Equal(got, []string{"rings", "delete", "rss", "channels", "rss"}) {
		t.Errorf("restore's calls %v: want the rings, the rule, the table before the channels, and the default table again after them", got)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("tree not back as it was (-before +after):\n%s", diff)
	}
}

// TestSteerRestoreTriesEveryStep: a restore is a final txn; a step the
// driver refuses is reported and the steps after it are still tried,
// and the IRQ still goes back.
func TestSteerRestoreTriesEveryStep(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	before := hosttest.Files(t, root)
	f := newFakeNIC(1)
	res, err := steerPin(t, root, f, nil)
	if err != nil || res.Err() != nil {
		t.Fatalf("Pin: %v, %v", err, res.Err())
	}
	f.refuse["delete"] = &nicset.SetError{Op: "rxclass-delete", NIC: "eth0", Errno: unix.EPERM}
	openSetter = func(kfile.FS) (nicset.Setter, error) { return &fakeSetter{nic: f}, nil }
	defer func() { openSetter = nicset.OpenSetter }()
	rr, err := Restore(context.Background(), hosttest.Open(t, root), res.StateFile, FileWriter{}, noThreads{})
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if got := f.calls[4:]; !slices.Equal(got, []string{"rings", "delete", "rss", "channels", "rss"}) {
		t.Errorf("restore's calls %v: want every step tried past the refused delete", got)
	}
	var results []string
	for _, r := range rr.Steer {
		results = append(results, string(r.Result))
	}
	if want := []string{"changed", "failed", "changed", "changed", "changed"}; !slices.Equal(results, want) {
		t.Errorf("steering rows %v, want %v", results, want)
	}
	if len(rr.Failed) != 1 || !strings.Contains(rr.Failed[0], "ntuple") || rr.Err() == nil || rr.Retired != "" {
		t.Errorf("Failed %q, Err %v, Retired %q: want the rule's one failure, and the state file kept", rr.Failed, rr.Err(), rr.Retired)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("the IRQ is not back (-before +after):\n%s", diff)
	}
}

// TestSteerPinRollback: a failure between two changes, or a step the
// driver refuses, undoes everything already changed, newest first, and
// writes no IRQ.
func TestSteerPinRollback(t *testing.T) {
	tests := []struct {
		name    string
		fault   func(int) error
		refuse  string
		wantErr string
	}{
		{"fault after the table", func(i int) error {
			if i == 2 {
				return errors.New("injected fault")
			}
			return nil
		}, "", ""},
		{"fault before the IRQ", func(i int) error {
			if i == 4 {
				return errors.New("injected fault")
			}
			return nil
		}, "", ""},
		{"rings refused", nil, "rings", "EOPNOTSUPP"},
	}
	for _, tt := range tests {
		root := hosttest.Copy(t, "seed")
		before := hosttest.Files(t, root)
		f := newFakeNIC(1)
		want := fakeState(f)
		if tt.refuse != "" {
			f.refuse[tt.refuse] = &nicset.SetError{Op: "rings-set", NIC: "eth0", Errno: unix.EOPNOTSUPP}
		}
		res, err := steerPin(t, root, f, tt.fault)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if res.Stop != StopFailed || res.Err() == nil || res.Retired == "" {
			t.Errorf("%s: stop %v, err %v, retired %q; want a failed, rolled back pin", tt.name, res.Stop, res.Err(), res.Retired)
		}
		if got := fakeState(f); got != want {
			t.Errorf("%s: NIC after rollback: %s\nwant %s", tt.name, got, want)
		}
		if tt.wantErr != "" && !strings.Contains(strings.Join(res.Failed, "; "), tt.wantErr) {
			t.Errorf("%s: Failed %v, want it to say %s", tt.name, res.Failed, tt.wantErr)
		}
		after := hosttest.Files(t, root)
		for p := range after {
			if strings.HasPrefix(p, "var/lib/irqnuma") {
				delete(after, p)
			}
		}
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("%s: IRQ files changed (-before +after):\n%s", tt.name, diff)
		}
	}
}

// TestSteerUnsaveable: a value that is unknown stops the transaction
// before any change and before any state file.
func TestSteerUnsaveable(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	f := newFakeNIC(1)
	f.split = nil
	var calls []string
	_, err := steerPin(t, root, f, nil)
	calls = f.calls
	if !errors.Is(err, ErrUnsaveable) || len(calls) != 0 {
		t.Errorf("Pin with tcp-data-split unknown: %v, calls %v; want ErrUnsaveable and no change", err, calls)
	}
	if _, err := os.Stat(filepath.Join(root, "var/lib/irqnuma")); err == nil {
		if ents, _ := os.ReadDir(filepath.Join(root, "var/lib/irqnuma")); slices.ContainsFunc(ents, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), "state-") }) {
			t.Errorf("a state file was written")
		}
	}
}

// TestStateSteerVersion: steering needs version 3; a version 2 file
// holding it, or a step holding two parts, is refused.
func TestStateSteerVersion(t *testing.T) {
	fsys := hosttest.FS(t, "seed")
	real, err := realRoot(fsys)
	if err != nil {
		t.Fatal(err)
	}
	four := uint32(4)
	tests := []struct {
		give pinState
		want string
	}{
		{pinState{Version: 2, Root: real, Steer: []savedStep{{NIC: "eth0", Channels: &savedChannels{Combined: &four}}}}, "only version 3"},
		{pinState{Version: 3, Root: real, Steer: []savedStep{{NIC: "eth0", Channels: &savedChannels{Combined: &four}, Rings: &savedRings{}}}}, "holds 2 parts"},
		{pinState{Version: 3, Root: real, Steer: []savedStep{{NIC: "eth0/..", Channels: &savedChannels{Combined: &four}}}}, "not an interface name"},
		{pinState{Version: 3, Root: real, Steer: []savedStep{{NIC: "eth0", RSS: &savedRSS{}}}}, "either the default or a table"},
	}
	for _, tt := range tests {
		err := tt.give.Validate(fsys)
		if !errors.Is(err, ErrBadState) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v, want ErrBadState saying %q", tt.give.Steer, err, tt.want)
		}
	}
	ok := pinState{Version: 3, Root: real, Steer: []savedStep{{NIC: "eth0", Channels: &savedChannels{Combined: &four}}}}
	if err := ok.Validate(fsys); err != nil {
		t.Errorf("Validate(a version 3 state) = %v", err)
	}
}
