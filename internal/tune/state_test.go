package tune

import (
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

var stateTime = time.Date(2026, 11, 30, 1, 2, 3, 4000, time.UTC)

func savedSeedState(t *testing.T) (root, path string, s *pinState) {
	t.Helper()
	root = hosttest.Copy(t, "seed")
	s, err := newState(hosttest.Open(t, root), stateTime)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Snapshot(hosttest.Open(t, root), []string{
		irq.AffinityPath(284, irq.FileAffinityList),
		irq.AffinityPath(283, irq.FileAffinity),
		irq.XPSPath("eth0", 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	path = defaultStatePath(hosttest.Open(t, root), stateTime)
	if err := s.Save(hosttest.Open(t, root), path); err != nil {
		t.Fatal(err)
	}
	return root, path, s
}

func TestStateSaveLoad(t *testing.T) {
	root, path, s := savedSeedState(t)
	if want := filepath.Join(root, "var/lib/irqnuma/state-20261130T010203.000004000Z.json"); path != want {
		t.Errorf("state path %s, want %s", path, want)
	}
	want := []savedValue{
		{Path: "/proc/irq/284/smp_affinity_list", Value: "50"},
		{Path: "/proc/irq/283/smp_affinity", Value: "ffff0000,ffff0000"},
		{Path: "/sys/class/net/eth0/queues/tx-0/xps_cpus", Value: "00040000,00000000"},
	}
	if diff := cmp.Diff(want, s.Entries); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600", st.Mode().Perm())
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("state folder holds %d entries, want only the state file (no temporary left)", len(ents))
	}
	got, err := loadState(hosttest.Open(t, root), path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("loaded state (-saved +loaded):\n%s", diff)
	}
	if err := s.Save(hosttest.Open(t, root), path); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("saving over an existing state = %v, want refused", err)
	}
}

// savedSeedStateJSON is savedSeedState's root and its state file as JSON
// to edit.
func savedSeedStateJSON(t *testing.T) (string, map[string]any) {
	t.Helper()
	root, path, _ := savedSeedState(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return root, m
}

// TestStateBeforeSchema: a state file an irqnuma wrote before the
// documents carried their schema restores as it did.
func TestStateBeforeSchema(t *testing.T) {
	root, m := savedSeedStateJSON(t)
	if m["schema"] != "state" {
		t.Fatalf("saved state's schema = %v, want \"state\"", m["schema"])
	}
	delete(m, "schema")
	old, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "old.json")
	if err := os.WriteFile(p, old, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadState(hosttest.Open(t, root), p); err != nil {
		t.Errorf("loadState of a state without a schema: %v", err)
	}
}

func TestStateTampered(t *testing.T) {
	root, path, _ := savedSeedState(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	entry := func(p, v string) func(m map[string]any) {
		return func(m map[string]any) {
			m["entries"] = []any{map[string]any{"path": p, "value": v}}
		}
	}
	tests := []struct {
		name string
		give string
		want string
	}{
		{"path outside", edit(entry("/etc/passwd", "50")), "only /proc/irq/<n>/ and /sys/class/net/<nic>/queues/"},
		{"path climbs out", edit(entry("/proc/irq/284/../../../etc/shadow", "50")), "clean absolute path"},
		{"other proc file", edit(entry("/proc/irq/284/node", "1")), "only smp_affinity_list and smp_affinity"},
		{"relative path", edit(entry("proc/irq/284/smp_affinity_list", "50")), "clean absolute path"},
		{"IRQ not a number", edit(entry("/proc/irq/x1/smp_affinity_list", "50")), "IRQ number is not"},
		{"bad list", edit(entry("/proc/irq/284/smp_affinity_list", "16-")), `value "16-"`},
		{"reversed list", edit(entry("/proc/irq/284/smp_affinity_list", "31-16")), `value "31-16"`},
		{"list in mask file", edit(entry("/proc/irq/284/smp_affinity", "16-31")), `value "16-31"`},
		{"empty affinity", edit(entry("/proc/irq/284/smp_affinity_list", "")), "empty affinity"},
		{"CPU beyond the host", edit(entry("/proc/irq/284/smp_affinity_list", "64")), "CPU 64 does not exist"},
		{"duplicate with another value", edit(func(m map[string]any) {
			m["entries"] = []any{
				map[string]any{"path": "/proc/irq/284/smp_affinity_list", "value": "50"},
				map[string]any{"path": "/proc/irq/284/smp_affinity_list", "value": "51"},
			}
		}), `appears twice, with values "50" and "51"`},
		{"no entries", edit(func(m map[string]any) { m["entries"] = []any{} }), "no entries"},
		{"other root", edit(func(m map[string]any) { m["root"] = "/" }), `saved for root "/"`},
		{"version", edit(func(m map[string]any) { m["version"] = 5 }), "version 5"},
		{"unknown field", edit(func(m map[string]any) { m["command"] = "rm -rf /" }), "unknown field"},
		{"other schema", edit(func(m map[string]any) { m["schema"] = "topology" }), `its schema is not "state"`},
		{"schema not a string", edit(func(m map[string]any) { m["schema"] = 2 }), "schema"},
		{"trailing data", string(raw) + "{}", "data after the JSON object"},
		{"not JSON", "state", "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(p, []byte(tt.give), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadState(hosttest.Open(t, root), p)
			if !errors.Is(err, ErrBadState) {
				t.Fatalf("LoadState = %v, want ErrBadState", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("LoadState error %q does not say %q", err, tt.want)
			}
		})
	}
}

func TestNewestState(t *testing.T) {
	root := t.TempDir()
	if _, err := newestState(hosttest.Open(t, root)); err == nil || !strings.Contains(err.Error(), "nothing was pinned") {
		t.Errorf("NewestState on an empty root = %v", err)
	}
	dir := StateDir(hosttest.Open(t, root))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{
		"state-20261130T010203.000000000Z.json",
		"state-20261130T020000.000000000Z.json",
		"state-20261130T030000.000000000Z.json.restored",
		"lock",
	} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := newestState(hosttest.Open(t, root))
	if want := filepath.Join(dir, "state-20261130T020000.000000000Z.json"); err != nil || got != want {
		t.Errorf("NewestState = %q, %v; want %q", got, err, want)
	}
	to, err := retire(hosttest.Open(t, root), got, ".restored")
	if err != nil || !strings.HasSuffix(to, ".json.restored") {
		t.Fatalf("Retire = %q, %v", to, err)
	}
	got, _ = newestState(hosttest.Open(t, root))
	if want := filepath.Join(dir, "state-20261130T010203.000000000Z.json"); got != want {
		t.Errorf("after Retire NewestState = %q, want %q", got, want)
	}
}

func TestLock(t *testing.T) {
	root := t.TempDir()
	l, err := AcquireLock(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(hosttest.Open(t, root)); !errors.Is(err, ErrLocked) {
		t.Errorf("second AcquireLock = %v, want ErrLocked", err)
	} else if !strings.Contains(err.Error(), "held by pid") {
		t.Errorf("lock error %q does not name the holder", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := AcquireLock(hosttest.Open(t, root))
	if err != nil {
		t.Fatalf("AcquireLock after Release: %v", err)
	}
	l2.Release()
}

// FuzzParseTarget checks that every accepted path is exactly the one the
// constructors build, so nothing else can pass as a writable path.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{
		"/proc/irq/284/smp_affinity_list", "/proc/irq/0/smp_affinity",
		"/sys/class/net/eth0/queues/tx-3/xps_cpus", "/proc/irq/284/../x",
		"/sys/class/net/../queues/tx-0/xps_cpus", "/etc/passwd", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		tg, err := irq.ParseTarget(p)
		if err != nil {
			return
		}
		var rebuilt string
		if tg.File == irq.FileXPS {
			rebuilt = irq.XPSPath(tg.NIC, tg.Queue.Or(-1))
		} else {
			rebuilt = irq.AffinityPath(tg.IRQ.Or(-1), tg.File)
		}
		if rebuilt != p || path.Clean(p) != p {
			t.Errorf("irq.ParseTarget(%q) accepted %+v, which rebuilds as %q", p, tg, rebuilt)
		}
	})
}

// TestStateGone: entries whose IRQ or queue vanished are told apart, with
// why, from those still there; LoadState accepts them (restore writes the
// rest and reports these).
func TestStateGone(t *testing.T) {
	root, m := savedSeedStateJSON(t)
	m["entries"] = []any{
		map[string]any{"path": "/proc/irq/284/smp_affinity_list", "value": "50"},
		map[string]any{"path": "/proc/irq/4242/smp_affinity_list", "value": "50"},
		map[string]any{"path": "/sys/class/net/eth0/queues/tx-99/xps_cpus", "value": "0"},
		map[string]any{"path": "/sys/class/net/eth9/queues/tx-0/xps_cpus", "value": "0"},
	}
	b, _ := json.Marshal(m)
	p := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := loadState(hosttest.Open(t, root), p)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := s.Gone(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{1: "IRQ 4242 no longer exists", 2: "NIC eth0 has no tx queue 99 now", 3: "NIC eth9 has no tx queue 0 now"}
	if len(gone) != len(want) {
		t.Errorf("Gone = %v, want entries 1-3", gone)
	}
	for i, w := range want {
		if gone[i] == nil || gone[i].Error() != w {
			t.Errorf("Gone[%d] = %v, want %q", i, gone[i], w)
		}
	}
}

// TestPendingMoves: a changed IRQ whose read-back effective affinity lies
// outside its new affinity is noted as moving at its next interrupt; one
// settled, unchanged, or an xps_cpus row is not.
func TestPendingMoves(t *testing.T) {
	row := func(irqN int, kind irq.Kind, res Result, aff, eff cpuset.Set) Row {
		r := Row{IRQ: unknown.Of(irqN), Kind: kind}
		r.fill(ChangeResult{Result: res, ReadBack: irq.ReadBack{Affinity: unknown.Of(aff), Effective: unknown.Of(eff)}})
		return r
	}
	rows := []Row{
		row(30, irq.KindQueue, ResultChanged, cpuset.New(4), cpuset.New(0)),
		row(31, irq.KindQueue, ResultChanged, cpuset.New(4, 5), cpuset.New(5)),
		row(32, irq.KindQueue, ResultUnchanged, cpuset.New(4), cpuset.New(0)),
		row(-1, KindXPS, ResultChanged, cpuset.New(4), cpuset.New(0)),
	}
	got := pendingMoves(rows)
	if len(got) != 1 || !strings.HasPrefix(got[0], "IRQ 30: the kernel still delivers it to CPU 0;") {
		t.Errorf("pendingMoves = %q, want one note for IRQ 30", got)
	}
}

// TestStateDuplicateSameValue: a file saved twice with one value (what a
// pin naming a NIC twice saved before plans were de-duplicated) loads as
// one entry, so restore puts it back.
func TestStateDuplicateSameValue(t *testing.T) {
	root, path, s := savedSeedState(t)
	s.Entries = append(s.Entries, s.Entries...)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(filepath.Dir(path), "dup.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := loadState(hosttest.Open(t, root), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Entries) != 3 {
		t.Errorf("%d entries, want the 3 saved once", len(got.Entries))
	}
}

// TestLockRefusesLinks: a lock that is a link (symbolic or hard) to a
// file outside the tree is refused, and the file keeps its bytes.
func TestLockRefusesLinks(t *testing.T) {
	for _, hard := range []bool{false, true} {
		root, out := t.TempDir(), t.TempDir()
		victim := filepath.Join(out, "victim")
		if err := os.WriteFile(victim, []byte("secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(StateDir(hosttest.Open(t, root)), 0o700); err != nil {
			t.Fatal(err)
		}
		link := os.Symlink
		if hard {
			link = os.Link
		}
		if err := link(victim, lockPath(hosttest.Open(t, root))); err != nil {
			t.Fatal(err)
		}
		if l, err := AcquireLock(hosttest.Open(t, root)); err == nil {
			l.Release()
			t.Errorf("hard %v: lock through a link taken", hard)
		}
		if b, _ := os.ReadFile(victim); string(b) != "secret\n" {
			t.Errorf("hard %v: the linked file holds %q", hard, b)
		}
	}
}

// TestStateSaveEscapes: a state file shows the host's names (a NIC in a
// path, a thread's name) with their control and bidi runes escaped, and
// reads back as the names themselves.
func TestStateSaveEscapes(t *testing.T) {
	const nic = "eth0\x1b[31m\u202eZ\u0085\x7f\u2066"
	root := hosttest.Copy(t, "seed")
	s, err := newState(hosttest.Open(t, root), stateTime)
	if err != nil {
		t.Fatal(err)
	}
	s.Version = stateVersionThreads
	s.Entries = []savedValue{{Path: irq.XPSPath(nic, 0), Value: "00040000,00000000"}}
	s.Threads = []savedThread{{PID: 7, Comm: "napi/" + nic + "-8193", Start: 9, CPUs: "0-3", NIC: nic, NAPI: 8193, IRQ: 284}}
	path := defaultStatePath(hosttest.Open(t, root), stateTime)
	if err := s.Save(hosttest.Open(t, root), path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range string(raw) {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			t.Errorf("state file holds a raw U+%04X:\n%s", r, raw)
		}
	}
	if want := `"nic": "eth0\u001b[31m\u202eZ\u0085\u007f\u2066"`; !strings.Contains(string(raw), want) {
		t.Errorf("state file lacks %s:\n%s", want, raw)
	}
	got, err := parseState(raw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("read back (-saved +read):\n%s", diff)
	}
}
