package snapshot

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenCountsFirst: Open refuses an archive over the entry bound
// before unpacking any of it. The archive's tenth entry is unsafe, so an
// unpacker that counted as it went would stop there with ErrUnsafe; Open
// says the entries are too many, which only a count ahead of unpacking
// can have seen.
func TestOpenCountsFirst(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ents := append([]ent{}, base...)
	for i := range 6 {
		ents = append(ents, fileEnt(fmt.Sprintf("sys/e%d", i), ""))
	}
	ents = append(ents, linkEnt("sys/evil", "/"))
	for i := range 200 {
		ents = append(ents, fileEnt(fmt.Sprintf("proc/d%d/f", i), ""))
	}
	file := filepath.Join(t.TempDir(), "many.tar.gz")
	if err := os.WriteFile(file, craft(t, ents...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := Open(context.Background(), file, Limits{MaxEntries: 100})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 100 entries") {
		t.Errorf("Open() error = %v, want ErrTooLarge: more than 100 entries", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("Open left %v in TMPDIR", left)
	}
	if _, _, err := Open(context.Background(), file, Limits{}); !errors.Is(err, ErrUnsafe) {
		t.Errorf("Open(within the bound) error = %v, want ErrUnsafe for sys/evil", err)
	}
}

// TestWriteBoundsEntries: a capture never writes more entries than Open
// accepts: the entry past DefaultMaxEntries is an error naming it.
func TestWriteBoundsEntries(t *testing.T) {
	a := &archive{tw: tar.NewWriter(io.Discard), max: DefaultMaxTotalSize}
	for i := range DefaultMaxEntries {
		if err := a.dir(fmt.Sprintf("proc/%d", i)); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	err := a.file("proc/one-more", nil, 0o444)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "/proc/one-more") {
		t.Errorf("entry %d = %v, want ErrTooLarge naming /proc/one-more", DefaultMaxEntries+1, err)
	}
}
