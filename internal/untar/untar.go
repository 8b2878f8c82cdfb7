// Package untar unpacks a tar archive into a folder without ever writing
// outside it. It is the one unpacker of the snapshot files irqnuma writes
// and of the real-host captures the tests read.
//
// Every entry is checked before anything is written for it: names must
// be relative with no "." or ".." components, no entry may go through a
// symbolic link or a file, no name may appear twice (a folder may be
// listed again), symbolic link targets must be relative and stay inside
// the folder when resolved against the whole archive, and the entry
// count, each file's size, the total size, the depth and the bytes of
// names kept are bounded against archive bombs. A refused entry is an
// error naming it, wrapping ErrUnsafe or ErrTooLarge.
//
// Hard links and special files (devices and FIFOs) are refused unless
// Options allow them: a hard link only to a regular file already
// unpacked, special files only by being skipped.
package untar

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/irqnuma/irqnuma/internal/rootpath"
)

// Errors of Unpack, for callers to branch on.
var (
	// ErrUnsafe is wrapped by errors for an entry that would land
	// outside the folder, or is of a kind the options do not allow.
	ErrUnsafe = errors.New("unsafe entry")
	// ErrTooLarge is wrapped by errors for an archive over one of its
	// bounds.
	ErrTooLarge = errors.New("over the size bound")
	// ErrFormat is wrapped by errors reading the archive itself: not a
	// tar, damaged, or cut short (in a header or in a file's contents).
	ErrFormat = errors.New("unreadable tar")
)

// Default bounds, for the zero fields of Options.
const (
	DefaultMaxEntries   = 1 << 20   // files, folders and links
	DefaultMaxFileSize  = 256 << 20 // one file
	DefaultMaxTotalSize = 1 << 30   // all files, unpacked
	DefaultMaxNameBytes = 64 << 20  // all names and link targets
)

// Options bound what Unpack accepts and say how it treats the entries
// callers differ on. The zero value is the strictest: default bounds,
// no hard links, no special files, file modes as recorded.
type Options struct {
	MaxEntries   int
	MaxFileSize  int64
	MaxTotalSize int64
	// MaxNameBytes bounds the names and link targets of all entries
	// together: what the unpacker keeps in memory to check them.
	MaxNameBytes int64

	// HardLinks allows a hard link whose target is a regular file
	// unpacked earlier from the same archive; any other hard link is
	// refused.
	HardLinks bool
	// SkipSpecial skips character and block devices and FIFOs instead
	// of refusing them.
	SkipSpecial bool
	// OwnerWritable gives every file owner read and write on top of its
	// recorded mode, so the tree can be written to and removed.
	OwnerWritable bool
}

func (o Options) withDefaults() Options {
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.MaxTotalSize <= 0 {
		o.MaxTotalSize = DefaultMaxTotalSize
	}
	if o.MaxNameBytes <= 0 {
		o.MaxNameBytes = DefaultMaxNameBytes
	}
	return o
}

// Bounds on an entry's shape: real trees are a few dozen folders deep at
// most (/sys/devices/pci0000:00/.../net/eth0/queues/rx-0 is 9), and
// checking every link costs at most linkSteps path components per link on
// average, so an archive of deep or looping links cannot cost hours.
const (
	maxDepth  = 64
	linkSteps = 24
)

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
	opt     Options
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

// Unpack reads the entries of tr into dir, an existing empty folder,
// and stops, with ctx's cause, when ctx ends. Folders are made 0755
// whatever the archive says (the readers never look at folder modes, and
// the folder must stay removable); files keep their permission bits,
// which carry meaning in /proc/irq. Modification times and owners are not
// restored. On error what was unpacked so far is left for the caller to
// remove.
func Unpack(ctx context.Context, tr *tar.Reader, dir string, opt Options) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	defer root.Close()
	u := &unpacker{ctx: ctx, root: root, opt: opt.withDefaults(), kinds: map[string]int{}, targets: map[string]string{}}
	defer func() {
		if u.dir != nil {
			u.dir.Close()
		}
	}()
	for n := 0; ; n++ {
		if n%256 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrFormat, err)
		}
		if err := u.entry(h, tr); err != nil {
			return err
		}
	}
	return u.checkLinks()
}

