package kfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tree makes a small host tree with the links a capture may hold.
func tree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	mk := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, rel string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	mk("proc/cmdline", "in the tree\n")
	mk("sys/devices/pci0000:00/0000:00:03.0/numa_node", "1\n")
	link("../../devices/pci0000:00/0000:00:03.0", "sys/bus/pci/0000:00:03.0")
	link("/proc/cmdline", "proc/abs")                 // absolute: from the tree's top
	link("../../../../../../etc/hostname", "proc/up") // climbs: stops at the top
	link("/etc/hostname", "proc/out")                 // absolute, absent in the tree
	return root
}

func bothWays(t *testing.T, fn func(t *testing.T)) {
	t.Run("openat2", fn)
	t.Run("without openat2", func(t *testing.T) {
		old := openat2
		openat2 = func(int, string, *unix.OpenHow) (int, error) { return -1, unix.ENOSYS }
		noOpenat2.Lock()
		noOpenat2.set = false
		noOpenat2.Unlock()
		t.Cleanup(func() {
			openat2 = old
			noOpenat2.Lock()
			noOpenat2.set = false
			noOpenat2.Unlock()
		})
		fn(t)
	})
}

// TestFSLinksStayInside: an absolute link is taken from the tree's top, a
// link that climbs stops there, and nothing of the machine reading the
// tree is ever read through it.
func TestFSLinksStayInside(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		f := mustOpen(t, tree(t))
		if s, err := f.String(f.Path("proc/abs")); err != nil || s != "in the tree" {
			t.Errorf("absolute link: %q, %v; want the tree's own proc/cmdline", s, err)
		}
		if s, err := f.String(f.Path("proc/out")); err == nil {
			t.Errorf("link to /etc/hostname read %q from outside the tree", s)
		}
		if s, err := f.String(f.Path("proc/up")); err == nil {
			t.Errorf("climbing link read %q from outside the tree", s)
		}
		if n, err := f.Int(f.Path("sys/bus/pci/0000:00:03.0/numa_node")); err != nil || n != 1 {
			t.Errorf("relative link: %d, %v", n, err)
		}
		real, err := f.Resolve(f.Path("sys/bus/pci/0000:00:03.0"))
		if err != nil || real != "sys/devices/pci0000:00/0000:00:03.0" {
			t.Errorf("Resolve = %q, %v", real, err)
		}
		if target, err := f.Readlink(f.Path("proc/abs")); err != nil || target != "/proc/cmdline" {
			t.Errorf("Readlink = %q, %v", target, err)
		}
		fi, err := f.Lstat(f.Path("proc/abs"))
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("Lstat(proc/abs) = %v, %v; want a link", fi, err)
		}
		fi, err = f.Stat(f.Path("proc/abs"))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o444 {
			t.Errorf("Stat(proc/abs) = %v, %v; want the regular 0444 file", fi, err)
		}
		ents, err := f.ReadDir(f.Path("proc"))
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if err != nil || strings.Join(names, " ") != "abs cmdline out up" {
			t.Errorf("ReadDir(proc) = %q, %v", names, err)
		}
		if _, err := f.String(f.Path("proc/missing")); !IsNotExist(err) || !strings.Contains(err.Error(), filepath.Join(f.Root(), "proc/missing")) {
			t.Errorf("missing file: %v; want not-exist naming it", err)
		}
	})
}

// TestFSNeverBlocks: a FIFO planted in a tree, with or without a writer,
// and an endless device are answered at once, never waited on.
func TestFSNeverBlocks(t *testing.T) {
	root := tree(t)
	fifo := filepath.Join(root, "proc/interrupts")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(root, "proc/stat")); err != nil {
		t.Fatal(err)
	}
	f := mustOpen(t, root)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if b, err := f.Read(f.Path("proc/interrupts")); err == nil && len(b) != 0 {
			t.Errorf("FIFO read %q", b)
		}
		// Held open for writing, the FIFO is refused as a FIFO, not read.
		w, err := os.OpenFile(fifo, os.O_RDWR, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer w.Close()
		if _, err := f.Read(f.Path("proc/interrupts")); !errors.Is(err, ErrSpecial) {
			t.Errorf("FIFO with a writer: %v, want ErrSpecial", err)
		}
		// /dev/zero is not in the tree: the link is taken from its top.
		if _, err := f.Read(f.Path("proc/stat")); err == nil {
			t.Error("proc/stat -> /dev/zero read from outside the tree")
		}
		if _, err := f.ReadDir(f.Path("proc/interrupts")); err == nil {
			t.Error("ReadDir of a FIFO: no error")
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a read blocked on a FIFO")
	}
}

