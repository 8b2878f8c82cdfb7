// Package hosttest gives tests the host trees under testdata/hosts and
// synthetic host trees for benchmarks and scale tests.
//
// A host tree is a folder holding proc/ and sys/ in the kernel's exact
// formats, symlinks included, as readers find them under a --root. Root
// names a committed tree in place (git keeps no modes, so a read-only
// smp_affinity reads as writable there); Shared gives a copy with the
// modes a real host has, one per run, for tests that only read; Copy puts
// a private such copy in t.TempDir() for tests that write; Synthetic
// writes a large generated host; Live marks a test of the live host;
// Main runs a package's tests with TMPDIR on a tmpfs.
//
// The committed trees are generated: edit internal/hosttest/hostgen and run
// `go run ./internal/hosttest/gen` from the module root.
package hosttest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest/hostgen"
)

// Names lists the committed host trees.
func Names() []string { return append([]string(nil), hostgen.Names...) }

// Root returns the absolute path of testdata/hosts/<name> in the module,
// wherever the calling test runs. It does not check that the tree exists.
func Root(name string) string { return Path("testdata", "hosts", name) }

// Path returns the absolute path of elem, joined, below the module's
// root, wherever the calling test runs: what a test names outside its
// own package's testdata (the golden files, another package's fixtures).
func Path(elem ...string) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("hosttest: cannot locate the module root")
	}
	// file is <module>/internal/testsupport/hosttest/hosttest.go.
	mod := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file))))
	return filepath.Join(append([]string{mod}, elem...)...)
}

// Open opens the host root at root (any folder: Root, Copy, Shared or
// one a test made) as the readers take it, and closes it when the test
// ends.
func Open(t testing.TB, root string) kfile.FS {
	t.Helper()
	fsys, err := kfile.Open(root)
	if err != nil {
		t.Fatalf("open root %s: %v", root, err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

// FS opens the committed tree name read-only (Shared) as Open does.
func FS(t testing.TB, name string) kfile.FS {
	t.Helper()
	return Open(t, Shared(t, name))
}

// Copy copies the committed tree name into t.TempDir() and returns the
// copy's root. Symlinks stay symlinks with their targets unchanged; files
// get the modes of a real host: those the tree's modes file lists, 0644 for
// proc/irq/*/smp_affinity{,_list} and 0444 for the rest.
func Copy(t testing.TB, name string) string {
	t.Helper()
	dst := t.TempDir()
	if err := copyTree(Root(name), dst); err != nil {
		t.Fatalf("hosttest.Copy(%q): %v", name, err)
	}
	return dst
}

// Overlay lays the files of the folder src over the tree root (a Copy),
// each written read-only as a host's pseudo-files are: a committed tree
// plus what one set of tests adds to it (cmd/irqnuma/testdata/flow's
// seed-steer: the seed host with recorded steering).
func Overlay(t testing.TB, root, src string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 { // a process's fd link, "socket:[N]"
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
				return err
			}
			return os.Symlink(target, dst)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o444)
	})
	if err != nil {
		t.Fatalf("hosttest.Overlay(%s): %v", src, err)
	}
}

// Shared returns a copy of the committed tree name with a real host's
// modes, as Copy makes, shared by every test that only reads it: made
// once per content of the tree (a SHA-256 of its names, modes, links and
// bytes) in TMPDIR/irqnuma-hosttrees-<uid>, and used by every test process
// of the run that shares the TMPDIR (make test's TESTTMP; under Main
// without it, each process has its own). Its folders are read-only; a
// test that writes uses Copy.
func Shared(t testing.TB, name string) string {
	t.Helper()
	v, _ := shared.LoadOrStore(name, &sharedTree{})
	st := v.(*sharedTree)
	st.once.Do(func() { st.dir, st.err = makeShared(name) })
	if st.err != nil {
		t.Fatalf("hosttest.Shared(%q): %v", name, st.err)
	}
	return st.dir
}

type sharedTree struct {
	once sync.Once
	dir  string
	err  error
}

var shared sync.Map // name -> *sharedTree

func makeShared(name string) (string, error) {
	src := Root(name)
	sum, err := treeDigest(src)
	if err != nil {
		return "", err
	}
	base := filepath.Join(os.TempDir(), fmt.Sprintf("irqnuma-hosttrees-%d", os.Getuid()))
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	dir := filepath.Join(base, name+"-"+sum[:16])
	root := filepath.Join(dir, "root")
	cleanShared(base, name, filepath.Base(dir))
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return root, nil
	}
	tmp, err := os.MkdirTemp(base, "copying-")
	if err != nil {
		return "", err
	}
	defer forceRemove(tmp) // a no-op once renamed
	if err := copyTree(src, filepath.Join(tmp, "root")); err != nil {
		return "", err
	}
	if err := readOnlyDirs(filepath.Join(tmp, "root")); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o444); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, ".complete")); serr != nil {
			return "", err // not another process's finished copy
		}
	}
	return root, nil
}

