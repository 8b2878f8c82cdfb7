// Package atomicfile writes a regular file so that it appears whole or not
// at all: written under a temporary name beside it, fsynced, given its
// mode, renamed into place, and the folder fsynced. Snapshots and the
// node_exporter textfile are written this way; the state file of irq pin,
// under a host root, is written with CreateIn.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/kfile"
)

// Write creates or replaces path with what write writes, with the given
// permission bits. On any error the temporary file is removed and path
// is left as it was.
func Write(path string, mode os.FileMode, write func(io.Writer) error) error {
	return write1(path, mode, write, false)
}

// create is Write that never replaces a file: when path exists, even if
// it appeared while the content was written (another process saving to
// the same name), it fails wrapping fs.ErrExist and path is untouched.
func create(path string, mode os.FileMode, write func(io.Writer) error) error {
	return write1(path, mode, write, true)
}

func write1(path string, mode os.FileMode, write func(io.Writer) error, noReplace bool) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = fill(f, tmp, mode, write); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if noReplace {
		// renameat2(RENAME_NOREPLACE) checks and renames in one step.
		if err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE); err != nil {
			return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
		}
	} else if err = os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err = d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// fill gives the new file f its mode, writes its content and syncs it;
// name is f's name in errors.
func fill(f *os.File, name string, mode os.FileMode, write func(io.Writer) error) error {
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", name, err)
	}
	return nil
}

// CreateIn is Create for a file under a host root: every folder on the way
// is resolved inside fsys's root (kfile.FS), a link at path is never
// followed, and the content is written to an unnamed file (O_TMPFILE)
// that gets its name only once whole and synced, so a run killed midway
// leaves no temporary file behind. Where the file system has no unnamed
// files, a named temporary beside path is used and removed on failure;
// one left by a killed run matches TempPattern and RemoveTemps removes it.
func CreateIn(fsys kfile.FS, path string, mode os.FileMode, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := createTemp(fsys, dir, mode)
	if errors.Is(err, kfile.ErrNoTmpfile) {
		return createNamedIn(fsys, path, mode, write)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err = fill(f, path, mode, write); err != nil {
		return err
	}
	if err = fsys.Link(f, path); err != nil {
		return err
	}
	return fsys.SyncDir(dir)
}

// createTemp is kfile.FS.CreateTemp, replaced by tests to exercise the
// named fallback.
var createTemp = kfile.FS.CreateTemp

// ReplaceIn is CreateIn that replaces path when it exists: what write
// writes goes to a named temporary file beside path, resolved inside
// fsys's root, which is synced, given mode and renamed over path (a link
// at path is replaced, never followed), and the folder synced. On any
// error the temporary file is removed and path is left as it was; a run
// killed midway leaves the temporary, which matches TempPattern.
func ReplaceIn(fsys kfile.FS, path string, mode os.FileMode, write func(io.Writer) error) error {
	return namedIn(fsys, path, mode, write, false)
}

// createNamedIn is CreateIn through a named temporary file.
func createNamedIn(fsys kfile.FS, path string, mode os.FileMode, write func(io.Writer) error) error {
	return namedIn(fsys, path, mode, write, true)
}

// namedIn writes path under fsys through a named temporary file.
func namedIn(fsys kfile.FS, path string, mode os.FileMode, write func(io.Writer) error, noReplace bool) (err error) {
	dir := filepath.Dir(path)
	var f *os.File
	var tmp string
	for try := 0; ; try++ {
		tmp = filepath.Join(dir, "."+filepath.Base(path)+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err = fsys.CreateFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
		if !errors.Is(err, fs.ErrExist) || try == 10 {
			break
		}
	}
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			fsys.Remove(tmp)
		}
	}()
	if err = fill(f, tmp, mode, write); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = fsys.Rename(tmp, path, noReplace); err != nil {
		return err
	}
	return fsys.SyncDir(dir)
}

// isTemp reports whether name is that of a temporary file Write, Create or
// CreateIn make beside a file: ".<name>.<random>.tmp".
func isTemp(name string) bool {
	return len(name) > len("..x.tmp") && strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp")
}

// RemoveTemps removes the temporary files (IsTemp) that a killed run left
// in the folder dir under fsys's root. The caller makes sure no other
// writer uses dir meanwhile (irqnuma holds the root's lock).
func RemoveTemps(fsys kfile.FS, dir string) error {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		if e.Type().IsRegular() && isTemp(e.Name()) {
			if err := fsys.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
