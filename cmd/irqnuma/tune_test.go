package main

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

	"github.com/irqnuma/irqnuma/internal/host/snapshot"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/render/report"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/testsupport/schematest"
	"github.com/irqnuma/irqnuma/internal/tune"
)

// tuneRoots are the writable copies tune is tried on: every committed
// host tree (the generated ones, the sosreport's, the lab's snapshots
// unpacked) and two real captures.
func tuneRoots(t *testing.T) map[string]func() string {
	t.Helper()
	roots := map[string]func() string{}
	for _, name := range append(hosttest.Names(), "sos-ice") {
		roots[name] = func() string { return hosttest.Copy(t, name) }
	}
	// The lab's snapshots, unpacked: a snapshot itself is read-only
	// (TestTuneSnapshotRefused), its tree is not.
	snaps, err := filepath.Glob(hosttest.Root("lab-debian-*.tar.gz"))
	if err != nil || len(snaps) < 2 {
		t.Fatalf("lab snapshots: %v %v", snaps, err)
	}
	for _, snap := range snaps {
		roots[strings.TrimSuffix(filepath.Base(snap), ".tar.gz")] = func() string {
			dir, cleanup, err := snapshot.Open(context.Background(), snap, snapshot.Limits{})
			if err != nil {
				t.Fatalf("unpack %s: %v", snap, err)
			}
			t.Cleanup(func() { cleanup() })
			return dir
		}
	}
	realhosts.Require(t)
	for _, name := range []string{"dell-2numa", "cnto-worker1"} {
		c := realhosts.MustLookup(t, name)
		roots[name] = func() string { return realhosts.Unpack(t, c) }
	}
	return roots
}

