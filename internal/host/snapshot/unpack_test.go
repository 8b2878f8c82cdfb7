package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/untar"
)

// ent is one crafted archive entry.
type ent struct {
	name string
	typ  byte
	link string
	data string
	size int64 // for files: bytes of zeros instead of data when > 0
	mode int64
}

func dirEnt(name string) ent          { return ent{name: name, typ: tar.TypeDir} }
func fileEnt(name, data string) ent   { return ent{name: name, typ: tar.TypeReg, data: data} }
func linkEnt(name, target string) ent { return ent{name: name, typ: tar.TypeSymlink, link: target} }

// craft builds a gzip tar of the entries, as a hostile archive would.
func craft(t *testing.T, ents ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: e.mode, Format: tar.FormatPAX}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		body := []byte(e.data)
		if e.size > 0 {
			body = make([]byte, e.size)
		}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("craft %s: %v", e.name, err)
		}
		if e.typ == tar.TypeReg {
			if _, err := tw.Write(body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// base is a minimal valid tree for crafted archives to extend.
var base = []ent{dirEnt("proc/"), fileEnt("proc/interrupts", "           CPU0\n"), dirEnt("sys/")}

// TestUnpackRefuses covers what a snapshot refuses beyond untar's own
// checks (tested in internal/untar): hard links and devices, which no
// snapshot holds, and a tree with neither proc/ nor sys/ at its top.
// A few of untar's refusals show the bounds reach it.
func TestUnpackRefuses(t *testing.T) {
	tests := []struct {
		name string
		give []ent
		lim  Limits
		want error  // errors.Is
		msg  string // the entry the error names, and why
	}{
		{"dotdot", append(base, fileEnt("../x", "pwned")), Limits{}, ErrUnsafe, `entry "../x": unsafe entry: ".." in name`},
		{"link up and out", append(base, linkEnt("sys/evil", "../../etc")), Limits{}, ErrUnsafe, `entry "sys/evil": unsafe entry: link target "../../etc" leaves the root`},
		{"hard link inside", append(base, ent{name: "proc/h", typ: tar.TypeLink, link: "proc/interrupts"}), Limits{}, ErrUnsafe,
			`entry "proc/h": unsafe entry: hard link to "proc/interrupts"`},
		{"device", append(base, ent{name: "proc/kmem", typ: tar.TypeChar}), Limits{}, ErrUnsafe, `entry "proc/kmem": unsafe entry: type`},
		{"FIFO", append(base, ent{name: "proc/fifo", typ: tar.TypeFifo}), Limits{}, ErrUnsafe, `entry "proc/fifo": unsafe entry: type`},
		{"huge entry", append(base, ent{name: "proc/big", typ: tar.TypeReg, size: 2 << 20}), Limits{MaxFileSize: 1 << 20}, ErrTooLarge,
			`entry "proc/big": over the size bound: 2097152 bytes, more than 1048576`},
		{"bomb", append(base, ent{name: "proc/a", typ: tar.TypeReg, size: 3 << 20}, ent{name: "proc/b", typ: tar.TypeReg, size: 3 << 20}),
			Limits{MaxTotalSize: 5 << 20}, ErrTooLarge, `entry "proc/b": over the size bound: archive holds more than 5242880 bytes`},
		{"too many entries", append(base, dirEnt("sys/a"), dirEnt("sys/b")), Limits{MaxEntries: 4}, ErrTooLarge, `entry "sys/b": over the size bound: more than 4 entries`},
		{"names too long", append(base, dirEnt("sys/a")), Limits{MaxNameBytes: 16}, ErrTooLarge, `names and link targets take more than 16 bytes`},
		{"no proc or sys", []ent{fileEnt("etc/passwd", "x")}, Limits{}, ErrNotSnapshot, "no proc/ or sys/ folder"},
		{"proc a link", []ent{dirEnt("x/"), linkEnt("proc", "x")}, Limits{}, ErrNotSnapshot, "no proc/ or sys/ folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outer := t.TempDir()
			dir := filepath.Join(outer, "root")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			err := unpack(bytes.NewReader(craft(t, tt.give...)), dir, tt.lim)
			if !errors.Is(err, tt.want) || !strings.Contains(fmtErr(err), tt.msg) {
				t.Fatalf("unpack() error = %v, want %v containing %q", err, tt.want, tt.msg)
			}
			// Nothing landed beside the folder.
			got, _ := os.ReadDir(outer)
			if len(got) != 1 {
				t.Errorf("Unpack wrote outside its folder: %v", got)
			}
		})
	}
}

// Snapshot's sentinels are untar's, so errors.Is holds whichever a
// caller names.
func TestUnpackErrorsAreUntars(t *testing.T) {
	if ErrUnsafe != untar.ErrUnsafe || ErrTooLarge != untar.ErrTooLarge {
		t.Error("snapshot.ErrUnsafe or ErrTooLarge is not untar's")
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestUnpackAccepts(t *testing.T) {
	// GNU tar's "./" prefix, folders the archive does not list, links
	// that stay inside (dangling ones too), and a file mode kept.
	ents := []ent{
		dirEnt("./"),
		dirEnt("./proc/"),
		{name: "./proc/irq/5/smp_affinity_list", typ: tar.TypeReg, data: "0-3\n", mode: 0o444},
		linkEnt("./sys/class/net/eth0", "../../devices/pci0000:00/net/eth0"),
		fileEnt("./sys/devices/pci0000:00/net/eth0/speed", "1000\n"),
		linkEnt("./sys/class/net/gone", "../../devices/virtual/net/gone"),
	}
	dir := t.TempDir()
	if err := unpack(bytes.NewReader(craft(t, ents...)), dir, Limits{}); err != nil {
		t.Fatalf("unpack() = %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sys/class/net/eth0/speed"))
	if err != nil || string(b) != "1000\n" {
		t.Errorf("speed through the link = %q, %v", b, err)
	}
	st, err := os.Stat(filepath.Join(dir, "proc/irq/5/smp_affinity_list"))
	if err != nil || st.Mode().Perm() != 0o444 {
		t.Errorf("mode = %v, %v, want 0444", st.Mode().Perm(), err)
	}
}

func TestUnpackNotGzip(t *testing.T) {
	b := craft(t, append(base, fileEnt("proc/big", strings.Repeat("x", 8192)))...)
	var tarOnly bytes.Buffer
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tarOnly.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		give []byte
	}{
		{"text", []byte("proc/interrupts")},
		{"a tar, not gzipped", tarOnly.Bytes()},
		{"gzip of text", gzipped(t, "proc/interrupts\n")},
		{"cut short", b[:len(b)/2]},
	}
	for _, tt := range tests {
		err := unpack(bytes.NewReader(tt.give), t.TempDir(), Limits{})
		if !errors.Is(err, ErrNotSnapshot) {
			t.Errorf("unpack(%s) = %v, want ErrNotSnapshot", tt.name, err)
		}
	}
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOpenCleansUpOnError(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	file := filepath.Join(t.TempDir(), "evil.tar.gz")
	if err := os.WriteFile(file, craft(t, append(base, linkEnt("sys/evil", "/"))...), 0o644); err != nil {
		t.Fatal(err)
	}
	if !IsArchive(file) {
		t.Fatal("IsArchive = false for a gzip file")
	}
	_, _, err := Open(context.Background(), file, Limits{})
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), file) {
		t.Errorf("Open() error = %v, want ErrUnsafe naming the file", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("Open left %v in TMPDIR", left)
	}
	if IsArchive(tmp) || IsArchive(filepath.Join(tmp, "nope")) {
		t.Error("IsArchive true for a folder or a missing file")
	}
}
