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
	err := Create(p, 0o600, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
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
			if Create(q, 0o600, func(w io.Writer) error { _, err := fmt.Fprint(w, i); return err }) == nil {
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
