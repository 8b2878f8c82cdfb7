package kfile

import (
	"errors"
	"os"
	"path/filepath"
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
