package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// These tests plant links in a host tree where irqnuma writes (its lock,
// its state folder and files, the affinity files) and prove that no
// write leaves the tree: the file outside keeps its bytes and its inode,
// and nothing new appears beside it.

// outsideDir is a folder beside the tree holding one file, victim.
type outsideDir struct {
	dir, file string
	ino       uint64
}

func newOutsideDir(t *testing.T) outsideDir {
	t.Helper()
	o := outsideDir{dir: t.TempDir()}
	o.file = filepath.Join(o.dir, "victim")
	if err := os.WriteFile(o.file, []byte("root:secret:19000::::::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.ino = fileIno(t, o.file)
	return o
}

func fileIno(t *testing.T, p string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// check fails unless the outside folder holds only victim, with its
// bytes and inode.
func (o outsideDir) check(t *testing.T, what string) {
	t.Helper()
	ents, err := os.ReadDir(o.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !cmp.Equal(names, []string{"victim"}) {
		t.Errorf("%s: the outside folder holds %v, want only victim", what, names)
	}
	if b, err := os.ReadFile(o.file); err != nil || string(b) != "root:secret:19000::::::\n" {
		t.Errorf("%s: the outside file holds %q, %v; want it untouched", what, b, err)
	}
	if ino := fileIno(t, o.file); ino != o.ino {
		t.Errorf("%s: the outside file was replaced (inode %d, was %d)", what, ino, o.ino)
	}
}

// replaceWithLink puts a link to target at root/rel, removing what was there.
func replaceWithLink(t *testing.T, root, rel, target string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// pinStateName is the state file a pin at pinTime makes.
const pinStateName = "var/lib/irqnuma/state-20261130T010203.000000000Z.json"

// plants are the links the tests plant, each given the tree and the
// outside folder.
var plants = []struct {
	name  string
	plant func(t *testing.T, root string, o outsideDir)
}{
	{"lock links to an outside file", func(t *testing.T, root string, o outsideDir) {
		replaceWithLink(t, root, "var/lib/irqnuma/lock", o.file)
	}},
	{"var links to an outside folder", func(t *testing.T, root string, o outsideDir) {
		replaceWithLink(t, root, "var", o.dir)
	}},
	{"var climbs to an outside folder", func(t *testing.T, root string, o outsideDir) {
		replaceWithLink(t, root, "var", strings.Repeat("../", 20)+strings.TrimPrefix(o.dir, "/"))
	}},
	{"state folder links to an outside folder", func(t *testing.T, root string, o outsideDir) {
		replaceWithLink(t, root, "var/lib/irqnuma", o.dir)
	}},
	{"state file links to an outside file", func(t *testing.T, root string, o outsideDir) {
		replaceWithLink(t, root, pinStateName, o.file)
	}},
	{"affinity file links to an outside file", func(t *testing.T, root string, o outsideDir) {
		replaceWithLink(t, root, "proc/irq/284/smp_affinity_list", o.file)
	}},
	{"xps file links to an outside file", func(t *testing.T, root string, o outsideDir) {
		replaceWithLink(t, root, "sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/net/eth0/queues/tx-0/xps_cpus", o.file)
	}},
}

// TestHostileWritesPin: irq pin on a tree with a planted link writes
// nothing outside it.
func TestHostileWritesPin(t *testing.T) {
	t.Parallel()
	for _, p := range plants {
		root, o := hosttest.Copy(t, "seed"), newOutsideDir(t)
		p.plant(t, root, o)
		_, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", root, "irq", "pin", "eth0", "--xps")
		o.check(t, "pin, "+p.name)
		if strings.Contains(stderr, "secret") {
			t.Errorf("pin, %s: stderr quotes the outside file: %s", p.name, stderr)
		}
		t.Logf("pin, %s: exit %d: %s", p.name, code, stderr)
	}
}

// TestHostileWritesRestore: irq restore of a pin, once a link is planted,
// writes nothing outside the tree, whether it finds the state file or is
// given its path.
func TestHostileWritesRestore(t *testing.T) {
	t.Parallel()
	for _, p := range plants {
		root, o := hosttest.Copy(t, "seed"), newOutsideDir(t)
		if _, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", root, "irq", "pin", "eth0", "--xps"); code != 0 {
			t.Fatalf("pin: exit %d: %s", code, stderr)
		}
		saved, err := os.ReadFile(filepath.Join(root, pinStateName))
		if err != nil {
			t.Fatal(err)
		}
		p.plant(t, root, o)
		for _, args := range [][]string{{"irq", "restore"}, {"irq", "restore", filepath.Join(root, pinStateName)}} {
			_, stderr, code := runCLISys(t, pinSys(nil, 0), append([]string{"--root", root}, args...)...)
			o.check(t, strings.Join(args, " ")+", "+p.name)
			if strings.Contains(stderr, "secret") {
				t.Errorf("%v, %s: stderr quotes the outside file: %s", args, p.name, stderr)
			}
			t.Logf("%v, %s: exit %d: %s", args, p.name, code, stderr)
		}
		// The state file's own name links out: restoring through the
		// real state, put back beside it, still writes nothing outside.
		if p.name == "state file links to an outside file" {
			real := filepath.Join(root, "var/lib/irqnuma/real.json")
			if err := os.WriteFile(real, saved, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", root, "irq", "restore", real); code != 0 {
				t.Errorf("restore of the real state: exit %d: %s", code, stderr)
			}
			o.check(t, "restore of the real state")
		}
	}
}

// TestHostileWritesBench: bench takes the lock before anything else;
// on a tree it refuses, and writes nothing outside it.
func TestHostileWritesBench(t *testing.T) {
	t.Parallel()
	for _, p := range plants {
		root, o := hosttest.Copy(t, "seed"), newOutsideDir(t)
		p.plant(t, root, o)
		_, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", root, "bench", "--", "iperf3", "-c", "127.0.0.1", "-J")
		if code == 0 {
			t.Errorf("bench on a tree, %s: exit 0", p.name)
		}
		o.check(t, "bench, "+p.name)
		t.Logf("bench, %s: exit %d: %s", p.name, code, stderr)
	}
}

// TestRestoreThroughRealPath: a pin through a link to the tree restores
// through the tree's real path, and the other way round.
func TestRestoreThroughRealPath(t *testing.T) {
	t.Parallel()
	for _, pinViaLink := range []bool{true, false} {
		real := hosttest.Copy(t, "seed")
		link := filepath.Join(t.TempDir(), "tree")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		before := hosttest.Files(t, real)
		pinRoot, restoreRoot := link, real
		if !pinViaLink {
			pinRoot, restoreRoot = real, link
		}
		if _, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", pinRoot, "irq", "pin", "eth0"); code != 0 {
			t.Fatalf("pin via %s: exit %d: %s", pinRoot, code, stderr)
		}
		if _, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", restoreRoot, "irq", "restore"); code != 0 {
			t.Errorf("pin via %s, restore via %s: exit %d: %s", pinRoot, restoreRoot, code, stderr)
		}
		if diff := cmp.Diff(before, hosttest.Files(t, real)); diff != "" {
			t.Errorf("pin via %s, restore via %s: files (-before +after):\n%s", pinRoot, restoreRoot, diff)
		}
	}
	// A different tree's state is still refused.
	a, b := hosttest.Copy(t, "seed"), hosttest.Copy(t, "seed")
	stdout, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", a, "-o", "json", "irq", "pin", "eth0")
	if code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", b, "irq", "restore", decodePin(t, stdout).StateFile); code != 1 || !strings.Contains(stderr, "saved for root") {
		t.Errorf("restore of another tree's state: exit %d: %s", code, stderr)
	}
}

// TestRestoreQuotesNoContent: a file that is no state file is refused
// without a byte of it in the message.
func TestRestoreQuotesNoContent(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	for name, content := range map[string]string{
		"shadow":        "root:$6$hunter2:19000:0:99999:7:::\n",
		"json":          `{"password": "hunter2"}`,
		"typed":         `{"version": "hunter2"}`,
		"cut short":     `{"version": 1, "root": "hunter2`,
		"trailing data": `{"version": 1, "root": "/", "entries": []} hunter2`,
	} {
		p := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", root, "irq", "restore", p)
		if code != 1 || !strings.Contains(stderr, "invalid state file") {
			t.Errorf("%s: exit %d: %s", name, code, stderr)
		}
		for _, secret := range []string{"hunter2", "'r'", "password", `"r"`} {
			if strings.Contains(stderr, secret) {
				t.Errorf("%s: stderr quotes the file (%s): %s", name, secret, stderr)
			}
		}
	}
}

// TestPinTreeRefusalRollsBack: EPERM or EIO from a tree's file is a
// failed write, rolled back with the rest; only the kernel's own answer
// marks an IRQ managed.
func TestPinTreeRefusalRollsBack(t *testing.T) {
	t.Parallel()
	for _, errno := range []syscall.Errno{syscall.EPERM, syscall.EIO} {
		root := hosttest.Copy(t, "seed")
		before := hosttest.Files(t, root)
		stdout, stderr, code := runCLISys(t, pinSys(&failAt{at: 6, err: errno}, 0), "--root", root, "-o", "json", "irq", "pin", "eth0")
		if code != 1 || !strings.Contains(stderr, "failed: IRQ 290") || !strings.Contains(stderr, "every change was rolled back") {
			t.Errorf("%v: exit %d: %s", errno, code, stderr)
		}
		if strings.Contains(stderr, "managed") && !strings.Contains(stderr, "not a managed IRQ") {
			t.Errorf("%v: stderr calls it managed: %s", errno, stderr)
		}
		if got := decodePin(t, stdout).results()[7]; got != "290 change failed" {
			t.Errorf("%v: IRQ 290: %s", errno, got)
		}
		if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
			t.Errorf("%v: files after the rollback (-before +after):\n%s", errno, diff)
		}
	}
}

