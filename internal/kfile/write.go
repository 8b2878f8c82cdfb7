package kfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// The write side of FS: what irqnuma creates under a root (its lock, its
// state folder and files) and the kernel files it writes in place. Every
// folder on the way is opened as every read opens it (links followed
// inside the root, never out of it), and the last name is then made,
// opened, renamed or removed relative to that folder's descriptor, so a
// link planted in a tree cannot send a write anywhere else. A link at the
// last name of a file irqnuma makes is refused (ELOOP): irqnuma never
// makes one there.

// ErrNoTmpfile is returned by CreateTemp where the file system cannot make
// an unnamed file (O_TMPFILE).
var ErrNoTmpfile = errors.New("unnamed temporary files not supported here")

// MkdirAll makes the folder p and any parents missing, with mode perm,
// each inside the root. A name on the way that is a link to nothing
// (inside the root) is refused rather than followed.
func (f FS) MkdirAll(p string, perm os.FileMode) error {
	fd, err := f.open(p, unix.O_PATH|unix.O_DIRECTORY)
	if err == nil {
		unix.Close(fd)
		return nil
	}
	if err != unix.ENOENT {
		return pathErr("mkdir", p, err)
	}
	parent := filepath.Dir(filepath.Clean(p))
	if parent == filepath.Clean(p) {
		return pathErr("mkdir", p, err)
	}
	if err := f.MkdirAll(parent, perm); err != nil {
		return err
	}
	pfd, base, err := f.parent(p)
	if err != nil {
		return pathErr("mkdir", p, err)
	}
	defer unix.Close(pfd)
	err = unix.Mkdirat(pfd, base, uint32(perm.Perm()))
	if err == unix.EEXIST {
		// Made by another run meanwhile, or a link: a folder it leads
		// to inside the root is fine, anything else is not.
		var st unix.Stat_t
		if serr := unix.Fstatat(pfd, base, &st, 0); serr == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			if fd, oerr := f.open(p, unix.O_PATH|unix.O_DIRECTORY); oerr == nil {
				unix.Close(fd)
				return nil
			}
		}
		return fmt.Errorf("mkdir %s: exists and is not a folder inside %s (a file, or a link leading elsewhere)", p, f.root)
	}
	if err != nil {
		return pathErr("mkdir", p, err)
	}
	return nil
}

// CreateFile opens the regular file p for writing (flag as os.OpenFile:
// O_RDWR or O_WRONLY, with O_CREATE, O_EXCL, O_TRUNC as wanted), making it
// with mode perm. A link at p is refused (ELOOP) and so is anything but a
// regular file, before a byte is written.
func (f FS) CreateFile(p string, flag int, perm os.FileMode) (*os.File, error) {
	pfd, base, err := f.parent(p)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	defer unix.Close(pfd)
	trunc := flag&unix.O_TRUNC != 0
	flags := (flag &^ unix.O_TRUNC) | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
	fd, err := retryEINTR(func() (int, error) { return unix.Openat(pfd, base, flags, uint32(perm.Perm())) })
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	file, err := regularFile(fd, p)
	if err != nil {
		return nil, err
	}
	if trunc {
		if err := file.Truncate(0); err != nil {
			file.Close()
			return nil, err
		}
	}
	return file, nil
}

// regularFile makes fd an *os.File for blocking I/O, once fstat says it is
// a regular file; otherwise it closes fd.
func regularFile(fd int, p string) (*os.File, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, pathErr("stat", p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, fmt.Errorf("open %s: not a regular file (%v)", p, newFileInfo("", &st).Mode().Type())
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, pathErr("open", p, err)
	}
	return os.NewFile(uintptr(fd), p), nil
}

// CreateTemp makes an unnamed regular file (O_TMPFILE) in the folder dir
// with mode perm, for Link to give a name once it is whole: a run killed
// before that leaves nothing behind. It returns ErrNoTmpfile where the
// file system cannot.
func (f FS) CreateTemp(dir string, perm os.FileMode) (*os.File, error) {
	dfd, err := f.open(dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, pathErr("open", dir, err)
	}
	defer unix.Close(dfd)
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(perm.Perm()))
	})
	switch err {
	case nil:
	case unix.EOPNOTSUPP, unix.EISDIR, unix.EINVAL:
		return nil, fmt.Errorf("create in %s: %w", dir, ErrNoTmpfile)
	default:
		return nil, pathErr("create", dir, err)
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed)")), nil
}

