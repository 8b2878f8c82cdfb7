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
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/irqnuma/irqnuma/internal/untar"
)

// ErrUnsafe is wrapped by errors for an archive entry that would land
// outside the folder it is unpacked into, or is of a kind a snapshot
// never holds (hard links, devices, FIFOs). It is untar.ErrUnsafe.
var ErrUnsafe = untar.ErrUnsafe

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

// options returns the untar options of a snapshot: l's bounds with
// snapshot's defaults, and none of the entries a snapshot never holds.
func (l Limits) options() untar.Options {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = DefaultMaxFileSize
	}
	if l.MaxTotalSize <= 0 {
		l.MaxTotalSize = DefaultMaxTotalSize
	}
	return untar.Options{
		MaxEntries:   l.MaxEntries,
		MaxFileSize:  l.MaxFileSize,
		MaxTotalSize: l.MaxTotalSize,
		MaxNameBytes: l.MaxNameBytes, // 0: untar's default
	}
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
// before removing theirs are moved aside and removed in the background,
// a bounded part per call (CleanStale).
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
	// Count first: an archive over the bounds (a million empty entries)
	// is refused for the price of reading its headers, before any inode
	// is made for it.
	err = count(ctx, f, lim)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err == nil {
		err = unpackContext(ctx, bufio.NewReader(f), dir, lim)
	}
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("snapshot %s: %w", name, err)
	}
	return dir, cleanup, nil
}

// staleBudget bounds the entries one CleanStale removes: a killed
// unpack can leave DefaultMaxEntries of them, seconds of unlinking that
// the next command must not pay for. Each run takes its share, in the
// background, until none is left.
const staleBudget = 8192

// staleInfix marks a folder of Open's that CleanStale moved aside for
// removal: its name has no process id, so it is never taken for a live
// run's.
const staleInfix = "stale-"

// CleanStale moves aside the temporary folders of Open whose process is
// gone (a run killed with SIGKILL, or by the OOM killer, cannot remove
// its own), and removes what was moved aside, at most a few thousand
// entries a call, in the background: a folder of a quarter of a million
// files costs the caller one rename, not seconds. The channel is closed
// when the background removal ends; callers need not wait for it.
func CleanStale() <-chan struct{} { return cleanStale(staleBudget) }

func cleanStale(budget int) <-chan struct{} {
	done := make(chan struct{})
	tmp := os.TempDir()
	ents, err := os.ReadDir(tmp)
	if err != nil {
		close(done)
		return done
	}
	var aside []string
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		if strings.HasPrefix(rest, staleInfix) {
			aside = append(aside, filepath.Join(tmp, e.Name()))
			continue
		}
		pidStr, suffix, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			to := filepath.Join(tmp, tempPrefix+staleInfix+pidStr+"-"+suffix)
			if os.Rename(filepath.Join(tmp, e.Name()), to) == nil {
				aside = append(aside, to)
			}
		}
	}
	if len(aside) == 0 {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		for _, d := range aside {
			if budget = removeSome(d, budget); budget <= 0 {
				return
			}
		}
	}()
	return done
}

// removeSome removes the folder dir and what it holds, depth first, up
// to budget entries, and returns the budget left. Whatever it leaves, a
// later call removes. Errors stop it quietly: another run may be
// removing the same folder, and what remains is tried again.
func removeSome(dir string, budget int) int {
	f, err := os.Open(dir)
	if err != nil {
		return budget
	}
	for budget > 0 {
		names, err := f.Readdirnames(256)
		for _, n := range names {
			if budget <= 0 {
				break
			}
			p := filepath.Join(dir, n)
			if os.Remove(p) == nil {
				budget--
				continue
			}
			budget = removeSome(p, budget) // a folder, not empty
		}
		if err != nil || len(names) == 0 {
			break
		}
	}
	f.Close()
	if budget > 0 && os.Remove(dir) == nil {
		budget--
	}
	return budget
}

// unpack reads a gzip tar from r into dir, an existing empty folder, with
// internal/untar: every entry is checked before anything is written for
// it, and a refused entry is an error naming it, wrapping ErrUnsafe or
// ErrTooLarge. Hard links, devices and FIFOs are refused. Folders are
// made 0755 whatever the archive says; files keep their permission bits,
// which carry meaning in /proc/irq.
func unpack(r io.Reader, dir string, lim Limits) error {
	return unpackContext(context.Background(), r, dir, lim)
}

// unpackContext is Unpack that stops, with ctx's error, when ctx ends.
func unpackContext(ctx context.Context, r io.Reader, dir string, lim Limits) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotSnapshot, err)
	}
	err = untar.Unpack(ctx, tar.NewReader(zr), dir, lim.options())
	if errors.Is(err, untar.ErrFormat) {
		return fmt.Errorf("%w: %w", ErrNotSnapshot, err)
	}
	if err != nil {
		return err
	}
	if !isDir(filepath.Join(dir, "proc")) && !isDir(filepath.Join(dir, "sys")) {
		return fmt.Errorf("%w: no proc/ or sys/ folder at its top level", ErrNotSnapshot)
	}
	return nil
}

// count reads the headers of the gzip tar r against lim's bounds,
// writing nothing (untar.Count).
func count(ctx context.Context, r io.Reader, lim Limits) error {
	zr, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotSnapshot, err)
	}
	_, err = untar.Count(ctx, tar.NewReader(zr), lim.options())
	if errors.Is(err, untar.ErrFormat) {
		return fmt.Errorf("%w: %w", ErrNotSnapshot, err)
	}
	return err
}

// isDir reports whether p is a folder, not a link to one.
func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}
