package kfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
)

func write(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "attr")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// live opens the live root, which these tests read absolute paths of.
func live(t *testing.T) FS {
	t.Helper()
	return mustOpen(t, "/")
}

func TestString(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{"0-3\n", "0-3"},
		{"0-31\n\x00", "0-31"}, // hwloc captures pad with NUL
		{"\x00\n", ""},         // a captured nohz_full
		{"(null)\n", "(null)"}, // nohz_full without nohz_full=
		{"a b\n", "a b"},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := live(t).String(write(t, tt.give, 0o444))
		if err != nil || got != tt.want {
			t.Errorf("String(%q) = %q, %v, want %q", tt.give, got, err, tt.want)
		}
	}
}

func TestTypedReads(t *testing.T) {
	if v, err := live(t).Int(write(t, "-1\n", 0o444)); err != nil || v != -1 {
		t.Errorf("Int(-1) = %d, %v", v, err)
	}
	if _, err := live(t).Int(write(t, "one\n", 0o444)); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Errorf("Int(one) error = %v", err)
	}
	if s, err := live(t).List(write(t, "16-31,48-63\n", 0o444)); err != nil || !s.Equal(cpuset.Range(16, 31).Union(cpuset.Range(48, 63))) {
		t.Errorf("List = %s, %v", s, err)
	}
	if _, err := live(t).List(write(t, "1,\n", 0o444)); !errors.Is(err, cpuset.ErrSyntax) {
		t.Errorf("List(1,) error = %v, want ErrSyntax", err)
	}
	if s, err := live(t).Mask(write(t, "00040000,00000000\n", 0o444)); err != nil || !s.Equal(cpuset.New(50)) {
		t.Errorf("Mask = %s, %v", s, err)
	}
	if _, err := live(t).String(filepath.Join(t.TempDir(), "absent")); !IsNotExist(err) {
		t.Errorf("String(absent) error = %v, want not-exist", err)
	}
}

func TestReadModeAndLimit(t *testing.T) {
	p := write(t, "50\n", 0o444)
	b, mode, err := live(t).ReadMode(p, make([]byte, 0, 1))
	if err != nil || string(b) != "50\n" || mode != 0o444 {
		t.Errorf("ReadMode = %q, %o, %v; want \"50\\n\", 444", b, mode, err)
	}
	big := write(t, strings.Repeat("x", 5000), 0o644)
	if _, err := live(t).ReadLimit(big, 4096); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadLimit over the bound: %v, want ErrTooLarge", err)
	}
	if b, err := live(t).ReadLimit(big, 5000); err != nil || len(b) != 5000 {
		t.Errorf("ReadLimit at the bound: %d bytes, %v", len(b), err)
	}
}

// TestReadGrowsToItsBound: a file far over a read's bound is read into a
// buffer of at most the bound and the byte past it, never one doubled
// past it. Reading a 3 MiB file to a bound of 2 MiB in a tree, where its
// size is known, allocates that buffer once, 2 MiB in all; on the live
// root, where a size is not trusted, a buffer doubled from 512 B up to
// the bound, 4 MiB in all, where doubling it past the bound would
// allocate 8.
func TestReadGrowsToItsBound(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, []byte(strings.Repeat("1", 3<<20)), 0o444); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		give FS
		want uint64 // bytes allocated, at most
	}{
		{mustOpen(t, filepath.Dir(p)), 3 << 20},
		{live(t), 6 << 20},
	}
	for _, tt := range tests {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := tt.give.ReadLimit(p, 2<<20)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("ReadLimit under %s: %v, want ErrTooLarge", tt.give.Root(), err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > tt.want {
			t.Errorf("under %s: allocated %d bytes reading to a bound of 2 MiB, want at most %d", tt.give.Root(), got, tt.want)
		}
	}
}

// TestReadAtItsBound: a file of as many bytes as a read's bound is read
// whole, one of a byte more is too large, whether its size is known (a
// tree) or not (the live root), and from a buffer a caller gives.
func TestReadAtItsBound(t *testing.T) {
	const limit = 8192
	dir := t.TempDir()
	tree, live := mustOpen(t, dir), live(t)
	for _, size := range []int{limit - 1, limit, limit + 1} {
		p := filepath.Join(dir, strconv.Itoa(size))
		want := strings.Repeat("1", size)
		if err := os.WriteFile(p, []byte(want), 0o444); err != nil {
			t.Fatal(err)
		}
		for _, f := range []FS{tree, live} {
			for _, buf := range [][]byte{nil, make([]byte, 0, limit+100)} {
				b, _, err := f.readFile(p, buf, limit, false)
				if size > limit {
					if !errors.Is(err, ErrTooLarge) {
						t.Errorf("%d bytes under %s (buffer of %d): %v, want ErrTooLarge", size, f.Root(), cap(buf), err)
					}
					continue
				}
				if err != nil || string(b) != want {
					t.Errorf("%d bytes under %s (buffer of %d): %d bytes, %v; want them all", size, f.Root(), cap(buf), len(b), err)
				}
			}
		}
	}
}