// Link gives the unnamed file tmp (from CreateTemp) the name p. It never
// replaces: when p exists it fails wrapping fs.ErrExist.
func (f FS) Link(tmp *os.File, p string) error {
	pfd, base, err := f.parent(p)
	if err != nil {
		return pathErr("link", p, err)
	}
	defer unix.Close(pfd)
	// AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; the /proc/self/fd link
	// does the same for anyone where /proc is mounted.
	err = unix.Linkat(int(tmp.Fd()), "", pfd, base, unix.AT_EMPTY_PATH)
	if err == unix.ENOENT || err == unix.EPERM {
		err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(tmp.Fd())), pfd, base, unix.AT_SYMLINK_FOLLOW)
	}
	if err != nil {
		return pathErr("link", p, err)
	}
	return nil
}

// Rename renames oldp to newp, both inside the root; a link at either's
// last name is renamed itself, never followed. With noReplace an existing
// newp fails wrapping fs.ErrExist.
func (f FS) Rename(oldp, newp string, noReplace bool) error {
	ofd, obase, err := f.parent(oldp)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldp, New: newp, Err: UnwrapPath(err)}
	}
	defer unix.Close(ofd)
	nfd, nbase, err := f.parent(newp)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldp, New: newp, Err: UnwrapPath(err)}
	}
	defer unix.Close(nfd)
	var flags uint
	if noReplace {
		flags = unix.RENAME_NOREPLACE
	}
	if err := unix.Renameat2(ofd, obase, nfd, nbase, flags); err != nil {
		return &os.LinkError{Op: "rename", Old: oldp, New: newp, Err: err}
	}
	return nil
}

// Remove removes the file p (a link at p is removed itself).
func (f FS) Remove(p string) error {
	pfd, base, err := f.parent(p)
	if err != nil {
		return pathErr("remove", p, err)
	}
	defer unix.Close(pfd)
	if err := unix.Unlinkat(pfd, base, 0); err != nil {
		return pathErr("remove", p, err)
	}
	return nil
}

// SyncDir fsyncs the folder p, so that names made in it last.
func (f FS) SyncDir(p string) error {
	fd, err := f.open(p, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return pathErr("open", p, err)
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil {
		return fmt.Errorf("fsync %s: %w", p, err)
	}
	return nil
}

// IsKernel reports whether the open file is one of the kernel's own
// (procfs or sysfs), whose writes the kernel parses, as opposed to a
// copy in a host tree.
func IsKernel(file *os.File) (bool, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(file.Fd()), &st); err != nil {
		return false, &fs.PathError{Op: "statfs", Path: file.Name(), Err: err}
	}
	return st.Type == unix.PROC_SUPER_MAGIC || st.Type == unix.SYSFS_MAGIC, nil
}

// OpenKernelFile opens an existing file irqnuma writes in place (an IRQ's
// affinity, a queue's xps_cpus) for writing, never making it: links on the
// way are followed inside the root. Outside procfs and sysfs (a host
// tree's copy) it must be a regular file.
func (f FS) OpenKernelFile(p string) (file *os.File, err error) {
	defer func() { f.trace(OpWrite, p, err) }()
	fd, err := f.open(p, unix.O_WRONLY)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		unix.Close(fd)
		return nil, pathErr("statfs", p, err)
	}
	if st.Type == unix.PROC_SUPER_MAGIC || st.Type == unix.SYSFS_MAGIC {
		if err := unix.SetNonblock(fd, false); err != nil {
			unix.Close(fd)
			return nil, pathErr("open", p, err)
		}
		return os.NewFile(uintptr(fd), p), nil
	}
	return regularFile(fd, p)
}

// UnwrapPath keeps the errno of an *fs.PathError.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// IsKernelPath reports whether p, links followed inside the root, is one
// of the kernel's own files (procfs or sysfs).
func (f FS) IsKernelPath(p string) (kernel bool, err error) {
	defer func() { f.trace(OpStat, p, err) }()
	fd, err := f.open(p, unix.O_PATH)
	if err != nil {
		return false, pathErr("statfs", p, err)
	}
	defer unix.Close(fd)
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return false, pathErr("statfs", p, err)
	}
	return st.Type == unix.PROC_SUPER_MAGIC || st.Type == unix.SYSFS_MAGIC, nil
}
