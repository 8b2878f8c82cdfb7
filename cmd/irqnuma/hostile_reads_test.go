package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestHostileSnapshotEmptyEntries: a snapshot of a million empty files
// (issue 27) is refused, naming the bound, before a single one is made,
// so the refusal costs what reading the headers up to the bound does,
// not a minute and a million inodes.
func TestHostileSnapshotEmptyEntries(t *testing.T) {
	t.Parallel()
	bin := hostileBinary(t)
	file := filepath.Join(t.TempDir(), "empty.tar.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	zw, _ := gzip.NewWriterLevel(bw, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "proc/", Typeflag: tar.TypeDir, Mode: 0o755})
	for i := range 1_000_000 {
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("proc/d%d/e%d", i/1000, i), Typeflag: tar.TypeReg, Mode: 0o444}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []interface{ Close() error }{tw, zw} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	args := []string{"--root", file, "topology"}
	r := runBin(t, bin, args...)
	checkBounds(t, args, r)
	t.Logf("%v: %v of CPU, %d MB", args, r.cpu, r.maxRSS>>20)
	if r.code == 0 || !strings.Contains(r.stderr, "more than 262144 entries") {
		t.Errorf("%v: exit %d, %q; want an error saying the entries are too many", args, r.code, r.stderr)
	}
}

// TestHostileStaleSnapshotFolder: the folder a killed --root FILE.tar.gz
// left behind (200,000 files) costs the next command no more than a
// rename and a bounded share of the unlinking: before, the next command
// removed all of it first (issue 27: 22 s for a million). Not parallel:
// it sets TMPDIR for the runs.
func TestHostileStaleSnapshotFolder(t *testing.T) {
	bin := hostileBinary(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	snap := filepath.Join(t.TempDir(), "seed.tar.gz")
	if r := runBin(t, bin, "--root", hosttest.Root("seed"), "snapshot", "-o", snap); r.code != 0 {
		t.Fatalf("snapshot: exit %d: %s", r.code, r.stderr)
	}
	args := []string{"--root", snap, "topology"}
	base := runBin(t, bin, args...)
	checkBounds(t, args, base)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(tmp, fmt.Sprintf("irqnuma-snapshot-%d-1", dead.Process.Pid))
	for i := range 200 {
		d := filepath.Join(left, "proc", strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range 1000 {
			if err := os.WriteFile(filepath.Join(d, strconv.Itoa(j)), nil, 0o444); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := runBin(t, bin, args...)
	checkBounds(t, args, r)
	t.Logf("%v: %v of CPU, %v without leftovers; %v, %v", args, r.cpu, base.cpu, r.wall, base.wall)
	if r.code != 0 {
		t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
	}
	if extra := r.cpu - base.cpu; extra > 500*time.Millisecond {
		t.Errorf("%v took %v more CPU with 200,000 files left by a killed run", args, extra)
	}
	if _, err := os.Lstat(left); err == nil {
		t.Errorf("%s still under its own name after a run", left)
	}
	ents, _ := os.ReadDir(tmp)
	if len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "irqnuma-snapshot-stale-") {
		t.Errorf("TMPDIR holds %v after a run, want the leftovers moved aside", ents)
	}
}

// TestHostileWatchManyRows: watch on a /proc/interrupts of 200,000 rows
// (issue 27: 540-670 MB) keeps what its samples need, the NIC rows'
// counts and a compact shape of the rest, not every row's counts and
// strings, so it stays within the memory bound.
func TestHostileWatchManyRows(t *testing.T) {
	t.Parallel()
	bin := hostileBinary(t)
	root := hosttest.Copy(t, "seed")
	old := readTree(t, root, "proc/interrupts")
	i := strings.Index(old, " NMI:")
	if i < 0 {
		t.Fatal("seed's /proc/interrupts has no NMI row")
	}
	zeros := strings.Repeat(" 0", 64)
	var b strings.Builder
	b.WriteString(old[:i])
	for n := range 200_000 {
		fmt.Fprintf(&b, "%d:%s PCI-MSI %d-edge dev%d\n", 100_000+n, zeros, n, n)
	}
	b.WriteString(old[i:])
	put(t, root, "proc/interrupts", b.String())
	args := []string{"--root", root, "watch", "--count", "3", "--interval", "10ms", "-o", "json"}
	r := runBin(t, bin, args...)
	checkBounds(t, args, r)
	t.Logf("%v: %v of CPU, %d MB", args[2:], r.cpu, r.maxRSS>>20)
	if r.code != 0 {
		t.Errorf("%v: exit %d: %s", args, r.code, clipOut(r.stderr))
	}
}

// TestHostileDeviceNode: a device node as a tree's proc/interrupts
// (/dev/zero's numbers) is refused at open, naming it: before, it was
// read to the size bound (652 MB) before "file too large" (issue 27).
func TestHostileDeviceNode(t *testing.T) {
	t.Parallel()
	bin := hostileBinary(t)
	if os.Geteuid() != 0 {
		t.Skip("mknod of a character device needs root")
	}
	root := hosttest.Copy(t, "seed")
	p := filepath.Join(root, "proc/interrupts")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mknod(p, unix.S_IFCHR|0o444, int(unix.Mkdev(1, 5))); err != nil {
		t.Fatalf("mknod: %v", err)
	}
	for _, args := range readCommands(root) {
		r := runBin(t, bin, args...)
		checkBounds(t, args, r)
		if slicesContain(args, "topology") || slicesContain(args, "mask") {
			continue // read no /proc/interrupts on a tree with /sys/class/net
		}
		if r.code == 0 || !strings.Contains(r.stderr, p) || !strings.Contains(r.stderr, "character device") {
			t.Errorf("%v: exit %d, %q; want an error naming %s as a character device", args[2:], r.code, r.stderr, p)
		}
	}
}