// TestPinRollbackExactBytes: a rollback on a tree writes back the bytes
// it read, in the same file: "0-1" without a newline stays so, and a
// hard link to it stays one.
func TestPinRollbackExactBytes(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	p := filepath.Join(root, "proc/irq/284/smp_affinity_list")
	if err := os.WriteFile(p, []byte("0-1"), 0o644); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(root, "proc/irq/284/hard")
	if err := os.Link(p, hard); err != nil {
		t.Fatal(err)
	}
	ino := fileIno(t, p)
	before := hosttest.Files(t, root)
	if _, stderr, code := runCLISys(t, pinSys(&failAt{at: 4, err: syscall.EINVAL}, 0), "--root", root, "irq", "pin", "eth0"); code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("files after the rollback (-before +after):\n%s", diff)
	}
	if fileIno(t, p) != ino || fileIno(t, hard) != ino {
		t.Errorf("the rollback replaced the file: inodes %d and %d, was %d", fileIno(t, p), fileIno(t, hard), ino)
	}
}

// TestPinKilledLeavesNoTemp: irq pin killed (SIGKILL) at any moment
// leaves no temporary file in the tree, and one an older run left in
// the state folder is removed by the next run. The kills come at the
// moments the writes begin: once the lock is taken (the state file is
// being written), and once the state file is in place (the affinities
// are being written); a pin that ends before its kill fails the test.
func TestPinKilledLeavesNoTemp(t *testing.T) {
	t.Parallel()
	bin := cliBinary(t)
	nics := bigHostNICs()
	moments := []struct {
		name string
		file func(name string) bool // a file in the state folder that marks it
	}{
		{"once the lock is taken", func(n string) bool { return n == "lock" }},
		{"once the state file is in place", func(n string) bool {
			return strings.HasPrefix(n, "state-") && strings.HasSuffix(n, ".json")
		}},
	}
	for _, m := range moments {
		root := hosttest.Synthetic(t, bigHost)
		cmd := exec.Command(bin, append([]string{"--root", root, "irq", "pin"}, nics...)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if !waitStateFile(filepath.Join(root, "var/lib/irqnuma"), m.file, done) {
			t.Errorf("killed %s: the pin ended first (%v), so nothing was killed midway", m.name, cmd.ProcessState)
			continue
		}
		cmd.Process.Kill()
		<-done
		if !cmd.ProcessState.Sys().(syscall.WaitStatus).Signaled() {
			t.Errorf("killed %s: the pin ended first (%v), so nothing was killed midway", m.name, cmd.ProcessState)
		}
		if tmp := tempFiles(t, root); len(tmp) > 0 {
			t.Errorf("killed %s: temporary files left: %v", m.name, tmp)
		}
	}
	root := hosttest.Copy(t, "seed")
	left := filepath.Join(root, "var/lib/irqnuma/.state-20261129T000000.000000000Z.json.x1y2.tmp")
	if err := os.MkdirAll(filepath.Dir(left), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(left, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", root, "irq", "pin", "eth0"); code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	if tmp := tempFiles(t, root); len(tmp) > 0 {
		t.Errorf("the next pin left %v", tmp)
	}
}

// waitStateFile waits until the folder dir holds a file whose name
// match accepts, and reports true then, or false when the process done
// reports on ends first.
func waitStateFile(dir string, match func(name string) bool, done <-chan error) bool {
	for {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if match(e.Name()) {
				return true
			}
		}
		select {
		case <-done:
			return false
		default:
			time.Sleep(100 * time.Microsecond)
		}
	}
}

// tempFiles lists the files under root whose names end in .tmp.
func tempFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(d.Name(), ".tmp") {
			out = append(out, strings.TrimPrefix(p, root))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRestoreStateLinkedOut: a state file in the tree that links to a
// state file outside it is not followed out, whether the tree is named
// by its real path or through a link and the file by the other.
func TestRestoreStateLinkedOut(t *testing.T) {
	t.Parallel()
	for _, viaLink := range []bool{false, true} {
		real := hosttest.Copy(t, "seed")
		root := real
		if viaLink {
			root = filepath.Join(t.TempDir(), "tree")
			if err := os.Symlink(real, root); err != nil {
				t.Fatal(err)
			}
		}
		// A valid state for this tree, outside it: followed, it would
		// move IRQ 284 to CPU 0.
		outside := filepath.Join(t.TempDir(), "state.json")
		state := `{"version": 1, "created": "2026-11-30T01:02:03Z", "root": "` + real + `",
			"entries": [{"path": "/proc/irq/284/smp_affinity_list", "value": "0"}]}`
		if err := os.WriteFile(outside, []byte(state), 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(real, "var/lib/irqnuma/state-20261130T010203.000000000Z.json")
		if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
		before := hosttest.Files(t, real)
		_, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", root, "irq", "restore", link)
		if code == 0 {
			t.Errorf("via link %v: restore through a link out of the tree: exit 0", viaLink)
		}
		if diff := cmp.Diff(before, hosttest.Files(t, real)); diff != "" {
			t.Errorf("via link %v: a state outside the tree was restored (-before +after):\n%s\nstderr: %s", viaLink, diff, stderr)
		}
	}
}
