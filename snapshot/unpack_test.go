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

func TestUnpackRefuses(t *testing.T) {
	tests := []struct {
		name string
		give []ent
		lim  Limits
		want error  // errors.Is
		msg  string // the entry the error names, and why
	}{
		{"dotdot", []ent{fileEnt("../x", "pwned")}, Limits{}, ErrUnsafe, `entry "../x": unsafe entry: ".." in name`},
		{"dotdot inside", []ent{fileEnt("proc/../../x", "pwned")}, Limits{}, ErrUnsafe, `entry "proc/../../x"`},
		{"absolute", []ent{fileEnt("/etc/x", "pwned")}, Limits{}, ErrUnsafe, `entry "/etc/x": unsafe entry: absolute name`},
		{"link to root", []ent{linkEnt("sys/evil", "/")}, Limits{}, ErrUnsafe, `entry "sys/evil": unsafe entry: link target "/" is absolute`},
		{"link up and out", []ent{linkEnt("sys/evil", "../../etc")}, Limits{}, ErrUnsafe, `entry "sys/evil": unsafe entry: link target "../../etc" leaves the root`},
		{"file through link", []ent{linkEnt("sys/l", "../proc"), fileEnt("sys/l/x", "y")}, Limits{}, ErrUnsafe,
			`entry "sys/l/x": unsafe entry: its folder sys/l is a symbolic link`},
		{"file through link to root", []ent{linkEnt("l", "."), fileEnt("l/x", "y")}, Limits{}, ErrUnsafe,
			`entry "l/x": unsafe entry: its folder l is a symbolic link`},
		{"link through link", []ent{dirEnt("sys/x/"), linkEnt("sys/x/s", "../y"), linkEnt("sys/x/t", "s/../../..")}, Limits{}, ErrUnsafe,
			`entry "sys/x/t": unsafe entry: link target "s/../../.." leaves the root`},
		{"hard link out", []ent{{name: "proc/h", typ: tar.TypeLink, link: "/etc/shadow"}}, Limits{}, ErrUnsafe,
			`entry "proc/h": unsafe entry: hard link to "/etc/shadow"`},
		{"hard link inside", []ent{{name: "proc/h", typ: tar.TypeLink, link: "proc/interrupts"}}, Limits{}, ErrUnsafe, `entry "proc/h"`},
		{"device", []ent{{name: "proc/kmem", typ: tar.TypeChar}}, Limits{}, ErrUnsafe, `entry "proc/kmem": unsafe entry: type`},
		{"replace file by link", []ent{linkEnt("proc/interrupts", "../sys")}, Limits{}, ErrUnsafe, `entry "proc/interrupts": unsafe entry: it appears twice`},
		{"huge entry", []ent{{name: "proc/big", typ: tar.TypeReg, size: 2 << 20}}, Limits{MaxFileSize: 1 << 20}, ErrTooLarge,
			`entry "proc/big": over the size bound: 2097152 bytes, more than 1048576`},
		{"bomb", []ent{{name: "proc/a", typ: tar.TypeReg, size: 3 << 20}, {name: "proc/b", typ: tar.TypeReg, size: 3 << 20}},
			Limits{MaxTotalSize: 5 << 20}, ErrTooLarge, `entry "proc/b": over the size bound: archive holds more than 5242880 bytes`},
		{"too many entries", []ent{dirEnt("sys/a"), dirEnt("sys/b")}, Limits{MaxEntries: 4}, ErrTooLarge, `entry "sys/b": over the size bound: more than 4 entries`},
		{"no proc or sys", nil, Limits{}, ErrNotSnapshot, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ents := []ent{fileEnt("etc/passwd", "x")}
			if tt.name != "no proc or sys" {
				ents = append(append([]ent{}, base...), tt.give...)
			}
			outer := t.TempDir()
			dir := filepath.Join(outer, "root")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			err := Unpack(bytes.NewReader(craft(t, ents...)), dir, tt.lim)
			if !errors.Is(err, tt.want) || !strings.Contains(fmtErr(err), tt.msg) {
				t.Fatalf("Unpack() error = %v, want %v containing %q", err, tt.want, tt.msg)
			}
			// Nothing landed beside the folder.
			got, _ := os.ReadDir(outer)
			if len(got) != 1 {
				t.Errorf("Unpack wrote outside its folder: %v", got)
			}
		})
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
	if err := Unpack(bytes.NewReader(craft(t, ents...)), dir, Limits{}); err != nil {
		t.Fatalf("Unpack() = %v", err)
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
	err := Unpack(strings.NewReader("proc/interrupts"), t.TempDir(), Limits{})
	if !errors.Is(err, ErrNotSnapshot) {
		t.Errorf("Unpack(text) = %v, want ErrNotSnapshot", err)
	}
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

// FuzzUnpack: whatever two entries an archive holds, Unpack never panics,
// never writes beside its folder, and leaves no link that resolves out of
// it.
func FuzzUnpack(f *testing.F) {
	f.Add("sys/l", "../proc", byte(tar.TypeSymlink), "sys/l/x", "", byte(tar.TypeReg))
	f.Add("sys/x/s", "../y", byte(tar.TypeSymlink), "sys/x/t", "s/../../..", byte(tar.TypeSymlink))
	f.Add("../x", "", byte(tar.TypeReg), "proc/a", "/", byte(tar.TypeLink))
	f.Add("./proc/irq/1", "", byte(tar.TypeDir), "proc//b", "a/../../b", byte(tar.TypeSymlink))
	f.Fuzz(func(t *testing.T, n1, l1 string, t1 byte, n2, l2 string, t2 byte) {
		ents := append(append([]ent{}, base...), ent{name: n1, link: l1, typ: t1, data: "x"}, ent{name: n2, link: l2, typ: t2, data: "y"})
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		for _, e := range ents {
			h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: 0o644, Format: tar.FormatPAX}
			if e.typ == tar.TypeReg {
				h.Size = int64(len(e.data))
			}
			if tw.WriteHeader(h) != nil {
				return // not writable as a tar entry at all
			}
			if e.typ == tar.TypeReg {
				tw.Write([]byte(e.data))
			}
		}
		tw.Close()
		zw.Close()
		outer := t.TempDir()
		dir := filepath.Join(outer, "root")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		err := Unpack(bytes.NewReader(buf.Bytes()), dir, Limits{})
		if got, _ := os.ReadDir(outer); len(got) != 1 {
			t.Fatalf("Unpack wrote beside its folder: %v (err %v)", got, err)
		}
		if err != nil {
			return
		}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.Type()&os.ModeSymlink == 0 {
				return nil
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return nil // dangling: resolves to nothing
			}
			if rel, err := filepath.Rel(dir, real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				t.Errorf("link %s resolves to %s, outside the folder", p, real)
			}
			return nil
		})
	})
}
