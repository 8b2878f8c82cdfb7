package untar

import (
	"archive/tar"
	"bytes"
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

func dirEnt(name string) ent               { return ent{name: name, typ: tar.TypeDir} }
func fileEnt(name, data string) ent        { return ent{name: name, typ: tar.TypeReg, data: data} }
func linkEnt(name, target string) ent      { return ent{name: name, typ: tar.TypeSymlink, link: target} }
func hardEnt(name, target string) ent      { return ent{name: name, typ: tar.TypeLink, link: target} }
func specialEnt(name string, typ byte) ent { return ent{name: name, typ: typ} }

// craft builds a tar of the entries, as a hostile archive would.
func craft(t testing.TB, ents ...ent) []byte {
	t.Helper()
	b, err := build(ents)
	if err != nil {
		t.Fatalf("craft: %v", err)
	}
	return b
}

// build builds a tar of the entries, or says why one cannot be written.
func build(ents []ent) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
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
			return nil, err
		}
		if e.typ == tar.TypeReg {
			if _, err := tw.Write(body); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// unpackIn unpacks b into a folder "root" inside a fresh outer folder and
// returns both, so a test can tell whether anything landed beside it.
func unpackIn(t testing.TB, b []byte, opt Options) (outer, dir string, err error) {
	t.Helper()
	outer = t.TempDir()
	dir = filepath.Join(outer, "root")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	err = Unpack(context.Background(), tar.NewReader(bytes.NewReader(b)), dir, opt)
	return outer, dir, err
}

// base is a minimal tree for crafted archives to extend.
var base = []ent{dirEnt("proc/"), fileEnt("proc/interrupts", "           CPU0\n"), dirEnt("sys/")}

func TestUnpackRefuses(t *testing.T) {
	loose := Options{HardLinks: true, SkipSpecial: true, OwnerWritable: true}
	tests := []struct {
		name string
		give []ent
		opt  Options
		want error  // errors.Is
		msg  string // the entry the error names, and why
	}{
		{"parent path", []ent{fileEnt("../evil", "pwned")}, Options{}, ErrUnsafe, `entry "../evil": unsafe entry: ".." in name`},
		{"deep parent path", []ent{fileEnt("sys/../../evil", "pwned")}, Options{}, ErrUnsafe, `entry "sys/../../evil"`},
		{"absolute path", []ent{fileEnt("/tmp/evil", "pwned")}, Options{}, ErrUnsafe, `entry "/tmp/evil": unsafe entry: absolute name`},
		{"empty component", []ent{fileEnt("proc//x", "y")}, Options{}, ErrUnsafe, `entry "proc//x": unsafe entry: empty or "." component`},
		{"absolute symlink", []ent{linkEnt("sys/evil", "/etc")}, Options{}, ErrUnsafe, `entry "sys/evil": unsafe entry: link target "/etc" is absolute`},
		{"link to root", []ent{linkEnt("sys/evil", "/")}, Options{}, ErrUnsafe, `entry "sys/evil": unsafe entry: link target "/" is absolute`},
		{"escaping symlink", []ent{linkEnt("sys/evil", "../../etc")}, Options{}, ErrUnsafe, `entry "sys/evil": unsafe entry: link target "../../etc" leaves the root`},
		{"file through link", []ent{linkEnt("sys/l", "../proc"), fileEnt("sys/l/x", "y")}, Options{}, ErrUnsafe,
			`entry "sys/l/x": unsafe entry: its folder sys/l is a symbolic link`},
		{"file through link to root", []ent{linkEnt("l", "."), fileEnt("l/x", "y")}, Options{}, ErrUnsafe,
			`entry "l/x": unsafe entry: its folder l is a symbolic link`},
		{"file under a file", []ent{fileEnt("proc/interrupts/x", "y")}, Options{}, ErrUnsafe,
			`entry "proc/interrupts/x": unsafe entry: its folder proc/interrupts is a file`},
		{"write through a chain of symlinks", []ent{linkEnt("sys/l1", ".."), linkEnt("sys/l1/l2", ".."), fileEnt("sys/l1/l2/evil", "y")}, Options{}, ErrUnsafe,
			`entry "sys/l1/l2": unsafe entry: its folder sys/l1 is a symbolic link`},
		{"link through link", []ent{dirEnt("sys/x/"), linkEnt("sys/x/s", "../y"), linkEnt("sys/x/t", "s/../../..")}, Options{}, ErrUnsafe,
			`entry "sys/x/t": unsafe entry: link target "s/../../.." leaves the root`},
		{"replace file by link", []ent{linkEnt("proc/interrupts", "../sys")}, Options{}, ErrUnsafe, `entry "proc/interrupts": unsafe entry: it appears twice`},
		{"replace folder by file", []ent{fileEnt("sys", "x")}, Options{}, ErrUnsafe, `entry "sys": unsafe entry: it appears twice`},
		{"replace file by file", []ent{fileEnt("proc/interrupts", "x")}, loose, ErrUnsafe, `entry "proc/interrupts": unsafe entry: it appears twice`},
		{"hard link", []ent{hardEnt("proc/h", "proc/interrupts")}, Options{}, ErrUnsafe,
			`entry "proc/h": unsafe entry: hard link to "proc/interrupts": hard links are not allowed`},
		{"escaping hard link", []ent{hardEnt("sys/h", "../etc/passwd")}, loose, ErrUnsafe, `entry "sys/h": unsafe entry: hard link target "../etc/passwd": ".." in name`},
		{"absolute hard link", []ent{hardEnt("proc/h", "/etc/shadow")}, loose, ErrUnsafe, `entry "proc/h": unsafe entry: hard link target "/etc/shadow": absolute name`},
		{"hard link to a later file", []ent{hardEnt("proc/h", "proc/later"), fileEnt("proc/later", "x")}, loose, ErrUnsafe,
			`entry "proc/h": unsafe entry: hard link to "proc/later", which is no file unpacked before it`},
		{"hard link to a folder", []ent{hardEnt("proc/h", "sys")}, loose, ErrUnsafe, `entry "proc/h": unsafe entry: hard link to "sys"`},
		{"hard link to a symlink", []ent{linkEnt("sys/l", "../proc/interrupts"), hardEnt("proc/h", "sys/l")}, loose, ErrUnsafe, `entry "proc/h": unsafe entry: hard link to "sys/l"`},
		{"hard link through a symlink", []ent{linkEnt("sys/l", "../proc"), hardEnt("proc/h", "sys/l/interrupts")}, loose, ErrUnsafe,
			`entry "proc/h": unsafe entry: hard link to "sys/l/interrupts"`},
		{"hard link under a symlink", []ent{linkEnt("sys/l", ".."), hardEnt("sys/l/evil", "proc/interrupts")}, loose, ErrUnsafe,
			`entry "sys/l/evil": unsafe entry: its folder sys/l is a symbolic link`},
		{"device", []ent{specialEnt("proc/kmem", tar.TypeChar)}, Options{}, ErrUnsafe, `entry "proc/kmem": unsafe entry: type '3' is a device or FIFO`},
		{"block device", []ent{specialEnt("dev/sda", tar.TypeBlock)}, Options{}, ErrUnsafe, `entry "dev/sda": unsafe entry: type`},
		{"FIFO", []ent{specialEnt("dev/fifo", tar.TypeFifo)}, Options{}, ErrUnsafe, `entry "dev/fifo": unsafe entry: type`},
		{"special file through a link", []ent{linkEnt("sys/l", ".."), specialEnt("sys/l/dev", tar.TypeChar)}, loose, ErrUnsafe,
			`entry "sys/l/dev": unsafe entry: its folder sys/l is a symbolic link`},
		{"unknown type", []ent{{name: "proc/x", typ: 'Z'}}, loose, ErrUnsafe, `entry "proc/x": unsafe entry: type 'Z' is not a file, folder or link`},
		{"huge entry", []ent{{name: "proc/big", typ: tar.TypeReg, size: 2 << 20}}, Options{MaxFileSize: 1 << 20}, ErrTooLarge,
			`entry "proc/big": over the size bound: 2097152 bytes, more than 1048576`},
		{"bomb", []ent{{name: "proc/a", typ: tar.TypeReg, size: 3 << 20}, {name: "proc/b", typ: tar.TypeReg, size: 3 << 20}},
			Options{MaxTotalSize: 5 << 20}, ErrTooLarge, `entry "proc/b": over the size bound: archive holds more than 5242880 bytes`},
		{"too many entries", []ent{dirEnt("sys/a"), dirEnt("sys/b")}, Options{MaxEntries: 4}, ErrTooLarge, `entry "sys/b": over the size bound: more than 4 entries`},
		{"too many folders implied", []ent{fileEnt("sys/a/b/c/d/e", "")}, Options{MaxEntries: 6}, ErrTooLarge,
			`entry "sys/a/b/c/d/e": over the size bound: more than 6 entries with the folders they imply`},
		{"too deep", []ent{dirEnt(strings.Repeat("d/", 65))}, Options{}, ErrTooLarge, `over the size bound: 65 folders deep, more than 64`},
		{"long link target", []ent{linkEnt("sys/l", strings.Repeat("a/", 64)+"a")}, Options{}, ErrTooLarge,
			`entry "sys/l": over the size bound: link target of 65 path components, more than 64`},
		{"names too long", []ent{fileEnt("sys/"+strings.Repeat("n", 100), "x")}, Options{MaxNameBytes: 64}, ErrTooLarge,
			`over the size bound: names and link targets take more than 64 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ents := append(append([]ent{}, base...), tt.give...)
			outer, _, err := unpackIn(t, craft(t, ents...), tt.opt)
			if !errors.Is(err, tt.want) || !strings.Contains(errText(err), tt.msg) {
				t.Fatalf("Unpack() error = %v, want %v containing %q", err, tt.want, tt.msg)
			}
			if got, _ := os.ReadDir(outer); len(got) != 1 {
				t.Errorf("Unpack wrote beside its folder: %v", got)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestUnpackAccepts(t *testing.T) {
	// GNU tar's "./" prefix, folders the archive does not list or lists
	// twice, links that stay inside (dangling ones too), a link to its
	// own folder, and a file mode kept.
	ents := []ent{
		dirEnt("./"),
		dirEnt("./proc/"),
		{name: "./proc/irq/5/smp_affinity_list", typ: tar.TypeReg, data: "0-3\n", mode: 0o444},
		dirEnt("./proc/"),
		linkEnt("./sys/class/net/eth0", "../../devices/pci0000:00/net/eth0"),
		fileEnt("./sys/devices/pci0000:00/net/eth0/speed", "1000\n"),
		linkEnt("./sys/class/net/gone", "../../devices/virtual/net/gone"),
		linkEnt("./sys/devices/system/node/node0/cpu0", "."),
	}
	_, dir, err := unpackIn(t, craft(t, ents...), Options{})
	if err != nil {
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
	if got, err := os.Readlink(filepath.Join(dir, "sys/devices/system/node/node0/cpu0")); err != nil || got != "." {
		t.Errorf("self link = %q, %v, want \".\"", got, err)
	}
	if st, err := os.Stat(filepath.Join(dir, "proc/irq")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("unlisted folder mode = %v, %v, want 0755", st.Mode().Perm(), err)
	}
}

func TestHardLinks(t *testing.T) {
	ents := append(append([]ent{}, base...), hardEnt("sys/h", "proc/interrupts"), hardEnt("./sys/deep/h2", "./sys/h"))
	if _, _, err := unpackIn(t, craft(t, ents...), Options{}); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("Unpack(hard link, no HardLinks) = %v, want ErrUnsafe", err)
	}
	_, dir, err := unpackIn(t, craft(t, ents...), Options{HardLinks: true})
	if err != nil {
		t.Fatalf("Unpack(hard link, HardLinks) = %v", err)
	}
	orig, err := os.Stat(filepath.Join(dir, "proc/interrupts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sys/h", "sys/deep/h2"} {
		st, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || !os.SameFile(orig, st) {
			t.Errorf("%s = %v, %v, want a hard link to proc/interrupts", name, st, err)
		}
	}
}

func TestSkipSpecial(t *testing.T) {
	ents := append(append([]ent{}, base...),
		specialEnt("dev/null", tar.TypeChar), specialEnt("dev/sda", tar.TypeBlock), specialEnt("dev/fifo", tar.TypeFifo),
		fileEnt("sys/after", "x"))
	if _, _, err := unpackIn(t, craft(t, ents...), Options{}); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("Unpack(devices, no SkipSpecial) = %v, want ErrUnsafe", err)
	}
	_, dir, err := unpackIn(t, craft(t, ents...), Options{SkipSpecial: true})
	if err != nil {
		t.Fatalf("Unpack(devices, SkipSpecial) = %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "dev")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dev/ = %v, want nothing made for skipped entries", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sys/after")); err != nil {
		t.Errorf("entry after the skipped ones: %v", err)
	}
}

func TestOwnerWritable(t *testing.T) {
	ents := []ent{
		{name: "proc/ro", typ: tar.TypeReg, data: "x", mode: 0o444},
		{name: "proc/wo", typ: tar.TypeReg, data: "x", mode: 0o200},
		{name: "proc/gw", typ: tar.TypeReg, data: "x", mode: 0o664},
		{name: "proc/suid", typ: tar.TypeReg, data: "x", mode: 0o4755},
	}
	tests := []struct {
		give Options
		want map[string]os.FileMode
	}{
		{Options{}, map[string]os.FileMode{"ro": 0o444, "wo": 0o200, "gw": 0o664, "suid": 0o755}},
		{Options{OwnerWritable: true}, map[string]os.FileMode{"ro": 0o644, "wo": 0o600, "gw": 0o664, "suid": 0o755}},
	}
	for _, tt := range tests {
		_, dir, err := unpackIn(t, craft(t, ents...), tt.give)
		if err != nil {
			t.Fatalf("Unpack(%+v) = %v", tt.give, err)
		}
		for name, want := range tt.want {
			st, err := os.Stat(filepath.Join(dir, "proc", name))
			if err != nil || st.Mode() != want {
				t.Errorf("OwnerWritable %v: mode of %s = %v, %v, want %v", tt.give.OwnerWritable, name, st.Mode(), err, want)
			}
		}
	}
}

func TestUnpackCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Unpack(ctx, tar.NewReader(bytes.NewReader(craft(t, base...))), t.TempDir(), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Unpack(canceled) = %v, want context.Canceled", err)
	}
}

func TestUnpackNotTar(t *testing.T) {
	b := craft(t, fileEnt("proc/big", strings.Repeat("x", 4096)))
	tests := []struct {
		name string
		give []byte
	}{
		{"text", []byte(strings.Repeat("proc/interrupts\n", 64))},
		{"cut in a header", b[:100]},
		{"cut in a file", b[:len(b)-2048]},
	}
	for _, tt := range tests {
		err := Unpack(context.Background(), tar.NewReader(bytes.NewReader(tt.give)), t.TempDir(), Options{})
		if !errors.Is(err, ErrFormat) {
			t.Errorf("Unpack(%s) = %v, want ErrFormat", tt.name, err)
		}
	}
}

// FuzzUnpack: whatever two entries an archive holds, with whatever
// options, Unpack never panics, never writes beside its folder, and
// leaves no link that resolves out of it.
func FuzzUnpack(f *testing.F) {
	f.Add("sys/l", "../proc", byte(tar.TypeSymlink), "sys/l/x", "", byte(tar.TypeReg), byte(0))
	f.Add("sys/x/s", "../y", byte(tar.TypeSymlink), "sys/x/t", "s/../../..", byte(tar.TypeSymlink), byte(0))
	f.Add("../x", "", byte(tar.TypeReg), "proc/a", "/", byte(tar.TypeLink), byte(7))
	f.Add("./proc/irq/1", "", byte(tar.TypeDir), "proc//b", "a/../../b", byte(tar.TypeSymlink), byte(0))
	f.Add("sys/l", "..", byte(tar.TypeSymlink), "sys/h", "sys/l/proc/interrupts", byte(tar.TypeLink), byte(1))
	f.Add("dev/null", "", byte(tar.TypeChar), "sys/h", "proc/interrupts", byte(tar.TypeLink), byte(3))
	f.Fuzz(func(t *testing.T, n1, l1 string, t1 byte, n2, l2 string, t2 byte, flags byte) {
		ents := append(append([]ent{}, base...), ent{name: n1, link: l1, typ: t1, data: "x"}, ent{name: n2, link: l2, typ: t2, data: "y"})
		b, err := build(ents)
		if err != nil {
			return // not writable as a tar at all
		}
		opt := Options{HardLinks: flags&1 != 0, SkipSpecial: flags&2 != 0, OwnerWritable: flags&4 != 0}
		outer, dir, err := unpackIn(t, b, opt)
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
