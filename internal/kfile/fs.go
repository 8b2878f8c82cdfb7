package kfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/rootpath"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// FS is a host root, opened once with Open: the live machine ("/") or a
// tree holding its proc/ and sys/. Every reader takes one; nothing in
// irqnuma reads a host file by a bare path. Its methods take paths under
// the root as Path makes them (root + "/sys/..."), so messages name files
// as the user knows them, and a tree is read as if it were mounted at
// "/": symbolic links are followed inside it, an absolute target is taken
// from the tree's top and ".." stops there, so nothing outside the tree
// is ever read or written through it (openat2's RESOLVE_IN_ROOT; on a
// kernel without openat2 the links are resolved by rootpath first).
// Errors name the file as root + path.
//
// Opens are non-blocking and reads are bounded, so a FIFO or a device
// planted in a tree cannot hang a reader.
//
// A copy made with WithBudget charges every operation to a Budget, which
// bounds them together.
//
// The zero FS holds no root: every read through it fails.
type FS struct {
	root   string
	dir    *rootDir // nil for the live root
	live   bool
	budget *Budget // what its reads are charged to (WithBudget); nil: none
}

// rootDir is a tree's root folder, opened once by Open.
type rootDir struct {
	fd   int
	abs  string // the root made absolute, as a path given to the FS may be
	real string // the folder's real path, for Resolve
	err  error
}

// errNoRoot is the zero FS's error.
var errNoRoot = errors.New("no host root opened (kfile.Open)")

// Open opens the host root: "/" is the live machine, read with the
// kernel's own path walk, and so is any path naming the same folder (a
// link to /, a bind mount of it): what it holds is the running kernel's,
// so it is read, written and refused as the live root is, never as a
// copy. Any other folder is opened once, here, and every read through the
// FS resolves inside it. A root that does not
// exist is not an error here: every read through the FS then fails with
// the open's error, which names the root, so a command that reports
// failures per read (a scrape) says so there; a root that exists and
// cannot be opened as a folder is an error. Whether the folder holds a
// host is CheckRoot's question. Close releases the folder.
func Open(root string) (FS, error) {
	clean := filepath.Clean(root)
	if clean == "/" || isSlash(clean) {
		return FS{root: "/", live: true}, nil
	}
	d := &rootDir{}
	d.open(clean)
	if d.err != nil && !errors.Is(d.err, fs.ErrNotExist) {
		return FS{}, d.err
	}
	return FS{root: root, dir: d}, nil
}

// isSlash reports whether root is the folder "/" is, by another name:
// the same device and inode, links followed.
func isSlash(root string) bool {
	st, err := os.Stat(root)
	if err != nil {
		return false
	}
	slash, err := os.Stat("/")
	return err == nil && os.SameFile(st, slash)
}

// Close closes the root folder; reads through f (and its copies) fail
// after it. Closing the live root does nothing.
func (f FS) Close() error {
	if f.dir == nil || f.dir.err != nil {
		return nil
	}
	err := unix.Close(f.dir.fd)
	f.dir.err = &fs.PathError{Op: "open", Path: f.root, Err: fs.ErrClosed}
	return err
}

func (d *rootDir) open(root string) {
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		d.err = &fs.PathError{Op: "open", Path: root, Err: err}
		return
	}
	d.fd = fd
	if abs, err := filepath.Abs(root); err == nil {
		d.abs = abs
	}
	// The folder's absolute real path, which Resolve compares the
	// kernel's answers with: what the fd is open on, or without /proc
	// the path made absolute with its links followed. A relative root
	// ("testdata/hosts/seed") must compare as absolute too.
	if real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err == nil && filepath.IsAbs(real) {
		d.real = real
	} else if abs, err := filepath.Abs(root); err == nil {
		d.real = abs
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			d.real = real
		}
	} else {
		d.real = root
	}
}

// ErrNotHost is wrapped by CheckRoot's error for a folder that holds
// neither proc/ nor sys/.
var ErrNotHost = usage.New("holds neither proc/ nor sys/")