// treeFiles is every regular file of a tree with its mode and bytes,
// but irqnuma's own state folder (var/lib/irqnuma).
func treeFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && rel == filepath.Join("var", "lib", "irqnuma") {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		m[rel] = info.Mode().String() + " " + string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameFiles fails t naming the files that differ between two readings.
func sameFiles(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	var diff []string
	for p, v := range before {
		if after[p] != v {
			diff = append(diff, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diff = append(diff, p+" (new)")
		}
	}
	slices.Sort(diff)
	if len(diff) > 0 {
		if len(diff) > 10 {
			diff = append(diff[:10], fmt.Sprintf("... %d more", len(diff)-10))
		}
		t.Errorf("%s: %d files differ: %s", what, len(diff), strings.Join(diff, ", "))
	}
}

// tuneDoc runs irqnuma tune -o json on root and decodes it, checking it
// against its schema.
func tuneDoc(t *testing.T, args ...string) (report.TuneDoc, string, int) {
	t.Helper()
	out, stderr, code := runCLI(t, append([]string{"tune", "-o", "json"}, args...)...)
	var doc report.TuneDoc
	if code == 0 {
		schematest.Load(t).Validate(t, "tune "+strings.Join(args, " "), []byte(out))
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("tune %v: %v\n%s", args, err, out)
		}
	}
	return doc, stderr, code
}

// TestTuneTrees: on a copy of every tree and of the two real captures,
// at --fail-on warning and info: an audit that is NOT READY becomes
// READY after one tune, or what stays at or above the level is exactly
// what the tune said it could not fix, each with a person's change; a
// dry run changes nothing; restore brings back every file byte for byte.
func TestTuneTrees(t *testing.T) {
	for name, copyOf := range tuneRoots(t) {
		for _, failOn := range []string{"warning", "info"} {
			t.Run(name+"/"+failOn, func(t *testing.T) {
				root := copyOf()
				before := treeFiles(t, root)
				dry, stderr, code := tuneDoc(t, "--root", root, "--fail-on", failOn, "--dry-run")
				if code != 0 {
					t.Fatalf("tune --dry-run: exit %d\n%s", code, stderr)
				}
				sameFiles(t, "after a dry run", before, treeFiles(t, root))
				if dry.Before.Ready {
					if n := len(dry.Changes.Plan) + len(dry.Changes.Settings); n > 0 {
						t.Errorf("a ready host gets a plan of %d changes", n)
					}
					return
				}
				doc, stderr, code := tuneDoc(t, "--root", root, "--fail-on", failOn)
				if code != 0 {
					t.Fatalf("tune: exit %d\n%s", code, stderr)
				}
				checkTuneOutcome(t, doc, audit.Severity(failOn))
				if _, stderr, code := runCLI(t, "restore", "--root", root); code != 0 && doc.Changes.StateFile != "" {
					t.Fatalf("restore: exit %d\n%s", code, stderr)
				}
				sameFiles(t, "after restore", before, treeFiles(t, root))
			})
		}
	}
}

// checkTuneOutcome: every finding left at or above failOn is one the
// tune said it cannot fix, with the change a person must make; and the
// plan changed something when it had a fix.
func checkTuneOutcome(t *testing.T, doc report.TuneDoc, failOn audit.Severity) {
	t.Helper()
	if len(doc.Fixes) > 0 && doc.After == nil {
		t.Fatalf("%d fixes planned but no audit after", len(doc.Fixes))
	}
	if doc.After == nil {
		return
	}
	said := map[string]bool{}
	for _, c := range doc.Cannot {
		if c.Change == "" || c.NoFix == "" {
			t.Errorf("cannot fix %s on %q without why or change: %+v", c.Check, c.NIC, c)
		}
		said[string(c.Check)+"|"+c.NIC+"|"+c.Subject] = true
	}
	for _, f := range audit.AtOrAbove(doc.After.Findings, failOn) {
		if !said[string(f.Check)+"|"+f.NIC+"|"+f.Subject] {
			t.Errorf("after the tune: %s %s on %q (%s) is left, and the tune did not say it cannot fix it: %s", f.Severity, f.Check, f.NIC, f.Subject, f.Message)
		}
	}
	if doc.After.Ready != (len(audit.AtOrAbove(doc.After.Findings, failOn)) == 0) {
		t.Errorf("after.ready %v does not match its findings", doc.After.Ready)
	}
}

// TestTuneReady: on the trees whose findings all have machine fixes the
// tune makes the audit READY at --fail-on warning, and audit says so.
func TestTuneReady(t *testing.T) {
	roots := tuneRoots(t)
	for _, name := range []string{"seed", "nps2", "dell-2numa", "cnto-worker1"} {
		t.Run(name, func(t *testing.T) {
			root := roots[name]()
			if _, _, code := runCLI(t, "audit", "--root", root); code != 3 {
				t.Fatalf("audit before: exit %d, want 3 (NOT READY)", code)
			}
			doc, stderr, code := tuneDoc(t, "--root", root)
			if code != 0 {
				t.Fatalf("tune: exit %d\n%s", code, stderr)
			}
			if doc.After == nil || !doc.After.Ready {
				t.Fatalf("after the tune: not ready: %+v", doc.After)
			}
			if out, _, code := runCLI(t, "audit", "--root", root); code != 0 || !strings.HasPrefix(out, "verdict: ready") {
				t.Errorf("audit after the tune: exit %d\n%s", code, out)
			}
		})
	}
}

// TestTuneOnce: a second tune refuses, naming the state file in place
// and the restore that undoes it; after the restore it plans again.
func TestTuneOnce(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	if _, stderr, code := runCLI(t, "tune", "--root", root); code != 0 {
		t.Fatalf("tune: exit %d\n%s", code, stderr)
	}
	_, stderr, code := runCLI(t, "tune", "--root", root)
	if code != 1 || !strings.Contains(stderr, "an earlier tune or pin is in place") || !strings.Contains(stderr, "irqnuma restore") {
		t.Fatalf("second tune: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "restore", "--root", root); code != 0 {
		t.Fatalf("restore: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "tune", "--root", root, "--dry-run"); code != 0 {
		t.Fatalf("tune after restore: exit %d\n%s", code, stderr)
	}
}

// TestTuneSnapshotRefused: a snapshot is read-only: tune and restore
// refuse it, tune --dry-run plans on it.
func TestTuneSnapshotRefused(t *testing.T) {
	snap := hosttest.Root("lab-debian-6.12.tar.gz")
	for _, cmd := range [][]string{{"tune"}, {"restore"}} {
		_, stderr, code := runCLI(t, append(cmd, "--root", snap)...)
		if code != 2 || !strings.Contains(stderr, "a snapshot is read-only") {
			t.Errorf("%s on a snapshot: exit %d\n%s", cmd[0], code, stderr)
		}
	}
	if _, stderr, code := runCLI(t, "tune", "--dry-run", "--root", snap); code != 0 {
		t.Errorf("tune --dry-run on a snapshot: exit %d\n%s", code, stderr)
	}
}

// failNth fails the nth write and passes the others to the files.
type failNth struct {
	n, at int
}

func (w *failNth) WriteFile(name string, data []byte) error {
	w.n++
	if w.n == w.at {
		return fmt.Errorf("write %s: %w", name, errors.New("injected fault"))
	}
	return tune.FileWriter{}.WriteFile(name, data)
}

// TestTuneFault: a write that fails at any step of the transaction
// (settings, IRQs, xps) rolls every step back: the tree is as it was, and
// the state file is retired, so nothing is left to restore.
func TestTuneFault(t *testing.T) {
	root := hosttest.Copy(t, "nps2")
	before := treeFiles(t, root)
	dry, _, code := tuneDoc(t, "--root", root, "--fail-on", "info", "--dry-run")
	if code != 0 {
		t.Fatal("dry run failed")
	}
	steps := len(dry.Changes.Plan) + len(dry.Changes.Settings)
	if steps < 10 {
		t.Fatalf("nps2 at info plans %d writes; want settings, IRQs and xps", steps)
	}
	for at := 1; at <= steps; at++ {
		s := hostSys()
		s.writer = &failNth{at: at}
		_, stderr, code := runCLISys(t, s, "tune", "--root", root, "--fail-on", "info")
		if code != 1 || !strings.Contains(stderr, "rolled back") {
			t.Fatalf("fault at write %d: exit %d\n%s", at, code, stderr)
		}
		sameFiles(t, fmt.Sprintf("fault at write %d", at), before, treeFiles(t, root))
		if _, stderr, code := runCLI(t, "restore", "--root", root); code == 0 {
			t.Fatalf("fault at write %d: a state file was left to restore\n%s", at, stderr)
		}
	}
}

// TestTuneRPSAndNAPI: on a copy of seed whose eth0 (node 1) steers
// received packets to node 0 and defers hard IRQs without a timer, one
// tune sets rps_cpus to the NIC's CPUs and napi_defer_hard_irqs to 0, the
// audit is ready, and restore puts both files back byte for byte.
func TestTuneRPSAndNAPI(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	write := func(rel, v string) {
		p := filepath.Join(root, rel)
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for q := range 4 {
		write(fmt.Sprintf("sys/class/net/eth0/queues/rx-%d/rps_cpus", q), "00000000,0000ffff\n")
	}
	// A tree's copies without their newline: restore writes back the
	// bytes it read.
	write("sys/class/net/eth0/napi_defer_hard_irqs", "2")
	write("sys/class/net/eth0/gro_flush_timeout", "0")
	before := treeFiles(t, root)
	doc, stderr, code := tuneDoc(t, "--root", root)
	if code != 0 {
		t.Fatalf("tune: exit %d\n%s", code, stderr)
	}
	var got []string
	for _, s := range doc.Changes.Settings {
		got = append(got, fmt.Sprintf("%s %s->%s %s", filepath.Base(filepath.Dir(s.File))+"/"+filepath.Base(s.File), s.From, s.To, s.Result))
	}
	want := []string{}
	for q := range 4 {
		want = append(want, fmt.Sprintf("rx-%d/rps_cpus 00000000,0000ffff->ffff0000,ffff0000 changed", q))
	}
	want = append(want, "eth0/napi_defer_hard_irqs 2->0 changed")
	if !slices.Equal(got, want) {
		t.Errorf("settings:\n got %q\nwant %q", got, want)
	}
	if doc.After == nil || !doc.After.Ready {
		t.Errorf("not ready after the tune: %+v", doc.After)
	}
	if _, stderr, code := runCLI(t, "restore", "--root", root); code != 0 {
		t.Fatalf("restore: exit %d\n%s", code, stderr)
	}
	sameFiles(t, "after restore", before, treeFiles(t, root))
}

// TestTuneAppCPUs: CPUs kept for the application get no queue IRQ, and
// the exec line names them; --reserve keeps whole cores of the NIC's
// node; a reserve that leaves the NIC nothing is a usage error.
func TestTuneAppCPUs(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	doc, stderr, code := tuneDoc(t, "--root", root, "--dry-run", "--app-cpus", "16-19,48-51")
	if code != 0 {
		t.Fatalf("tune --app-cpus: exit %d\n%s", code, stderr)
	}
	if doc.AppCPUs != "16-19,48-51" || doc.Exec != "irqnuma exec --cpus 16-19,48-51 --membind -- COMMAND" {
		t.Errorf("app CPUs %q, exec %q", doc.AppCPUs, doc.Exec)
	}
	for _, r := range doc.Changes.Plan {
		for _, cpu := range []string{"16", "17", "18", "19", "48", "49", "50", "51"} {
			if r.To == cpu {
				t.Errorf("IRQ %v goes to CPU %s, kept for the application", r.IRQ, cpu)
			}
		}
	}
	doc, _, code = tuneDoc(t, "--root", root, "--dry-run", "--reserve", "2")
	if code != 0 || doc.AppCPUs != "30-31,62-63" || doc.AppSource != "--reserve 2" {
		t.Errorf("--reserve 2: exit %d, app CPUs %q (%s), want the last 2 cores of node 1, 30-31,62-63", code, doc.AppCPUs, doc.AppSource)
	}
	_, stderr, code = runCLI(t, "tune", "--root", root, "--dry-run", "--reserve", "16")
	if code != 2 || !strings.Contains(stderr, "none would be left for its IRQs") {
		t.Errorf("--reserve 16: exit %d\n%s", code, stderr)
	}
}

// TestTuneIrqbalanceConfig: on a Debian-like tree where irqbalance runs
// without a ban, the tune bans the NIC's IRQs in /etc/default/irqbalance
// (a capture has no socket to ask), says the running daemon takes it only
// at its restart, and restore removes the file it made.
func TestTuneIrqbalanceConfig(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	writeProc(t, root, 64, testProc{pid: 812, comm: "irqbalance", allowed: "0-63",
		cmdline: []string{"/usr/sbin/irqbalance", "--foreground"}, environ: []string{"LANG=C"}})
	if err := os.MkdirAll(filepath.Join(root, "etc/default"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/debian_version"), []byte("12.8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeFiles(t, root)
	doc, stderr, code := tuneDoc(t, "--root", root)
	if code != 0 {
		t.Fatalf("tune: exit %d\n%s", code, stderr)
	}
	b := doc.Changes.Irqbalance
	if b == nil || b.Way != tune.IrqbalanceWayConfig || b.Where != "/etc/default/irqbalance" || b.Result != tune.ResultChanged {
		t.Fatalf("irqbalance ban %+v, want the config way in /etc/default/irqbalance, changed", b)
	}
	cfg := readFile(t, filepath.Join(root, "etc/default/irqbalance"))
	if !strings.Contains(cfg, "--banirq=284") || !strings.Contains(cfg, "--banirq=299") {
		t.Errorf("/etc/default/irqbalance bans not eth0's IRQs:\n%s", cfg)
	}
	var restart bool
	for _, c := range doc.Cannot {
		if c.Check == audit.CheckIrqbalance && strings.Contains(c.Change, "systemctl restart irqbalance") {
			restart = true
		}
	}
	if !restart {
		t.Errorf("the tune does not say the running irqbalance needs a restart: %+v", doc.Cannot)
	}
	checkTuneOutcome(t, doc, audit.SeverityWarning)
	if _, stderr, code := runCLI(t, "restore", "--root", root); code != 0 {
		t.Fatalf("restore: exit %d\n%s", code, stderr)
	}
	sameFiles(t, "after restore", before, treeFiles(t, root))
}

// TestTuneRestoreSettingFails: a restore whose write of a saved setting
// fails names it, exits 1, keeps the state file, and still writes every
// other value back; a second restore then finishes the job.
func TestTuneRestoreSettingFails(t *testing.T) {
	root := hosttest.Copy(t, "nps2")
	before := treeFiles(t, root)
	if _, stderr, code := runCLI(t, "tune", "--root", root, "--fail-on", "info"); code != 0 {
		t.Fatalf("tune: exit %d\n%s", code, stderr)
	}
	s := hostSys()
	s.writer = &failNth{at: 1} // the settings go back first: the newest governor
	_, stderr, code := runCLISys(t, s, "restore", "--root", root)
	if code != 1 || !strings.Contains(stderr, "failed: CPU 15 scaling_governor") {
		t.Fatalf("restore with a failed setting: exit %d\n%s", code, stderr)
	}
	if got := readFile(t, filepath.Join(root, "sys/devices/system/cpu/cpu14/cpufreq/scaling_governor")); got != "schedutil\n" {
		t.Errorf("CPU 14's governor %q: the other settings are still restored", got)
	}
	if _, stderr, code := runCLI(t, "restore", "--root", root); code != 0 {
		t.Fatalf("second restore: exit %d\n%s", code, stderr)
	}
	sameFiles(t, "after the second restore", before, treeFiles(t, root))
}