// TestFSLive: the live root reads absolute paths as the kernel walks them.
func TestFSLive(t *testing.T) {
	f := mustOpen(t, "/")
	if !f.Live() {
		t.Fatal("Open(/) is not live")
	}
	p := filepath.Join(t.TempDir(), "attr")
	os.WriteFile(p, []byte("7\n"), 0o444)
	if n, err := f.Int(p); err != nil || n != 7 {
		t.Errorf("Int(%s) = %d, %v", p, n, err)
	}
}

// TestFSLiveByOtherName: a root naming the folder / is (a link to it,
// absolute or relative, a chain of links, /proc/self/root, a spelling
// that climbs there) opens as the live root, "/", exactly as Open("/")
// does: its files are the running kernel's, so a caller refusing writes
// without root or choosing the kernel's own interfaces treats it so. A
// tree, a link to a tree and a missing folder stay trees, as given.
func TestFSLiveByOtherName(t *testing.T) {
	dir, tr := t.TempDir(), tree(t)
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	slash := link("slash", "/")
	up := link("up", strings.Repeat("../", strings.Count(dir, "/")+2))
	tests := []struct {
		give string
		want bool
	}{
		{"/", true},
		{slash, true},
		{slash + "/", true},
		{up, true},
		{link("chain", slash), true},
		{"/proc/self/root", true},
		{dir + "/../../../../../../../..", true},
		{tr, false},
		{link("tree", tr), false},
		{filepath.Join(dir, "nope"), false},
	}
	for _, tt := range tests {
		f := mustOpen(t, tt.give)
		if f.Live() != tt.want {
			t.Errorf("Open(%s).Live() = %v, want %v", tt.give, f.Live(), tt.want)
			continue
		}
		if !tt.want {
			if f.Root() != tt.give {
				t.Errorf("Open(%s).Root() = %s, want it as given", tt.give, f.Root())
			}
			continue
		}
		if f.Root() != "/" || f.Path("proc/self/stat") != "/proc/self/stat" {
			t.Errorf("Open(%s): root %s, Path(proc/self/stat) %s; want the live root, /", tt.give, f.Root(), f.Path("proc/self/stat"))
		}
		// Read as the live root is: an absolute path anywhere, as the
		// kernel walks it.
		p := filepath.Join(t.TempDir(), "attr")
		if err := os.WriteFile(p, []byte("7\n"), 0o444); err != nil {
			t.Fatal(err)
		}
		if n, err := f.Int(p); err != nil || n != 7 {
			t.Errorf("Open(%s).Int(%s) = %d, %v", tt.give, p, n, err)
		}
	}
}