// in returns the folder of name, opened under the root, and name's last
// component.
func (u *unpacker) in(name string) (*os.Root, string, error) {
	d := rootpath.Parent(name)
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

// unsafe returns an error naming the entry h, wrapping ErrUnsafe.
func unsafe(h *tar.Header, format string, args ...any) error {
	return fmt.Errorf("entry %q: %w: %s", clipName(h.Name), ErrUnsafe, fmt.Sprintf(format, args...))
}

// tooLarge returns an error naming the entry h, wrapping ErrTooLarge.
func tooLarge(h *tar.Header, format string, args ...any) error {
	return fmt.Errorf("entry %q: %w: %s", clipName(h.Name), ErrTooLarge, fmt.Sprintf(format, args...))
}

// entry checks the header h against the bounds and what was unpacked
// before it, then unpacks it, reading a file's contents from r.
func (u *unpacker) entry(h *tar.Header, r io.Reader) error {
	if h.Typeflag == tar.TypeXGlobalHeader || h.Typeflag == tar.TypeDir && (h.Name == "./" || h.Name == ".") {
		return nil // pax global header; GNU tar's entry for the top folder
	}
	if u.entries++; u.entries > u.opt.MaxEntries {
		return tooLarge(h, "more than %d entries", u.opt.MaxEntries)
	}
	name, err := cleanName(h.Name)
	if err != nil {
		return unsafe(h, "%v", err)
	}
	if d := strings.Count(name, "/") + 1; d > maxDepth {
		return tooLarge(h, "%d folders deep, more than %d", d, maxDepth)
	}
	if u.names += int64(len(name) + len(h.Linkname)); u.names > u.opt.MaxNameBytes {
		return tooLarge(h, "names and link targets take more than %d bytes", u.opt.MaxNameBytes)
	}
	// No entry may go through a link or a file: with every folder on the
	// way a real folder, nothing is written outside dir.
	for p := rootpath.Parent(name); p != ""; p = rootpath.Parent(p) {
		switch u.kinds[p] {
		case kindLink:
			return unsafe(h, "its folder %s is a symbolic link", p)
		case kindFile:
			return unsafe(h, "its folder %s is a file", p)
		}
	}
	if k, ok := u.kinds[name]; ok && !(k == kindDir && h.Typeflag == tar.TypeDir) {
		return unsafe(h, "it appears twice")
	}
	switch h.Typeflag {
	case tar.TypeDir:
		return u.mkdir(h, name)
	case tar.TypeReg:
		return u.file(h, name, r)
	case tar.TypeSymlink:
		return u.symlink(h, name)
	case tar.TypeLink:
		return u.hardLink(h, name)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		if u.opt.SkipSpecial {
			return nil
		}
		return unsafe(h, "type %q is a device or FIFO", h.Typeflag)
	default:
		return unsafe(h, "type %q is not a file, folder or link", h.Typeflag)
	}
}

func (u *unpacker) mkdir(h *tar.Header, name string) error {
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
	u.kinds[name] = kindDir
	return nil
}

func (u *unpacker) file(h *tar.Header, name string, r io.Reader) error {
	if h.Size > u.opt.MaxFileSize {
		return tooLarge(h, "%d bytes, more than %d", h.Size, u.opt.MaxFileSize)
	}
	if u.total+h.Size > u.opt.MaxTotalSize {
		return tooLarge(h, "archive holds more than %d bytes", u.opt.MaxTotalSize)
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
	mode := os.FileMode(h.Mode) & 0o777
	if u.opt.OwnerWritable {
		mode |= 0o600
	}
	_, err = io.Copy(f, io.LimitReader(archiveReader{r}, h.Size))
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("entry %q: %w", h.Name, err)
	}
	u.kinds[name] = kindFile
	return nil
}

func (u *unpacker) symlink(h *tar.Header, name string) error {
	t := h.Linkname
	switch {
	case t == "" || strings.ContainsRune(t, 0):
		return unsafe(h, "empty or NUL in link target")
	case path.IsAbs(t):
		return unsafe(h, "link target %q is absolute", clipName(t))
	case rootpath.Escapes(path.Join(rootpath.Parent(name), t)):
		return unsafe(h, "link target %q leaves the root", clipName(t))
	case strings.Count(t, "/")+1 > maxDepth:
		return tooLarge(h, "link target of %d path components, more than %d", strings.Count(t, "/")+1, maxDepth)
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
	u.kinds[name] = kindLink
	u.targets[name] = t
	u.order = append(u.order, name)
	return nil
}

// hardLink links name to the regular file the archive unpacked earlier
// under h.Linkname, a name from the archive's top like every entry's.
// Only a file in the model qualifies: it was made where every folder on
// its way is a real folder, so the link cannot reach outside the root.
func (u *unpacker) hardLink(h *tar.Header, name string) error {
	if !u.opt.HardLinks {
		return unsafe(h, "hard link to %q: hard links are not allowed", clipName(h.Linkname))
	}
	t, err := cleanName(h.Linkname)
	if err != nil {
		return unsafe(h, "hard link target %q: %v", clipName(h.Linkname), err)
	}
	if u.kinds[t] != kindFile {
		return unsafe(h, "hard link to %q, which is no file unpacked before it", clipName(t))
	}
	if err := u.parents(h.Name, name); err != nil {
		return err
	}
	if err := u.root.Link(t, name); err != nil {
		return fmt.Errorf("entry %q: %w", h.Name, err)
	}
	u.kinds[name] = kindFile
	return nil
}

// archiveReader marks the errors of reading an entry's contents from the
// archive with ErrFormat, to tell a cut archive from a failed write.
type archiveReader struct{ r io.Reader }

func (a archiveReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%w: %w", ErrFormat, err)
	}
	return n, err
}

// parents makes the folders above name that the archive did not list.
func (u *unpacker) parents(raw, name string) error {
	d := rootpath.Parent(name)
	if d == "" || u.kinds[d] == kindDir {
		return nil
	}
	if u.entries += u.implied(name); u.entries > u.opt.MaxEntries {
		return fmt.Errorf("entry %q: %w: more than %d entries with the folders they imply", clipName(raw), ErrTooLarge, u.opt.MaxEntries)
	}
	if err := u.root.MkdirAll(d, 0o755); err != nil {
		return fmt.Errorf("entry %q: %w", raw, err)
	}
	for p := d; p != "" && u.kinds[p] == 0; p = rootpath.Parent(p) {
		u.kinds[p] = kindDir
	}
	return nil
}

// implied counts the folders above name that are not yet in the model,
// each an inode the unpacker makes like a listed entry's.
func (u *unpacker) implied(name string) int {
	n := 0
	for p := rootpath.Parent(name); p != "" && u.kinds[p] == 0; p = rootpath.Parent(p) {
		n++
	}
	return n
}

// checkLinks resolves every link against the whole archive, as the
// kernel would follow it, and refuses one that leaves the root by going
// up through another link.
func (u *unpacker) checkLinks() error {
	budget := linkSteps * (len(u.order) + 1)
	for i, name := range u.order {
		if i%256 == 0 && u.ctx.Err() != nil {
			return context.Cause(u.ctx)
		}
		if _, err := rootpath.ResolveBudget(u, rootpath.Parent(name), u.targets[name], &budget); err != nil {
			if errors.Is(err, rootpath.ErrTooCostly) {
				return fmt.Errorf("entry %q: %w: its %d links take more than %d path steps to check", clipName(name), ErrTooLarge, len(u.order), linkSteps*(len(u.order)+1))
			}
			return fmt.Errorf("entry %q: %w: link target %q %v", clipName(name), ErrUnsafe, clipName(u.targets[name]), err)
		}
	}
	return nil
}

// Readlink makes the archive's entries a rootpath.Links.
func (u *unpacker) Readlink(rel string) (string, bool, error) {
	if u.kinds[rel] != kindLink {
		return "", false, nil
	}
	return u.targets[rel], true, nil
}

// clipName shortens a name or link target quoted in an error.
func clipName(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
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
