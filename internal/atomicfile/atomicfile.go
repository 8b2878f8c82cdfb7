// Package atomicfile writes a regular file so that it appears whole or not
// at all: written under a temporary name beside it, fsynced, given its
// mode, renamed into place, and the folder fsynced. The state file of irq
// pin, snapshots and the node_exporter textfile are written this way.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Write creates or replaces path with what write writes, with the given
// permission bits. On any error the temporary file is removed and path
// is left as it was.
func Write(path string, mode os.FileMode, write func(io.Writer) error) error {
	return write1(path, mode, write, false)
}

// Create is Write that never replaces a file: when path exists, even if
// it appeared while the content was written (another process saving to
// the same name), it fails wrapping fs.ErrExist and path is untouched.
func Create(path string, mode os.FileMode, write func(io.Writer) error) error {
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
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = write(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", tmp, err)
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
