package hosttest

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// tmpfsMagic is statfs's f_type of a tmpfs (linux/magic.h TMPFS_MAGIC).
const tmpfsMagic = 0x01021994

// fastMinFree is the free space a tmpfs needs before Main puts the
// tests' scratch on it: a run of cmd/irqnuma's tests leaves some 300 MB
// there at its peak.
const fastMinFree = 2 << 30

// Main runs a package's tests (m.Run) with TMPDIR on a tmpfs, then exits
// with their code. The tests make many small files (host-tree copies,
// unpacked snapshots, the binaries' own temporary folders, fsynced
// state files): on a virtual disk that is five to ten times slower than
// on a tmpfs, so a plain `go test ./...` would take as long as where its
// caller's TMPDIR happens to be. When TMPDIR is already a tmpfs (make
// test's TESTTMP) it is left alone; else, when /dev/shm is a writable
// tmpfs with 2 GiB free, TMPDIR becomes a folder of this process's own
// there (so t.TempDir, os.TempDir and every command a test starts use
// it), removed when the tests end. A folder a killed run left behind is
// removed by the next run: each holds a lock its process keeps while it
// lives. Where neither holds, TMPDIR stays as it is.
func Main(m *testing.M) {
	dir, release := fastTempDir()
	if dir != "" {
		os.Setenv("TMPDIR", dir)
	}
	code := m.Run()
	release()
	os.Exit(code)
}

// fastTempDir makes this process's folder under /dev/shm as Main says,
// or returns "" when TMPDIR is already a tmpfs or /dev/shm will not do.
// release removes the folder.
func fastTempDir() (dir string, release func()) {
	none := func() {}
	if isTmpfs(os.TempDir(), 0) || !isTmpfs("/dev/shm", fastMinFree) {
		return "", none
	}
	// Short names: a test's unix socket path (t.TempDir()'s, named after
	// the test) must stay under the kernel's 108 bytes.
	base := filepath.Join("/dev/shm", fmt.Sprintf("irqnuma-t%d", os.Getuid()))
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", none
	}
	removeAbandoned(base)
	dir, err := os.MkdirTemp(base, "")
	if err != nil {
		return "", none
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		forceRemove(dir)
		return "", none
	}
	return dir, func() {
		forceRemove(dir)
		lock.Close()
	}
}

// isTmpfs reports whether dir is on a writable tmpfs with at least free
// bytes available.
func isTmpfs(dir string, free uint64) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Type != tmpfsMagic {
		return false
	}
	if st.Bavail*uint64(st.Bsize) < free {
		return false
	}
	return syscall.Access(dir, 2 /* W_OK */) == nil
}

// removeAbandoned removes the run folders under base (every folder in it)
// whose process is
// gone: their lock can be taken. A folder with no lock yet is another
// process's being made, unless it is a minute old.
func removeAbandoned(base string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(base, e.Name())
		f, err := os.Open(filepath.Join(dir, ".lock"))
		if err != nil {
			if fi, serr := e.Info(); serr == nil && time.Since(fi.ModTime()) > time.Minute {
				forceRemove(dir)
			}
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			forceRemove(dir)
		}
		f.Close()
	}
}
