package snapshot

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/irqnuma/irqnuma/internal/rootpath"
)

// ErrUnsafe is wrapped by errors for an archive entry that would land
// outside the folder it is unpacked into, or is of a kind a snapshot
// never holds.
var ErrUnsafe = errors.New("unsafe entry")

// ErrNotSnapshot is wrapped by errors for a file that is not a gzip tar
// holding proc/ or sys/.
var ErrNotSnapshot = errors.New("not an irqnuma snapshot")

// Limits bound what Unpack accepts; zero fields take the defaults.
type Limits struct {
	MaxEntries   int
	MaxFileSize  int64
	MaxTotalSize int64
	// MaxNameBytes bounds the names and link targets of all entries
	// together: what the unpacker keeps in memory to check them.
	MaxNameBytes int64
}

// Bounds on an entry's shape: real trees are a few dozen folders deep at
// most (/sys/devices/pci0000:00/.../net/eth0/queues/rx-0 is 9), and
// checking every link costs at most linkSteps path components per link on
// average, so an archive of deep or looping links cannot cost hours.
const (
	maxDepth  = 64
	linkSteps = 24
)

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = DefaultMaxFileSize
	}
	if l.MaxTotalSize <= 0 {
		l.MaxTotalSize = DefaultMaxTotalSize
	}
	if l.MaxNameBytes <= 0 {
		l.MaxNameBytes = 64 << 20
	}
	return l
}

// IsArchive reports whether name is a regular file starting with the
// gzip magic number, as a snapshot does.
func IsArchive(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	var magic [2]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && magic == [2]byte{0x1f, 0x8b}
}

// tempPrefix starts the name of every folder Open makes; the process id
// follows, so a folder a killed run left is told from a live run's.
const tempPrefix = "irqnuma-snapshot-"

// Open unpacks the snapshot file name into a new temporary folder and
// returns it with a function that removes it. On error, or when ctx ends
// first, nothing is left behind. Folders left by runs that were killed
// before removing theirs are removed first.
func Open(ctx context.Context, name string, lim Limits) (root string, cleanup func() error, err error) {
	CleanStale()
	f, err := os.Open(name)
	if err != nil {
		return "", nil, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	dir, err := os.MkdirTemp("", tempPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", nil, fmt.Errorf("snapshot: %w", err)
	}
	cleanup = func() error { return os.RemoveAll(dir) }
	if err := UnpackContext(ctx, bufio.NewReader(f), dir, lim); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("snapshot %s: %w", name, err)
	}
	return dir, cleanup, nil
}

// CleanStale removes the temporary folders of Open whose process is gone
// (a run killed with SIGKILL, or by the OOM killer, cannot remove its own).
func CleanStale() {
	ents, err := os.ReadDir(os.TempDir())
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidStr, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
		}
	}
}

// entry kinds in the unpacking model.
const (
	kindDir = iota + 1
	kindFile
	kindLink
)

// unpacker holds what has been unpacked so far, to refuse entries that
// would go through a link or replace an entry, and to resolve links
// against the whole archive at the end.
type unpacker struct {
	ctx     context.Context
	names   int64 // bytes of names and link targets kept
	root    *os.Root
	lim     Limits
	kinds   map[string]int
	targets map[string]string // link name -> target
	order   []string          // links in archive order
	entries int
	total   int64
	// dir is the folder of the last entry, opened under root: entries
	// come folder by folder, and working from the folder spares walking
	// every name from the top.
	dir     *os.Root
	dirName string
}

// in returns the folder of name, opened under the root, and name's last
// component.
func (u *unpacker) in(name string) (*os.Root, string, error) {
	d := parent(name)
	if d == "" {
		return u.root, name, nil
	}
	if u.dir == nil || u.dirName != d {
		if u.dir != nil {
			u.dir.Close()
			u.dir = nil
		}
		r, err := u.root.OpenRoot(d)
		if err != nil {
			return nil, "", err
		}
		u.dir, u.dirName = r, d
	}
	return u.dir, path.Base(name), nil
}