// TestFSLiveBindMount: a bind mount of / is the live root too, though no
// link leads there: only the folder's identity (device and inode) says
// so. The mount is made in a mount namespace of the test's own thread,
// which ends with it, so the machine's mounts never change.
func TestFSLiveBindMount(t *testing.T) {
	dir := t.TempDir()
	type result struct {
		live     bool
		root     string
		skip     error
		resolved string
	}
	done := make(chan result)
	go func() {
		// Never unlocked: the thread, in its own mount namespace, exits
		// with this goroutine.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			done <- result{skip: fmt.Errorf("unshare(CLONE_NEWNS): %w", err)}
			return
		}
		// Private first, so the bind mount does not propagate to the
		// machine's namespace.
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			done <- result{skip: fmt.Errorf("make / private: %w", err)}
			return
		}
		if err := unix.Mount("/", dir, "", unix.MS_BIND, ""); err != nil {
			done <- result{skip: fmt.Errorf("bind / on %s: %w", dir, err)}
			return
		}
		resolved, err := filepath.EvalSymlinks(dir)
		if err != nil {
			t.Error(err)
		}
		f, err := Open(dir)
		if err != nil {
			t.Error(err)
		}
		done <- result{live: f.Live(), root: f.Root(), resolved: resolved}
	}()
	r := <-done
	if r.skip != nil {
		t.Skipf("a bind mount needs CAP_SYS_ADMIN: %v", r.skip)
	}
	if r.resolved != dir {
		t.Fatalf("%s resolves to %s: not a bind mount alone", dir, r.resolved)
	}
	if !r.live || r.root != "/" {
		t.Errorf("Open(%s) with / bound there: live %v, root %s; want the live root, /", dir, r.live, r.root)
	}
}

// TestFSRootMissing: every read of a missing root says which root.
func TestFSRootMissing(t *testing.T) {
	f := mustOpen(t, filepath.Join(t.TempDir(), "nope"))
	_, err := f.String(f.Path("proc/cmdline"))
	if err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("read under a missing root: %v", err)
	}
}

// TestFSOpenat2Again: openat2 answers EAGAIN when a rename elsewhere races
// its resolution of ".."; a read tries again, and past a few tries
// resolves the links itself, this once, keeping openat2 for later reads.
func TestFSOpenat2Again(t *testing.T) {
	root := tree(t)
	old := openat2
	t.Cleanup(func() { openat2 = old })
	for _, failures := range []int{2, 1000} {
		n := 0
		openat2 = func(dirfd int, path string, how *unix.OpenHow) (int, error) {
			if n++; n <= failures {
				return -1, unix.EAGAIN
			}
			return old(dirfd, path, how)
		}
		f := mustOpen(t, root)
		if s, err := f.String(f.Path("proc/abs")); err != nil || s != "in the tree" {
			t.Errorf("%d EAGAINs: %q, %v; want the tree's proc/cmdline", failures, s, err)
		}
		noOpenat2.Lock()
		set := noOpenat2.set
		noOpenat2.Unlock()
		if set {
			t.Errorf("%d EAGAINs: openat2 given up for good", failures)
		}
	}
}

// TestFSRootSpellings: a root is a folder however it is spelt. "." (the
// capture the user has cd'ed into) was refused with "path is not under
// the root", since Path(".", "sys/...") is "sys/..." and holds no "./".
func TestFSRootSpellings(t *testing.T) {
	base := t.TempDir()
	host := filepath.Join(base, "x", "host")
	if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tree(t), host); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(base, "x", "y"), 0o755)
	tests := []struct {
		dir  string // the working folder, under base
		give string // the root as spelt there
	}{
		{"x/host", "."},
		{"x/host", "./"},
		{"x/host", "./."},
		{"x/host/proc", ".."},
		{"x/host/proc", "../"},
		{"x/y", "../host"},
		{"x/y", "../host/"},
		{"x", "y/../host"},
		{"x", "host//"},
		{"x", "./host"},
		{"", host + "/"},
		{"", host + "/."},
	}
	bothWays(t, func(t *testing.T) {
		for _, tt := range tests {
			t.Chdir(filepath.Join(base, tt.dir))
			f := mustOpen(t, tt.give)
			if s, err := f.String(f.Path("proc/cmdline")); err != nil || s != "in the tree" {
				t.Errorf("in %s, Open(%q): proc/cmdline = %q, %v; want %q", tt.dir, tt.give, s, err, "in the tree")
			}
			if s, err := f.String(f.Path("proc/abs")); err != nil || s != "in the tree" {
				t.Errorf("in %s, Open(%q): proc/abs = %q, %v; want %q", tt.dir, tt.give, s, err, "in the tree")
			}
			if n, err := f.Int(f.Path("sys/bus/pci/0000:00:03.0/numa_node")); err != nil || n != 1 {
				t.Errorf("in %s, Open(%q): numa_node through a link = %d, %v; want 1", tt.dir, tt.give, n, err)
			}
			if ents, err := f.ReadDir(f.Path()); err != nil || len(ents) != 2 {
				t.Errorf("in %s, Open(%q): ReadDir(root) = %d entries, %v; want proc and sys", tt.dir, tt.give, len(ents), err)
			}
			if r, err := f.Resolve(f.Path("sys/bus/pci/0000:00:03.0")); err != nil || r != "sys/devices/pci0000:00/0000:00:03.0" {
				t.Errorf("in %s, Open(%q): Resolve = %q, %v", tt.dir, tt.give, r, err)
			}
		}
	})
	// Under a root of ".", what climbs out or is absolute is not under it.
	t.Chdir(host)
	f := mustOpen(t, ".")
	for _, p := range []string{"..", "../x/proc/cmdline", "/proc/cmdline"} {
		if _, err := f.rel(p); !errors.Is(err, errNotUnder) {
			t.Errorf("Open(\".\").rel(%q): %v, want %v", p, err, errNotUnder)
		}
	}
	// The root's absolute path names it too (a state file made absolute).
	if r, err := f.rel(filepath.Join(host, "proc/cmdline")); err != nil || r != "proc/cmdline" {
		t.Errorf("Open(\".\").rel(%s) = %q, %v; want proc/cmdline", filepath.Join(host, "proc/cmdline"), r, err)
	}
}