// cleanShared removes what earlier runs left in base that no run will
// use again: copies of an older content of the tree name, and unfinished
// copies of killed runs. Only entries untouched for ten minutes go, so a
// concurrent process's work is left alone.
func cleanShared(base, name, keep string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		if n == keep || !strings.HasPrefix(n, name+"-") && !strings.HasPrefix(n, "copying-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > 10*time.Minute {
			forceRemove(filepath.Join(base, n))
		}
	}
}

// treeDigest hashes what a copy of the tree at src holds.
func treeDigest(src string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		fmt.Fprintf(h, "%s\x00%v\x00", rel, d.Type())
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			io.WriteString(h, target)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		h.Write([]byte{0})
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// readOnlyDirs makes every folder under dir read-only, deepest first.
func readOnlyDirs(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return err
	})
	for i := len(dirs) - 1; i >= 0 && err == nil; i-- {
		err = os.Chmod(dirs[i], 0o555)
	}
	return err
}

// forceRemove removes dir even with read-only folders in it.
func forceRemove(dir string) {
	if _, err := os.Lstat(dir); err != nil {
		return
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	os.RemoveAll(dir)
}

// copyTree copies the committed tree at src into the folder dst (made if
// absent) with a real host's modes, from the tree as read once by this
// process (readTree): a run copies the same trees many times.
func copyTree(src, dst string) error {
	tree, err := readTree(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	// Make the folders and links in order, then write the files in
	// parallel: file creation dominates on slow disks.
	for _, e := range tree.dirsAndLinks {
		out := filepath.Join(dst, e.rel)
		if e.link {
			err = os.Symlink(e.target, out)
		} else {
			err = os.Mkdir(out, 0o755)
		}
		if err != nil {
			return err
		}
	}
	workers := min(runtime.GOMAXPROCS(0), 16)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(tree.files); i += workers {
				f := tree.files[i]
				if err := writeFile(filepath.Join(dst, f.rel), f.data, f.mode); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// A treeCopy is what copyTree writes for a committed tree: its folders
// and links in walk order, and its files with their bytes and the modes
// a real host gives them.
type treeCopy struct {
	dirsAndLinks []treeEntry
	files        []treeEntry
}

type treeEntry struct {
	rel    string
	link   bool   // a symbolic link to target, else a folder (in dirsAndLinks)
	target string // of a link
	data   []byte // of a file
	mode   fs.FileMode
}

type cachedTree struct {
	once sync.Once
	tree *treeCopy
	err  error
}

var trees sync.Map // src -> *cachedTree

// readTree reads the committed tree at src once per process.
func readTree(src string) (*treeCopy, error) {
	v, _ := trees.LoadOrStore(src, &cachedTree{})
	ct := v.(*cachedTree)
	ct.once.Do(func() { ct.tree, ct.err = walkTree(src) })
	return ct.tree, ct.err
}

func walkTree(src string) (*treeCopy, error) {
	modes, err := ReadModes(filepath.Join(src, "modes"))
	if err != nil {
		return nil, err
	}
	tree := &treeCopy{}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if rel == "." || rel == "modes" {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			tree.dirsAndLinks = append(tree.dirsAndLinks, treeEntry{rel: rel, link: true, target: target})
			return nil
		case d.IsDir():
			tree.dirsAndLinks = append(tree.dirsAndLinks, treeEntry{rel: rel})
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		slash := filepath.ToSlash(rel)
		mode, ok := modes[slash]
		if !ok {
			mode = hostgen.DefaultMode(slash)
		}
		tree.files = append(tree.files, treeEntry{rel: rel, data: data, mode: mode})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tree, nil
}

func writeFile(name string, data []byte, mode fs.FileMode) error {
	if err := os.WriteFile(name, data, mode); err != nil {
		return err
	}
	if mode&0o022 == 0 {
		return nil // the umask cannot have stripped a bit
	}
	return os.Chmod(name, mode)
}

// ReadModes parses a tree's modes file: "path octal-mode" lines, paths
// relative to the tree, "#" comments and blank lines ignored.
func ReadModes(path string) (map[string]fs.FileMode, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	modes := map[string]fs.FileMode{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("%s:%d: want \"path mode\", got %q", path, n, line)
		}
		m, err := strconv.ParseUint(line[i+1:], 8, 32)
		if err != nil || m > 0o777 {
			return nil, fmt.Errorf("%s:%d: bad mode %q", path, n, line[i+1:])
		}
		modes[strings.TrimSpace(line[:i])] = fs.FileMode(m)
	}
	return modes, nil
}

// SyntheticSpec sizes a synthetic host; see Synthetic.
type SyntheticSpec struct {
	CPUs  int  // possible CPUs, all online
	Nodes int  // NUMA nodes, one per package; CPUs of a node are contiguous
	SMT   bool // two threads per core: siblings n and n+CPUs/2
	// NICs are mlx5 NICs (eth0, eth1, ...) placed round-robin on the nodes,
	// each with one async IRQ and QueuesPerNIC completion IRQs and rx/tx
	// queues; queue q is pinned to the q-th CPU of the NIC's node.
	NICs         int
	QueuesPerNIC int
	// ExtraIRQs are NVMe queue IRQs, 32 per device: q0 unmanaged, the
	// rest kernel-managed and spread over all CPUs.
	ExtraIRQs int
}

// IRQs returns the number of IRQs the synthetic host has:
// NICs*(QueuesPerNIC+1) + ExtraIRQs.
func (s SyntheticSpec) IRQs() int { return s.NICs*(s.QueuesPerNIC+1) + s.ExtraIRQs }

// Synthetic writes a large, deterministic host tree into t.TempDir() and
// returns its root. It has the files of the committed trees (node and CPU
// topology, /proc/interrupts with a column per CPU, /proc/irq/N/*, NICs
// with PCI functions and msi_irqs, stat, softirqs, softnet_stat) with the
// modes of a real host applied.
func Synthetic(t testing.TB, s SyntheticSpec) string {
	t.Helper()
	h, err := hostgen.Synthetic(hostgen.Spec(s))
	if err != nil {
		t.Fatalf("hosttest.Synthetic: %v", err)
	}
	dir := t.TempDir()
	if err := h.Render().Write(dir, hostgen.WriteOptions{ApplyModes: true}); err != nil {
		t.Fatalf("hosttest.Synthetic: %v", err)
	}
	return dir
}

// LiveEnv is the one switch for the tests that change the live host:
// they run only when it is "1", as make test-live sets it; make test
// leaves it unset and they skip, so a default run changes nothing on the
// machine it runs on.
const LiveEnv = "IRQNUMA_TEST_LIVE"

// Writes marks a test that changes the live host while it runs (IRQ
// affinities, a NIC's threaded, rps_cpus or xps_cpus, /var/lib/irqnuma,
// a control group, a network namespace or link) and puts it back: what
// says what it changes. It skips the test, saying how to run it, unless
// LiveEnv is 1. It takes no lock (Live does): call it first, then Live
// where the test needs the live-host lock.
func Writes(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(LiveEnv) != "1" {
		t.Skipf("changes this host's %s while it runs: run it with make test-live (%s=1 go test -run %s ...)", what, LiveEnv, t.Name())
	}
}

// Live marks a test of the live host (its /proc and /sys, not a tree).
// Under -short it skips the test. Otherwise it serialises the live tests
// across every test process on the machine (go test runs packages in
// parallel, and a second checkout may be testing too): it waits for an
// exclusive flock on a lock file in /run/lock (or the temporary folder
// when that is absent) and releases it when the test ends, so no test
// sees the IRQs another is moving.
func Live(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("live-host test (-short)")
	}
	dir := "/run/lock"
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = os.TempDir()
	}
	f, err := os.OpenFile(filepath.Join(dir, "irqnuma-live-tests.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatalf("hosttest.Live: %v", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		t.Fatalf("hosttest.Live: flock %s: %v", f.Name(), err)
	}
	t.Cleanup(func() { f.Close() }) // closing the file drops the lock
	// Whatever the test leaves in irqnuma's state folder (its lock, a
	// state file) goes, and the folder too if it was not there: a live
	// test leaves the machine as it found it. Registered after the lock,
	// so it runs before the lock is dropped.
	before := map[string]bool{}
	ents, statErr := os.ReadDir(liveStateDir)
	for _, e := range ents {
		before[e.Name()] = true
	}
	t.Cleanup(func() {
		ents, _ := os.ReadDir(liveStateDir)
		for _, e := range ents {
			if !before[e.Name()] {
				os.Remove(filepath.Join(liveStateDir, e.Name()))
			}
		}
		if os.IsNotExist(statErr) {
			os.Remove(liveStateDir)
		}
	})
}

// liveStateDir is irqnuma's state folder on the live host.
const liveStateDir = "/var/lib/irqnuma"

// Files returns every regular file under root/proc and root/sys with its
// mode and bytes, for tests that check a tree is back as it was.
func Files(t testing.TB, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, top := range []string{"proc", "sys"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			m[strings.TrimPrefix(p, root)] = info.Mode().String() + " " + string(b)
			return nil
		})
		if err != nil {
			t.Fatalf("hosttest.Files(%s): %v", root, err)
		}
	}
	return m
}