// Unpack reads a gzip tar from r into dir, an existing empty folder.
// Every entry is checked before anything is written for it; a refused
// entry is an error naming it, wrapping ErrUnsafe or ErrTooLarge.
// Folders are made 0755 whatever the archive says (the readers never
// look at folder modes, and the folder must stay removable); files keep
// their permission bits, which carry meaning in /proc/irq.
func Unpack(r io.Reader, dir string, lim Limits) error {
	return UnpackContext(context.Background(), r, dir, lim)
}

// UnpackContext is Unpack that stops, with ctx's error, when ctx ends.
func UnpackContext(ctx context.Context, r io.Reader, dir string, lim Limits) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotSnapshot, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	defer root.Close()
	u := &unpacker{ctx: ctx, root: root, lim: lim.withDefaults(), kinds: map[string]int{}, targets: map[string]string{}}
	defer func() {
		if u.dir != nil {
			u.dir.Close()
		}
	}()
	tr := tar.NewReader(zr)
	for {
		if u.entries%256 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotSnapshot, err)
		}
		if err := u.entry(h, tr); err != nil {
			return err
		}
	}
	if err := u.checkLinks(); err != nil {
		return err
	}
	if u.kinds["proc"] != kindDir && u.kinds["sys"] != kindDir {
		return fmt.Errorf("%w: no proc/ or sys/ folder at its top level", ErrNotSnapshot)
	}
	return nil
}

func (u *unpacker) entry(h *tar.Header, r io.Reader) error {
	if h.Typeflag == tar.TypeXGlobalHeader || h.Typeflag == tar.TypeDir && (h.Name == "./" || h.Name == ".") {
		return nil // pax global header; GNU tar's entry for the top folder
	}
	if u.entries++; u.entries > u.lim.MaxEntries {
		return fmt.Errorf("entry %q: %w: more than %d entries", h.Name, ErrTooLarge, u.lim.MaxEntries)
	}
	name, err := cleanName(h.Name)
	if err != nil {
		return fmt.Errorf("entry %q: %w: %v", clipName(h.Name), ErrUnsafe, err)
	}
	if d := strings.Count(name, "/") + 1; d > maxDepth {
		return fmt.Errorf("entry %q: %w: %d folders deep, more than %d", clipName(h.Name), ErrTooLarge, d, maxDepth)
	}
	if u.names += int64(len(name) + len(h.Linkname)); u.names > u.lim.MaxNameBytes {
		return fmt.Errorf("entry %q: %w: names and link targets take more than %d bytes", clipName(h.Name), ErrTooLarge, u.lim.MaxNameBytes)
	}
	unsafe := func(format string, args ...any) error {
		return fmt.Errorf("entry %q: %w: %s", h.Name, ErrUnsafe, fmt.Sprintf(format, args...))
	}
	// No entry may go through a link or a file: with every folder on the
	// way a real folder, nothing is written outside dir.
	for p := parent(name); p != ""; p = parent(p) {
		switch u.kinds[p] {
		case kindLink:
			return unsafe("its folder %s is a symbolic link", p)
		case kindFile:
			return unsafe("its folder %s is a file", p)
		}
	}
	if k, ok := u.kinds[name]; ok && !(k == kindDir && h.Typeflag == tar.TypeDir) {
		return unsafe("it appears twice")
	}
	switch h.Typeflag {
	case tar.TypeDir:
		if u.kinds[name] == kindDir {
			return nil // listed again: nothing to do
		}
		if err := u.parents(h.Name, name); err != nil {
			return err
		}
		dir, base, err := u.in(name)
		if err == nil {
			err = dir.Mkdir(base, 0o755)
		}
		if err != nil {
			return fmt.Errorf("entry %q: %w", h.Name, err)
		}
		u.mark(name, kindDir)
	case tar.TypeReg:
		return u.file(h, name, r)
	case tar.TypeSymlink:
		t := h.Linkname
		switch {
		case t == "" || strings.ContainsRune(t, 0):
			return unsafe("empty or NUL in link target")
		case path.IsAbs(t):
			return unsafe("link target %q is absolute", clipName(t))
		case escapes(path.Join(parent(name), t)):
			return unsafe("link target %q leaves the root", clipName(t))
		case strings.Count(t, "/")+1 > maxDepth:
			return fmt.Errorf("entry %q: %w: link target of %d path components, more than %d", clipName(h.Name), ErrTooLarge, strings.Count(t, "/")+1, maxDepth)
		}
		if err := u.parents(h.Name, name); err != nil {
			return err
		}
		dir, base, err := u.in(name)
		if err == nil {
			err = dir.Symlink(t, base)
		}
		if err != nil {
			return fmt.Errorf("entry %q: %w", h.Name, err)
		}
		u.mark(name, kindLink)
		u.targets[name] = t
		u.order = append(u.order, name)
	case tar.TypeLink:
		return unsafe("hard link to %q: snapshots hold none", h.Linkname)
	default:
		return unsafe("type %q is not a file, folder or symbolic link", h.Typeflag)
	}
	return nil
}