// mustOpen opens root and closes it when the test ends.
func mustOpen(t testing.TB, root string) FS {
	t.Helper()
	f, err := Open(root)
	if err != nil {
		t.Fatalf("Open(%s): %v", root, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestFSZeroAndClosed: the zero FS and a closed one read nothing, not
// even the live machine's files.
func TestFSZeroAndClosed(t *testing.T) {
	p := filepath.Join(t.TempDir(), "attr")
	os.WriteFile(p, []byte("7\n"), 0o444)
	if _, err := (FS{}).Read(p); !errors.Is(err, errNoRoot) {
		t.Errorf("zero FS: Read(%s) = %v, want %v", p, err, errNoRoot)
	}
	root := tree(t)
	f, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.String(f.Path("proc/cmdline")); err != nil {
		t.Fatalf("before Close: %v", err)
	}
	f.Close()
	if _, err := f.String(f.Path("proc/cmdline")); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("after Close: %v, want %v", err, fs.ErrClosed)
	}
}

// TestCheckRoot: a folder holding proc/ or sys/ is a root; one holding
// neither is not, and the error names the folders in it that are.
func TestCheckRoot(t *testing.T) {
	if err := CheckRoot(tree(t)); err != nil {
		t.Errorf("CheckRoot(a tree) = %v", err)
	}
	for _, only := range []string{"proc", "sys"} {
		dir := t.TempDir()
		os.Mkdir(filepath.Join(dir, only), 0o755)
		if err := CheckRoot(dir); err != nil {
			t.Errorf("CheckRoot(a folder holding %s/ only) = %v", only, err)
		}
	}
	empty := t.TempDir()
	if err := CheckRoot(empty); !errors.Is(err, ErrNotHost) || !strings.HasPrefix(err.Error(), "root "+empty+": holds neither proc/ nor sys/ (a root is") {
		t.Errorf("CheckRoot(empty) = %v, want %v naming the folder", err, ErrNotHost)
	}
	if err := CheckRoot(filepath.Join(empty, "nope")); err != nil {
		t.Errorf("CheckRoot(a missing folder) = %v, want nil: the readers name it", err)
	}
	up := t.TempDir()
	if err := os.Rename(tree(t), filepath.Join(up, "host")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(up, "notes"), nil, 0o644)
	if err := CheckRoot(up); !errors.Is(err, ErrNotHost) || !strings.Contains(err.Error(), "; "+filepath.Join(up, "host")+" does (a root is") {
		t.Errorf("CheckRoot(one level above a tree) = %v, want it to name %s", err, filepath.Join(up, "host"))
	}
}
