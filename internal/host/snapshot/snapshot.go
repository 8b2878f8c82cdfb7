// Package snapshot captures the files irqnuma reads under a host root into
// a gzip-compressed tar, and unpacks such a file safely into a folder that
// every reader takes as a root.
//
// An archive's top level holds proc/ and sys/ (and the few etc/, usr/ and
// var/lib/irqnuma files irqnuma reads) exactly as the readers find them:
// symlinks are kept as symlinks, file modes are kept (a read-only
// smp_affinity is how a managed IRQ is told), and pseudo-files are read to
// their end rather than trusting the 0 or 4096 bytes stat reports. Only
// what irqnuma reads is captured, so an archive of a big host stays small
// and holds no unrelated data.
//
// Unpacking refuses, naming the entry, anything that would land outside
// the folder: absolute names, ".." components, links whose target leaves
// the folder, entries under a link, hard links and device files; and it
// bounds the entry count, each entry's size and the total size against
// archive bombs.
package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/irqnuma/irqnuma/internal/atomicfile"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/untar"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// Default bounds. /proc/interrupts of a 1,152-CPU host with thousands of
// IRQs is a few tens of MB, and a whole capture of such a host is well
// under 100 MB before compression. Such a host captures about a dozen
// entries per CPU and per IRQ and two per process: some 100,000 with
// 2,000 IRQs and 30,000 processes. Opening counts the entries before it
// makes any, at a few microseconds each, so refusing an archive over
// DefaultMaxEntries costs under a second of CPU.
const (
	DefaultMaxFileSize  = kfile.MaxSize // one file
	DefaultMaxTotalSize = 1 << 30       // all files, uncompressed
	DefaultMaxEntries   = 1 << 18       // files, folders and links
)

// ErrTooLarge is wrapped by errors for a file, or a whole capture or
// archive, over its bound. It is untar.ErrTooLarge, which unpacking
// wraps.
var ErrTooLarge = untar.ErrTooLarge

// Options says what to capture beyond the host-wide files.
type Options struct {
	// Processes names the processes to capture in full (status, stat,
	// numa_maps and every thread's stat and status, and for which NIC
	// they use their socket fd links, network namespace and its socket
	// and route tables), as audit --pid and --comm read them. Every
	// process's comm is captured regardless.
	Processes proc.Selection
	// MaxFileSize bounds one file and MaxTotalSize the sum of all files;
	// 0 means the defaults.
	MaxFileSize  int64
	MaxTotalSize int64
	// Time stamps the entries; the zero value means now.
	Time time.Time
}

func (o Options) maxFile() int64 {
	if o.MaxFileSize > 0 {
		return o.MaxFileSize
	}
	return DefaultMaxFileSize
}

func (o Options) maxTotal() int64 {
	if o.MaxTotalSize > 0 {
		return o.MaxTotalSize
	}
	return DefaultMaxTotalSize
}

// Result says what a capture holds.
type Result struct {
	Files, Links, Dirs int
	Bytes              int64 // file contents, before compression
	// Notes name what exists under the root but could not be captured
	// (unreadable files, links that leave the root), one line each.
	Notes []string
}