func (u *unpacker) file(h *tar.Header, name string, r io.Reader) error {
	if h.Size > u.lim.MaxFileSize {
		return fmt.Errorf("entry %q: %w: %d bytes, more than %d", h.Name, ErrTooLarge, h.Size, u.lim.MaxFileSize)
	}
	if u.total+h.Size > u.lim.MaxTotalSize {
		return fmt.Errorf("entry %q: %w: archive holds more than %d bytes", h.Name, ErrTooLarge, u.lim.MaxTotalSize)
	}
	u.total += h.Size
	if err := u.parents(h.Name, name); err != nil {
		return err
	}
	dir, base, err := u.in(name)
	if err != nil {
		return fmt.Errorf("entry %q: %w", h.Name, err)
	}
	f, err := dir.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("entry %q: %w", h.Name, err)
	}
	_, err = io.Copy(f, io.LimitReader(r, h.Size))
	if err == nil {
		err = f.Chmod(os.FileMode(h.Mode) & 0o777)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("entry %q: %w", h.Name, err)
	}
	u.mark(name, kindFile)
	return nil
}

// parents makes the folders above name that the archive did not list.
func (u *unpacker) parents(raw, name string) error {
	d := parent(name)
	if d == "" || u.kinds[d] == kindDir {
		return nil
	}
	if err := u.root.MkdirAll(d, 0o755); err != nil {
		return fmt.Errorf("entry %q: %w", raw, err)
	}
	for p := d; p != "" && u.kinds[p] == 0; p = parent(p) {
		u.mark(p, kindDir)
	}
	return nil
}

func (u *unpacker) mark(name string, kind int) { u.kinds[name] = kind }

// checkLinks resolves every link against the whole archive, as the
// kernel would follow it, and refuses one that leaves the root by going
// up through another link.
func (u *unpacker) checkLinks() error {
	budget := linkSteps * (len(u.order) + 1)
	for i, name := range u.order {
		if i%256 == 0 && u.ctx.Err() != nil {
			return context.Cause(u.ctx)
		}
		if _, err := rootpath.ResolveBudget(u, parent(name), u.targets[name], &budget); err != nil {
			if errors.Is(err, rootpath.ErrTooCostly) {
				return fmt.Errorf("entry %q: %w: its %d links take more than %d path steps to check", clipName(name), ErrTooLarge, len(u.order), linkSteps*(len(u.order)+1))
			}
			return fmt.Errorf("entry %q: %w: link target %q %v", clipName(name), ErrUnsafe, clipName(u.targets[name]), err)
		}
	}
	return nil
}

// clipName shortens a name or link target quoted in an error.
func clipName(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// Readlink makes the archive's entries a rootpath.Links.
func (u *unpacker) Readlink(rel string) (string, bool, error) {
	if u.kinds[rel] != kindLink {
		return "", false, nil
	}
	return u.targets[rel], true, nil
}

// cleanName checks an entry name: relative, no "." or ".." components,
// no NUL; a leading "./" and a trailing "/" are dropped.
func cleanName(raw string) (string, error) {
	name := strings.TrimSuffix(strings.TrimPrefix(raw, "./"), "/")
	switch {
	case name == "":
		return "", errors.New("empty name")
	case strings.ContainsRune(name, 0):
		return "", errors.New("NUL in name")
	case strings.HasPrefix(name, "/"):
		return "", errors.New("absolute name")
	case len(name) > 4096:
		return "", errors.New("name longer than PATH_MAX")
	}
	for c := range strings.SplitSeq(name, "/") {
		switch c {
		case "..":
			return "", errors.New(`".." in name`)
		case "", ".":
			return "", errors.New("empty or \".\" component in name")
		}
	}
	return name, nil
}
