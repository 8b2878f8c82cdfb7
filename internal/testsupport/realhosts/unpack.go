package realhosts

import (
	"archive/tar"
	"bufio"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/internal/untar"
)

// Bounds that keep a damaged or hostile archive from filling the disk.
const (
	maxEntrySize = 64 << 20 // one file
	maxTotalSize = 1 << 30  // the whole archive, unpacked
)

// Root returns the folder that holds proc/ and/or sys/ of c's archive,
// unpacked once and shared: by every test of the process, and by every
// test process that uses the same temporary folder (go test runs one per
// package), so the eleven captures are unpacked once per run, not once per
// test. The tree is read-only (write bits cleared on every file and
// folder); a test that writes to a capture uses Unpack instead.
//
// The cache lives in os.TempDir() under irqnuma-realhosts-<uid>, one
// folder per archive content (its SHA-256) and unpacker version, made by
// unpacking into a private folder and renaming it into place, so
// concurrent test processes never see a half-made tree.
func Root(t testing.TB, c Capture) string {
	t.Helper()
	dir, err := cached(c.Archive)
	if err != nil {
		t.Fatalf("unpack capture %s: %v", c.Name, err)
	}
	root, err := hostRoot(dir)
	if err != nil {
		t.Fatalf("unpack capture %s: %v", c.Name, err)
	}
	return root
}

// Unpack unpacks c's archive into a fresh t.TempDir() and returns the folder
// that holds proc/ and/or sys/: the temporary folder itself for the
// sysinfo.tgz captures, the one folder below it for the hwloc archives (whose
// folder names differ from the archive names, e.g. 48amd64-4d2n6c-sparse).
// Each call unpacks afresh, so the test may write to the tree; tests that
// only read use Root.
//
// Unpacking is internal/untar's, as for snapshot files: entries whose names
// or symlink targets leave the folder are refused. Directories, regular
// files, symlinks and hard links to files unpacked before them are kept;
// device and FIFO entries are skipped. Directories are made 0755 and files
// keep their recorded mode with owner read-write added, so the tree can be
// written and cleaned up; modification times are not restored.
func Unpack(t testing.TB, c Capture) string {
	t.Helper()
	dst := t.TempDir()
	if err := unpack(c.Archive, dst); err != nil {
		t.Fatalf("unpack capture %s: %v", c.Name, err)
	}
	root, err := hostRoot(dst)
	if err != nil {
		t.Fatalf("unpack capture %s: %v", c.Name, err)
	}
	return root
}

// cacheVersion names the unpacker's output: change it when unpack or
// readOnly change what a cached tree holds, so stale trees are not used.
// v2: unpacked by internal/untar.
const cacheVersion = "v2"

var (
	cacheMu sync.Mutex
	cacheOf = map[string]string{} // archive path -> cached folder
)

// cached returns the shared read-only unpacked copy of archive, making it
// when no process has yet.
func cached(archive string) (string, error) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if dir, ok := cacheOf[archive]; ok {
		return dir, nil
	}
	sum, err := fileSHA256(archive)
	if err != nil {
		return "", err
	}
	base := filepath.Join(os.TempDir(), fmt.Sprintf("irqnuma-realhosts-%d", os.Getuid()))
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	cleanOnce.Do(func() { clean(base) })
	dir := filepath.Join(base, cacheVersion+"-"+sum[:24])
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		cacheOf[archive] = dir
		return dir, nil
	}
	tmp, err := os.MkdirTemp(base, "unpacking-")
	if err != nil {
		return "", err
	}
	defer removeTree(tmp) // a no-op once renamed
	if err := unpack(archive, tmp); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o444); err != nil {
		return "", err
	}
	if err := readOnly(tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process made it first: use theirs.
		if _, serr := os.Stat(filepath.Join(dir, ".complete")); serr != nil {
			return "", err
		}
	}
	cacheOf[archive] = dir
	return dir, nil
}

var cleanOnce sync.Once

// clean removes what earlier runs left in base that this one will not
// use: trees of another unpacker version, and private folders of runs
// killed while unpacking (older than ten minutes, so a concurrent
// process's folder is left alone).
func clean(base string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, cacheVersion+"-"):
		case strings.HasPrefix(name, "unpacking-"):
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > 10*time.Minute {
				removeTree(filepath.Join(base, name))
			}
		default:
			removeTree(filepath.Join(base, name))
		}
	}
}

func fileSHA256(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// readOnly clears the write bits of every file and folder under dir,
// folders last so the walk can finish.
func readOnly(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			dirs = append(dirs, p)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return os.Chmod(p, fi.Mode().Perm()&^0o222)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i], 0o555); err != nil {
			return err
		}
	}
	return nil
}

// removeTree removes dir even when readOnly has made its folders
// read-only.
func removeTree(dir string) {
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

// openArchive returns a tar reader over the archive at p; close the returned
// closer when done.
func openArchive(p string) (*tar.Reader, io.Closer, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	var r io.Reader
	switch {
	case strings.HasSuffix(p, ".tgz"), strings.HasSuffix(p, ".tar.gz"):
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("read %s: %w", p, err)
		}
		r = zr
	case strings.HasSuffix(p, ".tar.bz2"):
		r = bzip2.NewReader(br)
	default:
		f.Close()
		return nil, nil, fmt.Errorf("read %s: unknown archive type", p)
	}
	return tar.NewReader(r), f, nil
}

// unpack unpacks archive into dst, an existing empty folder, with the
// one safe unpacker the snapshot files use too, loosened only where the
// captures need it: they hold hard links (kept when their target is a
// file unpacked before them) and devices and FIFOs (skipped), and their
// files are made owner-writable so a test may write to the tree.
func unpack(archive, dst string) error {
	tr, closer, err := openArchive(archive)
	if err != nil {
		return err
	}
	defer closer.Close()
	err = untar.Unpack(context.Background(), tr, dst, untar.Options{
		MaxFileSize:   maxEntrySize,
		MaxTotalSize:  maxTotalSize,
		HardLinks:     true,
		SkipSpecial:   true,
		OwnerWritable: true,
	})
	if err != nil {
		return fmt.Errorf("unpack %s: %w", archive, err)
	}
	return nil
}

// hostRoot returns dir when it holds proc/ or sys/, else its one
// subfolder that does.
func hostRoot(dir string) (string, error) {
	if holdsHost(dir) {
		return dir, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var found []string
	for _, e := range ents {
		if sub := filepath.Join(dir, e.Name()); e.IsDir() && holdsHost(sub) {
			found = append(found, sub)
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("want one folder holding proc/ or sys/ in the archive, found %d", len(found))
	}
	return found[0], nil
}

func holdsHost(dir string) bool {
	for _, n := range []string{"proc", "sys"} {
		if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// readArchiveFile returns the contents of the regular file called name in
// the archive, without unpacking the rest.
func readArchiveFile(archive, name string) ([]byte, error) {
	tr, closer, err := openArchive(archive)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read %s: no %s in the archive: %w", archive, name, os.ErrNotExist)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", archive, err)
		}
		if hdr.Typeflag != tar.TypeReg || path.Clean(strings.TrimPrefix(hdr.Name, "./")) != name {
			continue
		}
		if hdr.Size > maxEntrySize {
			return nil, fmt.Errorf("read %s: %s is %d bytes", archive, name, hdr.Size)
		}
		return io.ReadAll(io.LimitReader(tr, hdr.Size))
	}
}