// Write captures what irqnuma reads under root and writes it to w as a
// gzip-compressed tar.
func Write(w io.Writer, fsys kfile.FS, opts Options) (Result, error) {
	root := fsys.Root()
	st, err := os.Stat(root)
	if err != nil {
		return Result{}, fmt.Errorf("snapshot root: %w", err)
	}
	if !st.IsDir() {
		return Result{}, fmt.Errorf("snapshot root %s: not a directory", root)
	}
	_, perr := fsys.Stat(fsys.Path("proc"))
	_, serr := fsys.Stat(fsys.Path("sys"))
	if perr != nil && serr != nil {
		return Result{}, fmt.Errorf("snapshot root %s: holds neither proc/ nor sys/", root)
	}
	zw := gzip.NewWriter(w)
	a := &archive{tw: tar.NewWriter(zw), time: opts.Time, max: opts.maxTotal()}
	if a.time.IsZero() {
		a.time = time.Now()
	}
	c := &capturer{root: root, fs: fsys, opts: opts, w: a,
		links: map[string]string{}, dirs: map[string]bool{}, files: map[string]bool{}, noted: map[string]bool{}}
	err = c.capture()
	if err == nil {
		err = a.err
	}
	if err == nil {
		err = a.tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	res := Result{Files: a.files, Links: a.links, Dirs: a.dirs, Bytes: a.bytes, Notes: c.notes}
	if err != nil {
		return res, fmt.Errorf("snapshot of %s: %w", root, err)
	}
	return res, nil
}

// ErrName is wrapped by Create's error for a name that does not end in
// .tar.gz or .tgz: "-o json" meant for the output format must not write
// an archive called json.
var ErrName = usage.New("a snapshot is a .tar.gz")

// Create writes a snapshot of root to the file name, or to stdout when
// name is "-". The file appears whole or not at all: it is written
// beside name and renamed into place.
func Create(name string, stdout io.Writer, fsys kfile.FS, opts Options) (Result, error) {
	if name == "-" {
		return Write(stdout, fsys, opts)
	}
	if !strings.HasSuffix(name, ".tar.gz") && !strings.HasSuffix(name, ".tgz") {
		return Result{}, fmt.Errorf("snapshot %s: %w: name it %s.tar.gz (or - for stdout)", name, ErrName, strings.TrimSuffix(name, ".tar"))
	}
	var res Result
	var werr error // Write's own error names the snapshot already
	err := atomicfile.Write(name, 0o644, func(w io.Writer) error {
		res, werr = Write(w, fsys, opts)
		return werr
	})
	if err != nil && werr == nil {
		err = fmt.Errorf("snapshot %s: %w", name, err)
	}
	return res, err
}

// archive writes tar entries, counting them and bounding the total.
type archive struct {
	tw                 *tar.Writer
	time               time.Time
	max                int64
	files, links, dirs int
	entries            int // headers written: Open refuses more than DefaultMaxEntries
	bytes              int64
	err                error // the first write error; later writes are dropped
}

func (a *archive) header(h *tar.Header) error {
	if a.err != nil {
		return a.err
	}
	if a.entries++; a.entries > DefaultMaxEntries {
		a.err = fmt.Errorf("/%s: capture %w of %d entries", strings.TrimSuffix(h.Name, "/"), ErrTooLarge, DefaultMaxEntries)
		return a.err
	}
	h.ModTime = a.time
	if err := a.tw.WriteHeader(h); err != nil {
		a.err = fmt.Errorf("write %s: %w", h.Name, err)
	}
	return a.err
}

func (a *archive) dir(rel string) error {
	a.dirs++
	return a.header(&tar.Header{Typeflag: tar.TypeDir, Name: rel + "/", Mode: 0o755})
}

func (a *archive) link(rel, target string) error {
	a.links++
	return a.header(&tar.Header{Typeflag: tar.TypeSymlink, Name: rel, Linkname: target, Mode: 0o777})
}

func (a *archive) file(rel string, data []byte, mode os.FileMode) error {
	return a.fileFrom(rel, bytes.NewReader(data), int64(len(data)), mode)
}

// fileFrom writes a file of size bytes read from r.
func (a *archive) fileFrom(rel string, r io.Reader, size int64, mode os.FileMode) error {
	if a.bytes+size > a.max {
		a.err = fmt.Errorf("/%s: capture %w of %d bytes", rel, ErrTooLarge, a.max)
		return a.err
	}
	a.files++
	a.bytes += size
	if err := a.header(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: int64(mode), Size: size}); err != nil {
		return err
	}
	if _, err := io.CopyN(a.tw, r, size); err != nil {
		a.err = fmt.Errorf("write %s: %w", rel, err)
	}
	return a.err
}
