package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	if err := Write(p, 0o600, func(w io.Writer) error { _, err := io.WriteString(w, "one\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "one\n" {
		t.Fatalf("content %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %o, want 600", fi.Mode().Perm())
	}
	// A failing writer leaves the old file and no temporary behind.
	boom := errors.New("boom")
	if err := Write(p, 0o644, func(w io.Writer) error { io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("Write error = %v, want boom", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one\n" {
		t.Errorf("after a failed write the file holds %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("folder holds %d entries, want only the file", len(ents))
	}
}

// TestCreateNeverReplaces: Create fails on an existing file, and of many
// concurrent Creates of one name exactly one wins.
func TestCreateNeverReplaces(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := create(p, 0o600, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over a file: %v, want ErrExist", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("file now %q", b)
	}
	q := filepath.Join(filepath.Dir(p), "race.json")
	var wg sync.WaitGroup
	var wins atomic.Int32
	for i := range 16 {
		wg.Go(func() {
			if create(q, 0o600, func(w io.Writer) error { _, err := fmt.Fprint(w, i); return err }) == nil {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d concurrent Creates succeeded, want 1", wins.Load())
	}
	if ents, _ := os.ReadDir(filepath.Dir(q)); len(ents) != 2 {
		t.Errorf("%d files left, want 2 (no temporaries)", len(ents))
	}
}

// TestCreateIn: the state file is made inside the root whatever link is
// planted on the way, never through a link at its own name, and leaves
// no temporary file, with O_TMPFILE or without it.
func TestCreateIn(t *testing.T) {
	for _, named := range []bool{false, true} {
		t.Run(map[bool]string{false: "O_TMPFILE", true: "named temporary"}[named], func(t *testing.T) {
			if named {
				old := createTemp
				createTemp = func(kfile.FS, string, os.FileMode) (*os.File, error) { return nil, kfile.ErrNoTmpfile }
				t.Cleanup(func() { createTemp = old })
			}
			root, out := t.TempDir(), t.TempDir()
			victim := filepath.Join(out, "victim")
			if err := os.WriteFile(victim, []byte("secret\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			fsys := hosttest.Open(t, root)
			dir := filepath.Join(root, "var/lib/irqnuma")
			if err := fsys.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, filepath.Join(dir, "linked.json")); err != nil {
				t.Fatal(err)
			}
			write := func(w io.Writer) error { _, err := io.WriteString(w, "state\n"); return err }
			if err := CreateIn(fsys, filepath.Join(dir, "linked.json"), 0o600, write); !errors.Is(err, fs.ErrExist) {
				t.Errorf("CreateIn over a link = %v, want ErrExist", err)
			}
			p := filepath.Join(dir, "state.json")
			if err := CreateIn(fsys, p, 0o600, write); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(p); err != nil || string(b) != "state\n" {
				t.Errorf("state = %q, %v", b, err)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v", fi.Mode())
			}
			if err := CreateIn(fsys, p, 0o600, write); !errors.Is(err, fs.ErrExist) {
				t.Errorf("CreateIn over a file = %v, want ErrExist", err)
			}
			boom := errors.New("boom")
			if err := CreateIn(fsys, filepath.Join(dir, "half.json"), 0o600, func(io.Writer) error { return boom }); !errors.Is(err, boom) {
				t.Errorf("failing writer: %v", err)
			}
			ents, _ := os.ReadDir(dir)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if want := []string{"linked.json", "state.json"}; fmt.Sprint(names) != fmt.Sprint(want) {
				t.Errorf("state folder holds %v, want %v", names, want)
			}
			if b, _ := os.ReadFile(victim); string(b) != "secret\n" {
				t.Errorf("outside file = %q", b)
			}
		})
	}
}

// TestReplaceIn: a file under the root is replaced whole with its new
// mode, a link at its name is replaced and never followed, and a write
// that fails leaves the file as it was and no temporary beside it.
func TestReplaceIn(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	victim := filepath.Join(out, "victim")
	if err := os.WriteFile(victim, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fsys := hosttest.Open(t, root)
	dir := filepath.Join(root, "etc/default")
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "irqbalance")
	if err := os.WriteFile(p, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := ReplaceIn(fsys, p, 0o644, write("new\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "new\n" {
		t.Errorf("after ReplaceIn: %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode())
	}
	boom := errors.New("boom")
	if err := ReplaceIn(fsys, p, 0o644, func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("failing writer: %v", err)
	}
	linked := filepath.Join(dir, "linked")
	if err := os.Symlink(victim, linked); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceIn(fsys, linked, 0o644, write("x\n")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "secret\n" {
		t.Errorf("outside file = %q", b)
	}
	if fi, err := os.Lstat(linked); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the link was not replaced by a file: %v, %v", fi, err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"irqbalance", "linked"}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("folder holds %v, want %v", names, want)
	}
	if b, _ := os.ReadFile(p); string(b) != "new\n" {
		t.Errorf("after a failed ReplaceIn: %q", b)
	}
}

// TestRemoveTemps: what a killed run left is removed, nothing else.
func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{".state-1.json.k3j9.tmp", "state-1.json", "lock", ".tmp"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveTemps(hosttest.Open(t, dir), dir); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{".tmp", "lock", "state-1.json"}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("left %v, want %v", names, want)
	}
}
