package kfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// outside is a folder beside the tree, with one file, that no write
// through the tree may touch.
type outside struct {
	dir, file string
	ino       uint64
}

func newOutside(t *testing.T) outside {
	t.Helper()
	o := outside{dir: t.TempDir()}
	o.file = filepath.Join(o.dir, "victim")
	if err := os.WriteFile(o.file, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.ino = inode(t, o.file)
	return o
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// check fails unless the outside folder holds exactly its one file, with
// its bytes and inode.
func (o outside) check(t *testing.T) {
	t.Helper()
	ents, err := os.ReadDir(o.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "victim" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("outside folder holds %v, want only victim", names)
	}
	if b, err := os.ReadFile(o.file); err != nil || string(b) != "secret\n" {
		t.Errorf("outside file = %q, %v; want it untouched", b, err)
	}
	if ino := inode(t, o.file); ino != o.ino {
		t.Errorf("outside file replaced: inode %d, was %d", ino, o.ino)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// TestWritesStayInside: links planted where irqnuma makes its folder and
// files never lead a write out of the tree.
func TestWritesStayInside(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		tests := []struct {
			name  string
			plant func(root string, o outside)
		}{
			{"folder links to an outside folder", func(root string, o outside) { symlink(t, o.dir, filepath.Join(root, "var")) }},
			{"folder climbs out", func(root string, o outside) {
				symlink(t, "../../../../../../../.."+o.dir, filepath.Join(root, "var/lib/irqnuma"))
			}},
			{"file links to an outside file", func(root string, o outside) {
				symlink(t, o.file, filepath.Join(root, "var/lib/irqnuma/lock"))
			}},
			{"file climbs to an outside file", func(root string, o outside) {
				symlink(t, "../../../../../../../../.."+o.file, filepath.Join(root, "var/lib/irqnuma/lock"))
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				root, o := t.TempDir(), newOutside(t)
				tt.plant(root, o)
				f := mustOpen(t, root)
				dir := f.Path("var/lib/irqnuma")
				if err := f.MkdirAll(dir, 0o700); err == nil {
					if w, err := f.CreateFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600); err == nil {
						w.WriteString("1234\n")
						w.Close()
					}
					if tmp, err := f.CreateTemp(dir, 0o600); err == nil {
						tmp.WriteString("state\n")
						f.Link(tmp, filepath.Join(dir, "victim"))
						tmp.Close()
					}
					f.Rename(filepath.Join(dir, "lock"), filepath.Join(dir, "lock.old"), false)
					f.Remove(filepath.Join(dir, "victim"))
				}
				o.check(t)
			})
		}
	})
}

// TestCreateFileRefusesLinks: a link at the last name is refused (ELOOP)
// even when it stays inside the tree, and so is a FIFO.
func TestCreateFileRefusesLinks(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root := t.TempDir()
		f := mustOpen(t, root)
		if err := os.WriteFile(filepath.Join(root, "target"), []byte("kept\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		symlink(t, "target", filepath.Join(root, "link"))
		if _, err := f.CreateFile(f.Path("link"), os.O_RDWR|os.O_CREATE, 0o600); !errors.Is(err, syscall.ELOOP) {
			t.Errorf("CreateFile(link) = %v, want ELOOP", err)
		}
		if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := f.CreateFile(f.Path("fifo"), os.O_RDWR|os.O_CREATE, 0o600); err == nil {
			t.Error("CreateFile opened a FIFO")
		}
		if b, _ := os.ReadFile(filepath.Join(root, "target")); string(b) != "kept\n" {
			t.Errorf("link target = %q", b)
		}
	})
}

// TestTempLink: an unnamed file gets its name only when linked, and a
// link never replaces.
func TestTempLink(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root := t.TempDir()
		f := mustOpen(t, root)
		dir := f.Path("var/lib/irqnuma")
		if err := f.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		tmp, err := f.CreateTemp(dir, 0o600)
		if errors.Is(err, ErrNoTmpfile) {
			t.Fatalf("this test's TMPDIR has no O_TMPFILE: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer tmp.Close()
		tmp.WriteString("whole\n")
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("unnamed file has a name: %v", ents)
		}
		p := filepath.Join(dir, "state.json")
		if err := f.Link(tmp, p); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != "whole\n" {
			t.Errorf("linked file = %q", b)
		}
		if err := f.Link(tmp, p); !errors.Is(err, fs.ErrExist) {
			t.Errorf("second Link = %v, want ErrExist", err)
		}
	})
}

// TestOpenKernelFile: an affinity file linked out of the tree is written
// inside it or not at all.
func TestOpenKernelFile(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root, o := t.TempDir(), newOutside(t)
		symlink(t, o.file, filepath.Join(root, "proc/irq/5/smp_affinity_list"))
		f := mustOpen(t, root)
		if w, err := f.OpenKernelFile(f.Path("proc/irq/5/smp_affinity_list")); err == nil {
			w.WriteString("0\n")
			w.Close()
			t.Error("opened a link to a file absent from the tree")
		}
		o.check(t)
		p := filepath.Join(root, "proc/irq/6/smp_affinity_list")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("0-3\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := f.OpenKernelFile(p)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if k, err := IsKernel(w); err != nil || k {
			t.Errorf("IsKernel(tree file) = %v, %v", k, err)
		}
	})
}
