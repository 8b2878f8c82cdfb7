package tune

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irqbalance"
	"github.com/irqnuma/irqnuma/internal/testsupport/fakeirqbalance"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/schematest"
)

// daemonFiles are the /proc files of an irqbalance process, PID 812,
// started at tick 4242 (and of init, so the tree has processes).
var daemonFiles = map[string]string{
	"proc/1/comm":      "systemd\n",
	"proc/1/cmdline":   "/sbin/init\x00",
	"proc/812/comm":    "irqbalance\n",
	"proc/812/cmdline": "/usr/sbin/irqbalance\x00--foreground\x00",
	"proc/812/environ": "LANG=C.UTF-8\x00",
	"proc/812/stat":    "812 (irqbalance) S 1 812 812 0 -1 4194560 190 0 0 0 5 9 0 0 20 0 2 0 4242 9428992 1083 18446744073709551615 1 1 0 0 0 0 0 4096 1260 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
	"proc/812/status":  "Name:\tirqbalance\nState:\tS (sleeping)\nCpus_allowed_list:\t0-63\nMems_allowed_list:\t0-1\n",
}

// ibTree is a copy of the seed host with the files given (relative
// path: content); "" content makes a folder.
func ibTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := hosttest.Copy(t, "seed")
	for rel, data := range files {
		p := filepath.Join(root, rel)
		if data == "" {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func withDaemon(extra map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range daemonFiles {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// debianDefault is /etc/default/irqbalance as Debian's package ships it.
func debianDefault(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/irqbalance/debian-default")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// useSocket makes pins and restores reach d.
func useSocket(t *testing.T, d *fakeirqbalance.Daemon) {
	irqbalanceSocket = &irqbalance.Socket{Addr: d.Addr()}
	t.Cleanup(func() { irqbalanceSocket = nil })
}

// ibPin pins the seed host's IRQ 285 (queue 1 of eth0) and 284, keeping
// irqbalance off ban.
func ibPin(t *testing.T, root string, w Writer, dry bool, ban ...int) *PinResult {
	t.Helper()
	if w == nil {
		w = FileWriter{}
	}
	res, err := Pin(context.Background(), PinRequest{
		Root: hosttest.Open(t, root), NICs: []string{"eth0"}, Options: PlanOptions{IRQs: []int{284, 285}, CPUs: cpuset.New(16, 17)},
		Writer: w, Now: time.Now(), Threads: noThreads{}, DryRun: dry, Irqbalance: &IrqbalanceBan{IRQs: ban},
	})
	if err != nil {
		t.Fatalf("Pin: %v", err)
	}
	return res
}

// ibRestore restores the newest state of root.
func ibRestore(t *testing.T, root string) *RestoreResult {
	t.Helper()
	rr, err := Restore(context.Background(), hosttest.Open(t, root), "", FileWriter{}, noThreads{})
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	return rr
}

// readState reads a pin's state file, which must be what
// docs/schema/state.v4.json describes.
func readState(t *testing.T, path string) pinState {
	t.Helper()
	var st pinState
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil {
		t.Fatalf("state file %s: %v", path, err)
	}
	schematest.Load(t).Validate(t, "state file "+path, b)
	return st
}

func hasNote(notes []string, s string) bool {
	return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, s) })
}

// TestIrqbalanceSocketPinRestore: with irqbalance running and answering
// over its socket, the pin adds the IRQ to the daemon's list (its
// --banirq IRQ kept), reads it back, saves the list before with the
// daemon's PID and start time in a version 4 state, says a restart
// forgets it, and does not warn of the IRQ; restore takes it back out,
// leaving the daemon's list and the tree as they were.
func TestIrqbalanceSocketPinRestore(t *testing.T) {
	for _, before := range [][]int{{40}, nil} {
		d := fakeirqbalance.Start(t, "", before, cpuset.Set{})
		useSocket(t, d)
		root := ibTree(t, daemonFiles)
		files := hosttest.Files(t, root)
		res := ibPin(t, root, nil, false, 285)
		if res.Err() != nil {
			t.Fatalf("before %v: Pin: %v", before, res.Err())
		}
		want := &IrqbalanceRow{Way: IrqbalanceWaySocket, Where: d.Addr() + ", PID 812", IRQs: []int{285},
			From: banList(before), To: banList(append(slices.Clone(before), 285)), Result: ResultChanged}
		if diff := cmp.Diff(want, res.IrqbalanceBan, cmp.AllowUnexported(IrqbalanceRow{})); diff != "" {
			t.Errorf("before %v: row (-want +got):\n%s", before, diff)
		}
		if got := d.Banned(); !slices.Equal(got, append(slices.Clone(before), 285)) {
			t.Errorf("before %v: the daemon bans %v after the pin", before, got)
		}
		if !hasNote(res.Notes, "a restart of irqbalance forgets the ban") || !hasNote(res.Notes, `IRQBALANCE_ARGS="--banirq=285"`) {
			t.Errorf("before %v: notes %q: want the restart's and the config line's", before, res.Notes)
		}
		if res.Irqbalance.PID != 812 || !slices.Equal(res.Irqbalance.Loose, []int{284}) {
			t.Errorf("before %v: warning %+v, want PID 812 and IRQ 284 only loose", before, res.Irqbalance)
		}
		irqs := 0
		for _, r := range res.Rows {
			if r.Result == ResultChanged {
				irqs++
			}
		}
		if irqs == 0 || res.Changed != irqs+1 {
			t.Errorf("before %v: Changed %d, want the ban and the %d IRQs written", before, res.Changed, irqs)
		}
		st := readState(t, res.StateFile)
		wantSaved := &savedIrqbalance{Way: IrqbalanceWaySocket, Socket: &savedIrqbalanceSocket{PID: 812, Start: 4242, Address: d.Addr(), Before: orNoIRQs(before), Added: []int{285}}}
		if diff := cmp.Diff(wantSaved, st.Irqbalance); diff != "" || st.Version != stateVersionTune {
			t.Errorf("before %v: state version %d, irqbalance (-want +got):\n%s", before, st.Version, diff)
		}

		rr := ibRestore(t, root)
		if rr.Err() != nil || rr.IrqbalanceBan == nil || rr.IrqbalanceBan.Result != ResultChanged {
			t.Fatalf("before %v: Restore: %v, row %+v", before, rr.Err(), rr.IrqbalanceBan)
		}
		if got := d.Banned(); !slices.Equal(got, before) {
			t.Errorf("before %v: the daemon bans %v after the restore", before, got)
		}
		wantCmd := "settings ban irqs NONE"
		if len(before) > 0 {
			wantCmd = "settings ban irqs 40"
		}
		if cmds := d.Commands(); !slices.Contains(cmds, wantCmd) {
			t.Errorf("before %v: commands %q, want %q among them", before, cmds, wantCmd)
		}
		if diff := cmp.Diff(files, hosttest.Files(t, root)); diff != "" {
			t.Errorf("before %v: tree not back (-before +after):\n%s", before, diff)
		}
	}
}

// TestIrqbalanceSocketRollback: a fault after the ban (the first IRQ
// write fails) takes it back out; a daemon that does not take the ban
// fails the step before any IRQ is written.
func TestIrqbalanceSocketRollback(t *testing.T) {
	d := fakeirqbalance.Start(t, "", []int{40}, cpuset.Set{})
	useSocket(t, d)
	root := ibTree(t, daemonFiles)
	files := hosttest.Files(t, root)
	res := ibPin(t, root, &errnoWriter{fail: map[int]bool{1: true}, errno: unix.EROFS}, false, 285)
	if res.Stop != StopFailed || res.IrqbalanceBan.Result != ResultRolledBack || res.Retired == "" {
		t.Errorf("stop %v, row %+v, retired %q: want a failed pin, the ban rolled back", res.Stop, res.IrqbalanceBan, res.Retired)
	}
	if got := d.Banned(); !slices.Equal(got, []int{40}) {
		t.Errorf("the daemon bans %v after the rollback, want 40", got)
	}
	after := hosttest.Files(t, root)
	if diff := cmp.Diff(files, after); diff != "" {
		t.Errorf("tree (-before +after):\n%s", diff)
	}

	d.Ignore("settings ban irqs", true)
	res = ibPin(t, root, nil, false, 285)
	if res.Stop != StopFailed || res.IrqbalanceBan.Result != ResultFailed || !strings.Contains(res.IrqbalanceBan.Error, "read back") {
		t.Errorf("a daemon that ignores the ban: stop %v, row %+v; want the step failed on its read back", res.Stop, res.IrqbalanceBan)
	}
	if res.Changed != 0 || !slices.ContainsFunc(res.Rows, func(r Row) bool { return r.Result == ResultPlanned || r.Result == ResultUnchanged }) {
		t.Errorf("Changed %d, rows %+v: want no IRQ written", res.Changed, res.Rows)
	}
	if diff := cmp.Diff(files, hosttest.Files(t, root)); diff != "" {
		t.Errorf("tree (-before +after):\n%s", diff)
	}
}

// TestIrqbalanceSocketRollbackFailed: a ban the daemon took but does not
// read back, and cannot be taken out again (its socket stops answering
// setup), is a rollback that failed: the state file stays, and restore
// takes the ban out once the daemon answers.
func TestIrqbalanceSocketRollbackFailed(t *testing.T) {
	d := fakeirqbalance.Start(t, "", nil, cpuset.Set{})
	useSocket(t, d)
	root := ibTree(t, daemonFiles)
	res, err := Pin(context.Background(), PinRequest{
		Root: hosttest.Open(t, root), NICs: []string{"eth0"}, Options: PlanOptions{IRQs: []int{285}, CPUs: cpuset.New(16)},
		Writer: FileWriter{}, Now: time.Now(), Threads: noThreads{}, Irqbalance: &IrqbalanceBan{IRQs: []int{285}},
		Planned: func(*PinResult) error { d.Ignore("setup", true); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	var rb *RollbackError
	if !errors.As(res.IrqbalanceBan.Err(), &rb) || len(res.RollbackFailed) != 1 || res.Retired != "" || res.Stop != StopFailed {
		t.Fatalf("row %+v, RollbackFailed %q, retired %q, stop %v: want a failed rollback, the state kept", res.IrqbalanceBan, res.RollbackFailed, res.Retired, res.Stop)
	}
	if got := d.Banned(); !slices.Equal(got, []int{285}) {
		t.Errorf("the daemon bans %v, want the ban it took", got)
	}
	d.Ignore("setup", false)
	if rr := ibRestore(t, root); rr.Err() != nil || len(d.Banned()) != 0 {
		t.Errorf("restore: %v; the daemon bans %v", rr.Err(), d.Banned())
	}
}

// TestIrqbalanceSocketDaemonGone: a daemon that restarted since the pin
// forgot its ban: restore asks the new one nothing and says so.
func TestIrqbalanceSocketDaemonGone(t *testing.T) {
	d := fakeirqbalance.Start(t, "", nil, cpuset.Set{})
	useSocket(t, d)
	root := ibTree(t, daemonFiles)
	if res := ibPin(t, root, nil, false, 285); res.Err() != nil {
		t.Fatal(res.Err())
	}
	stat := strings.Replace(daemonFiles["proc/812/stat"], " 4242 ", " 9999 ", 1)
	if err := os.WriteFile(filepath.Join(root, "proc/812/stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	n := len(d.Commands())
	rr := ibRestore(t, root)
	if rr.Err() != nil || rr.IrqbalanceBan.Result != ResultGone || !hasNote(rr.Notes, "restarted or stopped") || rr.Retired == "" {
		t.Errorf("Err %v, row %+v, notes %q, retired %q: want the ban gone with its daemon, and the state retired", rr.Err(), rr.IrqbalanceBan, rr.Notes, rr.Retired)
	}
	if cmds := d.Commands(); len(cmds) != n {
		t.Errorf("restore sent %q to the new daemon", cmds[n:])
	}
}

// TestIrqbalanceConfigPinRestore: where irqbalance does not answer over
// a socket (a host tree), the pin adds --banirq to IRQBALANCE_ARGS in
// the environment file, written whole with its mode, and restore puts
// its exact bytes back, or removes the file it made. A running daemon is
// told to restart.
func TestIrqbalanceConfigPinRestore(t *testing.T) {
	shipped := debianDefault(t)
	tests := []struct {
		name     string
		files    map[string]string
		wantFile string
		wantNote string
	}{
		{"no processes, Debian's file", map[string]string{"etc/default/irqbalance": shipped}, "/etc/default/irqbalance", "whether irqbalance runs is unknown"},
		{"not running, Debian's file", map[string]string{"etc/default/irqbalance": shipped, "proc/1/comm": "systemd\n"}, "/etc/default/irqbalance", "irqbalance does not run: --banirq=285 in /etc/default/irqbalance keeps it off IRQ 285 when it starts"},
		{"running, its socket not asked, Fedora's file", withDaemon(map[string]string{"etc/sysconfig/irqbalance": "IRQBALANCE_ARGS=\"-j\"\n"}), "/etc/sysconfig/irqbalance", "systemctl restart irqbalance"},
		{"running, no file, Debian-like", withDaemon(map[string]string{"etc/debian_version": "12.8\n", "etc/default": ""}), "/etc/default/irqbalance", "systemctl restart irqbalance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := ibTree(t, tt.files)
			if err := os.Chmod(filepath.Join(root, "etc"), 0o755); err != nil {
				t.Fatal(err)
			}
			etc := snapshotDir(t, filepath.Join(root, "etc"))
			files := hosttest.Files(t, root)

			dry := ibPin(t, root, nil, true, 285)
			if dry.IrqbalanceBan == nil || dry.IrqbalanceBan.Result != ResultPlanned || dry.IrqbalanceBan.Way != IrqbalanceWayConfig {
				t.Fatalf("dry run: row %+v, want the config way planned", dry.IrqbalanceBan)
			}
			if diff := cmp.Diff(etc, snapshotDir(t, filepath.Join(root, "etc"))); diff != "" {
				t.Errorf("a dry run wrote (-before +after):\n%s", diff)
			}

			res := ibPin(t, root, nil, false, 285)
			if res.Err() != nil || res.IrqbalanceBan.Result != ResultChanged || res.IrqbalanceBan.Where != tt.wantFile {
				t.Fatalf("Pin: %v, row %+v; want %s changed", res.Err(), res.IrqbalanceBan, tt.wantFile)
			}
			if !hasNote(res.Notes, tt.wantNote) {
				t.Errorf("notes %q, want one saying %q", res.Notes, tt.wantNote)
			}
			// Of the IRQs placed, 284 is not banned: the line that would
			// ban it keeps the ban the pin wrote.
			if w := res.Irqbalance; w.PID != 0 && (!slices.Equal(w.Loose, []int{284}) || !strings.Contains(strings.Join(w.BanConfig, "\n"), "--banirq=285 --banirq=284")) {
				t.Errorf("warning %+v: want IRQ 284 loose, its line keeping --banirq=285", w)
			}
			cfg, err := irqbalance.ReadConfig(hosttest.Open(t, root))
			if err != nil || !slices.Contains(cfg.BannedIRQs, 285) || cfg.File != tt.wantFile {
				t.Errorf("after the pin irqbalance's files (%+v, %v) do not ban IRQ 285 in %s", cfg, err, tt.wantFile)
			}
			if fi, err := os.Stat(filepath.Join(root, tt.wantFile)); err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("%s: %v, %v; want mode 0644", tt.wantFile, fi, err)
			}
			st := readState(t, res.StateFile)
			if st.Version != stateVersionTune || st.Irqbalance == nil || st.Irqbalance.Config == nil || st.Irqbalance.Config.Path != tt.wantFile {
				t.Errorf("state version %d, irqbalance %+v", st.Version, st.Irqbalance)
			}

			rr := ibRestore(t, root)
			if rr.Err() != nil || rr.IrqbalanceBan == nil || rr.IrqbalanceBan.Result != ResultChanged {
				t.Fatalf("Restore: %v, row %+v", rr.Err(), rr.IrqbalanceBan)
			}
			if diff := cmp.Diff(etc, snapshotDir(t, filepath.Join(root, "etc"))); diff != "" {
				t.Errorf("etc not back byte for byte (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(files, hosttest.Files(t, root)); diff != "" {
				t.Errorf("tree not back (-before +after):\n%s", diff)
			}
		})
	}
}

// TestIrqbalanceConfigRollback: a fault after the ban puts the file's
// bytes back; a file edited after the pin is not put back over.
func TestIrqbalanceConfigRollback(t *testing.T) {
	root := ibTree(t, map[string]string{"etc/default/irqbalance": debianDefault(t)})
	etc := snapshotDir(t, filepath.Join(root, "etc"))
	res := ibPin(t, root, &errnoWriter{fail: map[int]bool{1: true}, errno: unix.EROFS}, false, 285)
	if res.Stop != StopFailed || res.IrqbalanceBan.Result != ResultRolledBack {
		t.Errorf("stop %v, row %+v: want the ban rolled back", res.Stop, res.IrqbalanceBan)
	}
	if diff := cmp.Diff(etc, snapshotDir(t, filepath.Join(root, "etc"))); diff != "" {
		t.Errorf("etc after the rollback (-before +after):\n%s", diff)
	}

	if res := ibPin(t, root, nil, false, 285); res.Err() != nil {
		t.Fatal(res.Err())
	}
	p := filepath.Join(root, "etc/default/irqbalance")
	edited, _ := os.ReadFile(p)
	edited = append(edited, "IRQBALANCE_ONESHOT=1\n"...)
	if err := os.WriteFile(p, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	rr := ibRestore(t, root)
	if rr.Err() == nil || rr.IrqbalanceBan.Result != ResultFailed || !strings.Contains(rr.IrqbalanceBan.Error, "changed since the pin") || rr.Retired != "" {
		t.Errorf("Err %v, row %+v, retired %q: want the edited file left, the state kept", rr.Err(), rr.IrqbalanceBan, rr.Retired)
	}
	if b, _ := os.ReadFile(p); string(b) != string(edited) {
		t.Errorf("the edited file was overwritten:\n%s", b)
	}
}

// TestIrqbalanceNothingToBan: no ban is planned where irqbalance neither
// runs nor has a file, or bans the IRQs already.
func TestIrqbalanceNothingToBan(t *testing.T) {
	root := ibTree(t, nil)
	res := ibPin(t, root, nil, false, 285)
	if res.IrqbalanceBan != nil || !hasNote(res.Notes, "nothing to ban") {
		t.Errorf("no irqbalance: row %+v, notes %q; want none, and a note", res.IrqbalanceBan, res.Notes)
	}
	if st := readState(t, res.StateFile); st.Irqbalance != nil || st.Version == stateVersionTune {
		t.Errorf("state %+v: want no irqbalance section", st)
	}
	root = ibTree(t, map[string]string{"etc/default/irqbalance": "IRQBALANCE_ARGS=\"--banirq=285\"\n"})
	res = ibPin(t, root, nil, false, 285)
	if res.IrqbalanceBan == nil || res.IrqbalanceBan.Result != ResultUnchanged || res.IrqbalanceBan.Way != IrqbalanceWayConfig {
		t.Errorf("banned already: row %+v, want unchanged", res.IrqbalanceBan)
	}
	if _, err := Pin(context.Background(), PinRequest{Root: hosttest.Open(t, root), NICs: []string{"eth0"}, Writer: FileWriter{}, Now: time.Now(),
		Threads: noThreads{}, DryRun: true, Irqbalance: &IrqbalanceBan{IRQs: []int{-1}}}); err == nil || !strings.Contains(err.Error(), "IRQ -1") {
		t.Errorf("a ban of IRQ -1: %v, want it refused", err)
	}
}

// snapshotDir is every file and link under dir with its mode and bytes.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		m[strings.TrimPrefix(p, dir)] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestStateIrqbalanceTampered: a state whose irqbalance ban restore could
// not take out as the pin made it is refused whole.
func TestStateIrqbalanceTampered(t *testing.T) {
	fsys := hosttest.FS(t, "seed")
	real, err := realRoot(fsys)
	if err != nil {
		t.Fatal(err)
	}
	sum := strings.Repeat("ab", 32)
	sock := func(f func(*savedIrqbalanceSocket)) *savedIrqbalance {
		v := &savedIrqbalanceSocket{PID: 812, Start: 4242, Address: "/run/irqbalance/irqbalance812.sock", Before: []int{40}, Added: []int{285}}
		f(v)
		return &savedIrqbalance{Way: IrqbalanceWaySocket, Socket: v}
	}
	conf := func(f func(*savedIrqbalanceConfig)) *savedIrqbalance {
		v := &savedIrqbalanceConfig{Path: "/etc/default/irqbalance", Old: []byte("#\n"), Mode: 0o644, Written: sum, Added: []int{285}}
		f(v)
		return &savedIrqbalance{Way: IrqbalanceWayConfig, Config: v}
	}
	tests := []struct {
		name    string
		version int
		give    *savedIrqbalance
		want    string
	}{
		{"version 3", 3, sock(func(*savedIrqbalanceSocket) {}), "only version 4"},
		{"pid", 4, sock(func(v *savedIrqbalanceSocket) { v.PID = 0 }), "not a pid"},
		{"irq number", 4, sock(func(v *savedIrqbalanceSocket) { v.Added = []int{-3} }), "not an IRQ number"},
		{"not ascending", 4, sock(func(v *savedIrqbalanceSocket) { v.Before = []int{41, 40} }), "not ascending"},
		{"nothing added", 4, sock(func(v *savedIrqbalanceSocket) { v.Added = nil }), "no IRQ"},
		{"both parts", 4, &savedIrqbalance{Way: IrqbalanceWaySocket, Socket: sock(func(*savedIrqbalanceSocket) {}).Socket, Config: conf(func(*savedIrqbalanceConfig) {}).Config}, "its part only"},
		{"unknown way", 4, &savedIrqbalance{Way: "sysfs"}, `way "sysfs"`},
		{"path", 4, conf(func(v *savedIrqbalanceConfig) { v.Path = "/etc/shadow" }), "not one of irqbalance's environment files"},
		{"relative path", 4, conf(func(v *savedIrqbalanceConfig) { v.Path = "etc/default/irqbalance" }), "not one of irqbalance's environment files"},
		{"absent with bytes", 4, conf(func(v *savedIrqbalanceConfig) { v.Absent = true }), "absent, yet"},
		{"neither", 4, conf(func(v *savedIrqbalanceConfig) { v.Old = nil }), "neither absent"},
		{"mode", 4, conf(func(v *savedIrqbalanceConfig) { v.Mode = 0o4755 }), "not permission bits"},
		{"digest", 4, conf(func(v *savedIrqbalanceConfig) { v.Written = "ab" }), "not a SHA-256"},
	}
	for _, tt := range tests {
		st := pinState{Version: tt.version, Root: real, Irqbalance: tt.give}
		err := st.Validate(fsys)
		if !errors.Is(err, ErrBadState) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate = %v, want ErrBadState saying %q", tt.name, err, tt.want)
		}
	}
	for _, ok := range []*savedIrqbalance{sock(func(*savedIrqbalanceSocket) {}), conf(func(*savedIrqbalanceConfig) {}),
		conf(func(v *savedIrqbalanceConfig) { v.Old, v.Absent = nil, true })} {
		st := pinState{Version: stateVersionTune, Root: real, Irqbalance: ok}
		if err := st.Validate(fsys); err != nil {
			t.Errorf("Validate(%+v) = %v, want a ban alone to be a valid state", ok, err)
		}
	}
	// A state file's JSON, as a pin writes it, with a tampered field.
	b, err := json.Marshal(pinState{Version: stateVersionTune, Root: real, Entries: []savedValue{}, Irqbalance: conf(func(*savedIrqbalanceConfig) {})})
	if err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(string(b), `"path":"/etc/default/irqbalance"`, `"path":"/etc/default/../shadow"`, 1)
	if s, err := parseState([]byte(tampered)); err != nil {
		t.Fatal(err)
	} else if err := s.Validate(fsys); !errors.Is(err, ErrBadState) {
		t.Errorf("a state with path /etc/default/../shadow: %v, want ErrBadState", err)
	}
}

// TestIrqbalanceBanOnly: IRQs placed already, the ban is the pin's one
// change, saved alone; a ban list past what irqbalance before v1.9.4
// reads whole goes to the environment file instead, saying why.
func TestIrqbalanceBanOnly(t *testing.T) {
	d := fakeirqbalance.Start(t, "", nil, cpuset.Set{})
	useSocket(t, d)
	root := ibTree(t, withDaemon(map[string]string{"etc/default/irqbalance": debianDefault(t)}))
	first := ibPin(t, root, nil, false)
	if first.Err() != nil || first.IrqbalanceBan != nil {
		t.Fatalf("pin without a ban: %v, row %+v", first.Err(), first.IrqbalanceBan)
	}
	res := ibPin(t, root, nil, false, 284, 285)
	if res.Err() != nil || res.Changes != 1 || res.Changed != 1 || res.IrqbalanceBan.Result != ResultChanged {
		t.Fatalf("ban only: %v, %d changes, %d changed, row %+v", res.Err(), res.Changes, res.Changed, res.IrqbalanceBan)
	}
	if st := readState(t, res.StateFile); len(st.Entries) != 0 || st.Irqbalance == nil {
		t.Errorf("state %+v: want the ban alone", st)
	}
	if rr := ibRestore(t, root); rr.Err() != nil || len(d.Banned()) != 0 {
		t.Errorf("restore: %v; the daemon bans %v", rr.Err(), d.Banned())
	}

	many := make([]int, 100)
	for i := range many {
		many[i] = 1000 + i
	}
	res = ibPin(t, root, nil, true, many...)
	if res.IrqbalanceBan == nil || res.IrqbalanceBan.Way != IrqbalanceWayConfig || !hasNote(res.Notes, "past the 499") {
		t.Errorf("a long ban: row %+v, notes %q; want the config way, saying why", res.IrqbalanceBan, res.Notes)
	}
}