// CheckRoot reports whether the folder root holds a host: a proc/ or a
// sys/ folder. Without either, every read would fail with a bare "no such
// file" that does not say the folder is the wrong one; the error wraps
// ErrNotHost, says what a root is and names the folders inside root that
// do hold one (a capture unpacked one level down). A root that does not
// exist is left to the readers, whose errors name it.
func CheckRoot(root string) error {
	if _, err := os.Stat(root); err != nil || holdsHost(root) {
		return nil
	}
	var inside []string
	if ents, err := os.ReadDir(root); err == nil {
		for _, e := range ents {
			if sub := filepath.Join(root, e.Name()); e.IsDir() && holdsHost(sub) {
				inside = append(inside, sub)
			}
		}
	}
	hint := ""
	switch {
	case len(inside) == 1:
		hint = "; " + inside[0] + " does"
	case len(inside) > 1:
		hint = "; these folders in it do: " + strings.Join(inside, ", ")
	}
	return fmt.Errorf("root %s: %w%s (a root is a folder holding a host's proc/ and sys/, such as / or an unpacked capture, or a snapshot .tar.gz of one)", root, ErrNotHost, hint)
}

// holdsHost reports whether dir has a proc/ or a sys/ folder.
func holdsHost(dir string) bool {
	for _, name := range []string{"proc", "sys"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// Root returns the root folder as given; "/" for the live root, however
// it was named.
func (f FS) Root() string { return f.root }

// Live reports whether f is the running machine's own root: "/", or a
// path naming the same folder (Open). It is the one test of "live" in
// irqnuma: what needs root's privileges, what reads the running kernel
// (ioctl, netlink, sched_getaffinity) rather than a tree's files.
func (f FS) Live() bool { return f.live }

// Path returns the root joined with rel, as messages name a file.
func (f FS) Path(rel ...string) string {
	return filepath.Join(append([]string{f.root}, rel...)...)
}

// openat2 is unix.Openat2, replaced by tests to exercise the fallback for
// kernels without it.
var openat2 = unix.Openat2

// noOpenat2 is set once openat2 is known to be missing (ENOSYS) or
// refused (EPERM from a seccomp filter).
var noOpenat2 struct {
	sync.Mutex
	set bool
}

// errNotUnder says a path given to an FS is not under its root: a
// caller's mistake, reported rather than read from elsewhere.
var errNotUnder = errors.New("path is not under the root")

// rel returns p relative to the root ("." for the root itself). The
// root may be spelt any way a folder can ("./", "../x", "x/../y/"): both
// are cleaned first, and a root of "." holds every relative path that
// does not climb out of it, since Path("sys/...") is then "sys/...". A
// path may also name the root by its absolute or its real path.
func (f FS) rel(p string) (string, error) {
	r := filepath.Clean(p)
	if f.root != "/" {
		var ok bool
		r, ok = f.under(r)
		if !ok {
			return "", errNotUnder
		}
	}
	r = strings.TrimLeft(filepath.ToSlash(r), "/")
	if r == "" {
		r = "."
	}
	return r, nil
}

// under returns the clean path r relative to the root, trying the root
// as given, then its absolute and its real path.
func (f FS) under(r string) (string, bool) {
	tops := []string{filepath.Clean(f.root)}
	if f.dir != nil {
		tops = append(tops, f.dir.abs, f.dir.real)
	}
	for _, top := range tops {
		switch {
		case top == "":
		case r == top:
			return "", true
		case top == ".":
			if !filepath.IsAbs(r) && r != ".." && !strings.HasPrefix(r, "../") {
				return r, true
			}
		case strings.HasPrefix(r, top+"/"):
			return r[len(top)+1:], true
		}
	}
	return "", false
}

// open opens p with flags; O_CLOEXEC is added, and O_NONBLOCK but to
// O_PATH (which admits only O_DIRECTORY and O_NOFOLLOW beside it).
func (f FS) open(p string, flags int) (int, error) {
	if f.budget != nil {
		if err := f.budget.charge("open", p, 0, 1); err != nil {
			return -1, err
		}
	}
	flags |= unix.O_CLOEXEC
	if flags&unix.O_PATH == 0 {
		flags |= unix.O_NONBLOCK
	}
	if f.live {
		return retryEINTR(func() (int, error) { return unix.Open(p, flags, 0) })
	}
	if f.dir == nil {
		return -1, errNoRoot
	}
	if f.dir.err != nil {
		return -1, f.dir.err
	}
	rel, err := f.rel(p)
	if err != nil {
		return -1, err
	}
	noOpenat2.Lock()
	fallback := noOpenat2.set
	noOpenat2.Unlock()
	if !fallback {
		how := &unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
		// EAGAIN: a rename anywhere on the machine ran while the kernel
		// resolved a "..", so it could not vouch that the path stayed in
		// the root (openat2(2) says to retry). Past a few tries the
		// links are resolved here instead, this once.
		for try := 0; try < 8; try++ {
			fd, err := retryEINTR(func() (int, error) { return openat2(f.dir.fd, rel, how) })
			if err == unix.EAGAIN {
				continue
			}
			if err != unix.ENOSYS && err != unix.EPERM {
				return fd, err
			}
			noOpenat2.Lock()
			noOpenat2.set = true
			noOpenat2.Unlock()
			break
		}
	}
	// No openat2: resolve the links inside the tree here, then open the
	// real path without following a last link (there is none left).
	real, err := rootpath.Resolve(rootpath.Dir(f.root), "", rel)
	if err != nil {
		if errors.Is(err, rootpath.ErrLeavesRoot) || errors.Is(err, rootpath.ErrTooManyLinks) {
			return -1, unix.ELOOP
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return -1, pe.Err
		}
		return -1, err
	}
	if real == "" {
		real = "."
	}
	return retryEINTR(func() (int, error) { return unix.Openat(f.dir.fd, real, flags|unix.O_NOFOLLOW, 0) })
}

func retryEINTR(fn func() (int, error)) (int, error) {
	for {
		fd, err := fn()
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// pathErr wraps a syscall error with the operation and the file's name.
func pathErr(op, p string, err error) error {
	if rd, ok := err.(*fs.PathError); ok && rd.Path != p {
		return err // the root's own error names the root
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// readFile reads p to its end; see readFD.
func (f FS) readFile(p string, buf []byte, limit int64, stat bool) (b []byte, mode os.FileMode, err error) {
	defer func() { f.trace(OpRead, p, err) }()
	fd, err := f.open(p, unix.O_RDONLY)
	if err != nil {
		return nil, 0, pathErr("open", p, err)
	}
	defer unix.Close(fd)
	lim, budgeted := f.readLimit(limit)
	b, mode, err = readFD(fd, p, buf, lim, stat, f.live)
	if f.budget == nil || (err != nil && !(budgeted && errors.Is(err, ErrTooLarge))) {
		return b, mode, err
	}
	// Past the budget's bytes (a read cut short by it), or charged
	// what it read.
	n := int64(len(b))
	if err != nil {
		n = lim + 1
	}
	if err := f.budget.charge("read", p, n, 0); err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", p, err)
	}
	return b, mode, nil
}

// Read returns the whole file, bounded by MaxSize.
func (f FS) Read(p string) ([]byte, error) {
	b, _, err := f.readFile(p, nil, MaxSize, true)
	return b, err
}

// ReadLimit returns the whole of a small file, failing past limit bytes.
func (f FS) ReadLimit(p string, limit int64) ([]byte, error) {
	b, _, err := f.readFile(p, nil, limit, false)
	return b, err
}

// ReadMode reads a small file into buf and returns its permission bits.
func (f FS) ReadMode(p string, buf []byte) ([]byte, os.FileMode, error) {
	return f.readFile(p, buf, 1<<20, true)
}

// ReadInto reads a small file into buf.
func (f FS) ReadInto(p string, buf []byte) ([]byte, error) {
	b, _, err := f.readFile(p, buf, 1<<20, false)
	return b, err
}

// ReadBuf reads a whole file of any size up to MaxSize into buf, reused
// when large enough: what a watcher does with /proc/interrupts every
// interval.
func (f FS) ReadBuf(p string, buf []byte) ([]byte, error) {
	b, _, err := f.readFile(p, buf, MaxSize, false)
	return b, err
}

// Plain reports whether p resolves to itself (no link on the way) and is
// a regular file: the check before a library that opens files on its own
// (procfs) is handed a path inside a tree. The live root is always plain.
func (f FS) Plain(p string) error {
	if f.live {
		return nil
	}
	rel, err := f.rel(p)
	if err != nil {
		return pathErr("open", p, err)
	}
	real, err := f.Resolve(p)
	if err != nil {
		return err
	}
	if real != rel {
		return fmt.Errorf("read %s: goes through a link to %s, which irqnuma does not follow here", p, f.Path(real))
	}
	fi, err := f.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("read %s: not a regular file (%v)", p, fi.Mode().Type())
	}
	return nil
}

// String returns an attribute's content without its trailing newline and
// NUL padding (see TrimAttr).
func (f FS) String(p string) (string, error) {
	b, err := f.ReadLimit(p, 1<<20)
	if err != nil {
		return "", err
	}
	return string(TrimAttr(b)), nil
}

// Int reads a decimal integer attribute such as numa_node ("-1"); one
// that is not is ErrFileParse, as a bad List or Mask is.
func (f FS) Int(p string) (int, error) {
	s, err := f.String(p)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, Malformedf(p, "not an integer: %q", clip(s))
	}
	return n, nil
}

// List reads a CPU or node list attribute ("0-3,8-11").
func (f FS) List(p string) (cpuset.Set, error) {
	b, err := f.ReadLimit(p, 1<<20)
	if err != nil {
		return cpuset.Set{}, err
	}
	return ParseListAttr(p, b)
}

// ParseListAttr parses b, the content of the list attribute p, as List
// does: TrimAttr, then the list, strictly; a bad one is Malformed.
func ParseListAttr(p string, b []byte) (cpuset.Set, error) {
	set, err := cpuset.ParseList(strings.TrimSpace(string(TrimAttr(b))))
	if err != nil {
		return cpuset.Set{}, Malformed(p, err)
	}
	return set, nil
}

// Mask reads a CPU mask attribute ("ffff0000,0000ffff").
func (f FS) Mask(p string) (cpuset.Set, error) {
	s, err := f.String(p)
	if err != nil {
		return cpuset.Set{}, err
	}
	set, err := cpuset.ParseMask(strings.TrimSpace(s))
	if err != nil {
		return cpuset.Set{}, Malformed(p, err)
	}
	return set, nil
}

// ReadDir lists the folder p, sorted by name.
func (f FS) ReadDir(p string) (ents []os.DirEntry, err error) {
	defer func() { f.trace(OpReadDir, p, err) }()
	fd, err := f.open(p, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	d := os.NewFile(uintptr(fd), p)
	defer d.Close()
	// A batch at a time, each charged to a budget before the next is
	// read, so a folder of millions of entries is not held whole first.
	for {
		batch, err := d.ReadDir(1024)
		if f.budget != nil {
			if berr := f.budget.charge("read", p, 0, int64(len(batch))); berr != nil {
				return nil, fmt.Errorf("read %s: %w", p, berr)
			}
		}
		ents = append(ents, batch...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	sortEntries(ents)
	return ents, nil
}

// Stat returns what p, links followed, is.
func (f FS) Stat(p string) (fi fs.FileInfo, err error) {
	defer func() { f.trace(OpStat, p, err) }()
	fd, err := f.open(p, unix.O_PATH)
	if err != nil {
		return nil, pathErr("stat", p, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, pathErr("stat", p, err)
	}
	return newFileInfo(filepath.Base(p), &st), nil
}

// Lstat returns what p is, without following a link at its end (links
// before it are followed inside the root).
func (f FS) Lstat(p string) (fi fs.FileInfo, err error) {
	defer func() { f.trace(OpLstat, p, err) }()
	pfd, base, err := f.parent(p)
	if err != nil {
		return nil, pathErr("lstat", p, err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, pathErr("lstat", p, err)
	}
	return newFileInfo(base, &st), nil
}

// Readlink returns the target of the link p, as written.
func (f FS) Readlink(p string) (target string, err error) {
	defer func() { f.trace(OpReadlink, p, err) }()
	pfd, base, err := f.parent(p)
	if err != nil {
		return "", pathErr("readlink", p, err)
	}
	defer unix.Close(pfd)
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(pfd, base, buf)
		if err != nil {
			return "", pathErr("readlink", p, err)
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		if len(buf) >= 1<<16 {
			return "", pathErr("readlink", p, unix.ENAMETOOLONG)
		}
		buf = make([]byte, 2*len(buf))
	}
}

// parent opens the folder of p and returns it with p's last name.
func (f FS) parent(p string) (int, string, error) {
	clean := filepath.Clean(p)
	dir, base := filepath.Dir(clean), filepath.Base(clean)
	if base == "/" {
		base = "."
	}
	fd, err := f.open(dir, unix.O_PATH|unix.O_DIRECTORY)
	return fd, base, err
}

// Resolve returns the real path of p relative to the root, every link on
// the way followed inside the root ("" for the root itself).
func (f FS) Resolve(p string) (_ string, err error) {
	defer func() { f.trace(OpResolve, p, err) }()
	fd, err := f.open(p, unix.O_PATH)
	if err != nil {
		return "", pathErr("resolve", p, err)
	}
	defer unix.Close(fd)
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		// No /proc to ask: walk the links ourselves.
		rel, err := f.rel(p)
		if err != nil {
			return "", pathErr("resolve", p, err)
		}
		r, err := rootpath.Resolve(rootpath.Dir(filepath.Clean(f.root)), "", rel)
		if err != nil {
			return "", fmt.Errorf("resolve %s: link %w", p, err)
		}
		return r, nil
	}
	top := "/"
	if !f.live {
		top = f.dir.real
	}
	r, err := filepath.Rel(top, real)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", fmt.Errorf("resolve %s: lands at %s, outside %s", p, real, top)
	}
	if r == "." {
		r = ""
	}
	return filepath.ToSlash(r), nil
}

// OpenFile opens p as os.OpenFile does (no O_CREATE: a kernel file is
// written in place, never made), resolved inside the root like every
// read.
func (f FS) OpenFile(p string, flag int) (file *os.File, err error) {
	op := OpWrite
	if flag&unix.O_ACCMODE == unix.O_RDONLY {
		op = OpRead
	}
	defer func() { f.trace(op, p, err) }()
	fd, err := f.open(p, flag&^os.O_CREATE)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	if !f.live && flag&unix.O_ACCMODE == unix.O_RDONLY {
		// A read of a tree's file refuses a device, FIFO or socket, as
		// readFile does.
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return nil, pathErr("stat", p, err)
		}
		if kind := specialKind(st.Mode); kind != "" {
			unix.Close(fd)
			return nil, fmt.Errorf("read %s: %w: a %s", p, ErrSpecial, kind)
		}
	}
	// Blocking I/O for writes: a write to /proc/irq is one syscall.
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, pathErr("open", p, err)
	}
	return os.NewFile(uintptr(fd), p), nil
}

// fileInfo is an fs.FileInfo from a stat.
type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
	mod  time.Time
}

func newFileInfo(name string, st *unix.Stat_t) fileInfo {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return fileInfo{name: name, size: st.Size, mode: m, mod: time.Unix(st.Mtim.Unix())}
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.size }
func (i fileInfo) Mode() fs.FileMode  { return i.mode }
func (i fileInfo) ModTime() time.Time { return i.mod }
func (i fileInfo) IsDir() bool        { return i.mode.IsDir() }
func (i fileInfo) Sys() any           { return nil }

func sortEntries(ents []os.DirEntry) {
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}
