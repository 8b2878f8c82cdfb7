package kfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
)

// TestFileParse: a kernel file that was read but does not parse is one
// sentinel, ErrFileParse, named by its path, and still carries what the
// parser said (cpuset.ErrSyntax); a missing file is not ErrFileParse.
func TestFileParse(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sys"), 0o755); err != nil {
		t.Fatal(err)
	}
	fsys, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	tests := []struct {
		name, give string
		read       func(p string) error
		want       string // the message after "read PATH: "
		syntax     bool   // also cpuset.ErrSyntax
	}{
		{"cpulist", "1,\n", func(p string) error { _, err := fsys.List(p); return err }, "", true},
		{"cpumap", "ff,,ff\n", func(p string) error { _, err := fsys.Mask(p); return err }, "", true},
		{"numa_node", "one\n", func(p string) error { _, err := fsys.Int(p); return err }, `not an integer: "one"`, false},
	}
	for _, tt := range tests {
		p := filepath.Join(root, "sys", tt.name)
		if err := os.WriteFile(p, []byte(tt.give), 0o644); err != nil {
			t.Fatal(err)
		}
		err := tt.read(p)
		if !errors.Is(err, ErrFileParse) {
			t.Errorf("%s %q: %v, want ErrFileParse", tt.name, tt.give, err)
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Path != p {
			t.Errorf("%s: %v: no ParseError with path %s", tt.name, err, p)
		}
		if !strings.HasPrefix(err.Error(), "read "+p+": ") || (tt.want != "" && err.Error() != "read "+p+": "+tt.want) {
			t.Errorf("%s: %q, want \"read %s: %s\"", tt.name, err, p, tt.want)
		}
		if tt.syntax != errors.Is(err, cpuset.ErrSyntax) {
			t.Errorf("%s: %v: errors.Is(cpuset.ErrSyntax) = %v, want %v", tt.name, err, !tt.syntax, tt.syntax)
		}
		if err := tt.read(filepath.Join(root, "sys", "absent")); err == nil || errors.Is(err, ErrFileParse) || !IsNotExist(err) {
			t.Errorf("%s of a missing file: %v, want not-exist and not ErrFileParse", tt.name, err)
		}
	}
}

// TestFormatSentinel: a parser's format sentinel keeps its text and is
// ErrFileParse, so errors wrapping it are found by that one sentinel.
func TestFormatSentinel(t *testing.T) {
	s := FormatSentinel("not in /proc/x format")
	err := fmt.Errorf("line 3: %w", s)
	if !errors.Is(err, ErrFileParse) || !errors.Is(err, s) || err.Error() != "line 3: not in /proc/x format" {
		t.Errorf("%v: Is ErrFileParse %v, Is the sentinel %v", err, errors.Is(err, ErrFileParse), errors.Is(err, s))
	}
}
