package kfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// budgetTree is a root with an 8-byte file a, a link l to it, a 64 KiB
// file and a folder of three entries.
func budgetTree(t *testing.T) FS {
	t.Helper()
	root := t.TempDir()
	for name, size := range map[string]int{"a": 8, "big": 64 << 10, "d/x": 1, "d/y": 1, "d/z": 1} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("1", size)), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a", filepath.Join(root, "l")); err != nil {
		t.Fatal(err)
	}
	return mustOpen(t, root)
}

// TestBudget: one operation on a budget of bytes and files: within it,
// the operation's answer; past it, an error that is ErrBudget and names
// the file and the bound, which Err repeats. A read's own bound is still
// ErrTooLarge, and a zero budget bounds nothing.
func TestBudget(t *testing.T) {
	f := budgetTree(t)
	read := func(name string) func(FS) error {
		return func(f FS) error { _, err := f.Read(f.Path(name)); return err }
	}
	tests := []struct {
		name               string
		maxBytes, maxFiles int64
		give               func(FS) error
		want               error  // nil, ErrBudget or ErrTooLarge
		wantMsg            string // in the error, and in Err for ErrBudget
		wantBytes          int64  // spent, when within the budget
		wantFiles          int64
	}{
		{name: "bytes within", maxBytes: 8, give: read("a"), wantBytes: 8, wantFiles: 1},
		{name: "bytes past", maxBytes: 7, give: read("a"), want: ErrBudget, wantMsg: "read " + f.Path("a") + ": read budget exceeded: more than 7 bytes read"},
		{name: "big file cut at the budget", maxBytes: 1 << 10, give: read("big"), want: ErrBudget, wantMsg: "more than 1024 bytes read"},
		{name: "the read's own bound", maxBytes: 1 << 20, give: func(f FS) error {
			_, err := f.ReadLimit(f.Path("big"), 1<<10)
			return err
		}, want: ErrTooLarge, wantMsg: "over 1024 bytes"},
		{name: "unbounded", give: read("big"), wantBytes: 64 << 10, wantFiles: 1},
		{name: "a stat is a file", maxFiles: 1, give: func(f FS) error { _, err := f.Stat(f.Path("a")); return err }, wantFiles: 1},
		{name: "a listing's entries are files", maxFiles: 4, give: func(f FS) error { _, err := f.ReadDir(f.Path("d")); return err }, wantFiles: 4},
		{name: "listing past", maxFiles: 3, give: func(f FS) error { _, err := f.ReadDir(f.Path("d")); return err },
			want: ErrBudget, wantMsg: "read " + f.Path("d") + ": read budget exceeded: more than 3 files (paths opened and folder entries listed)"},
		{name: "a link read is a file", maxFiles: 1, give: func(f FS) error { _, err := f.Readlink(f.Path("l")); return err }, wantFiles: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBudget(tt.maxBytes, tt.maxFiles)
			err := tt.give(f.WithBudget(b))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				if by, fi := b.Used(); by != tt.wantBytes || fi != tt.wantFiles {
					t.Errorf("Used() = %d bytes, %d files; want %d, %d", by, fi, tt.wantBytes, tt.wantFiles)
				}
				if b.Err() != nil {
					t.Errorf("Err() = %v within the budget", b.Err())
				}
				return
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %v, want %v with %q", err, tt.want, tt.wantMsg)
			}
			if tt.want == ErrBudget && (!errors.Is(b.Err(), ErrBudget) || !strings.Contains(b.Err().Error(), tt.wantMsg)) {
				t.Errorf("Err() = %v, want %q", b.Err(), tt.wantMsg)
			}
			if tt.want != ErrBudget && b.Err() != nil {
				t.Errorf("Err() = %v for a read over its own bound", b.Err())
			}
		})
	}
}

// TestBudgetSpent: once a bound is passed every operation fails, however
// small, and Err still names the one that passed it; the FS the budgeted
// one was made from is not charged.
func TestBudgetSpent(t *testing.T) {
	f := budgetTree(t)
	b := NewBudget(0, 1)
	g := f.WithBudget(b)
	if _, err := g.Stat(g.Path("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Stat(g.Path("a")); !errors.Is(err, ErrBudget) {
		t.Fatalf("second stat: %v, want ErrBudget", err)
	}
	first := b.Err()
	for name, op := range map[string]func() error{
		"read":    func() error { _, err := g.Read(g.Path("d/x")); return err },
		"readdir": func() error { _, err := g.ReadDir(g.Path("d")); return err },
		"lstat":   func() error { _, err := g.Lstat(g.Path("a")); return err },
		"resolve": func() error { _, err := g.Resolve(g.Path("a")); return err },
	} {
		if err := op(); !errors.Is(err, ErrBudget) {
			t.Errorf("%s after the budget: %v, want ErrBudget", name, err)
		}
	}
	if want := "open " + f.Path("a") + ": read budget exceeded: more than 1 files"; b.Err() != first || !strings.Contains(first.Error(), want) {
		t.Errorf("Err() = %v, was %v; want %q", b.Err(), first, want)
	}
	if _, err := f.Read(f.Path("a")); err != nil {
		t.Errorf("the unbudgeted FS: %v", err)
	}
}

// TestBudgetConcurrent: reads from several goroutines are each charged
// once.
func TestBudgetConcurrent(t *testing.T) {
	f := budgetTree(t)
	b := NewBudget(0, 0)
	g := f.WithBudget(b)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				if _, err := g.Read(g.Path("a")); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if by, fi := b.Used(); by != 8*10*8 || fi != 8*10 {
		t.Errorf("Used() = %d bytes, %d files; want 640, 80", by, fi)
	}
}
