package snapshot

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestReadContent: a file up to spillAt stays in memory; a larger one is
// spilled to a temporary file that holds exactly its bytes and is removed
// on close; one past the limit fails with kfile.ErrTooLarge and leaves no
// temporary file.
func TestReadContent(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(dir, "tmp"))
	if err := os.Mkdir(os.Getenv("TMPDIR"), 0o755); err != nil {
		t.Fatal(err)
	}
	line := []byte("  0: 0100007F:1451 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 41001 1 0000000000000000 100 0 0 10 0\n")
	for _, tt := range []struct {
		name    string
		size    int
		limit   int64
		spilled bool
		err     error
	}{
		{"small", 10 * len(line), 32 << 20, false, nil},
		{"at the spill size", spillAt, 32 << 20, false, nil},
		{"large", 3 << 20, 32 << 20, true, nil},
		{"past the limit", 3 << 20, 2 << 20, false, kfile.ErrTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := bytes.Repeat(line, tt.size/len(line)+1)[:tt.size]
			p := filepath.Join(dir, "tcp")
			if err := os.WriteFile(p, want, 0o444); err != nil {
				t.Fatal(err)
			}
			c, err := readContent(hosttest.Open(t, "/"), p, tt.limit)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if err == nil {
				got, rerr := io.ReadAll(c.r)
				if rerr != nil || !bytes.Equal(got, want) || c.size != int64(len(want)) {
					t.Errorf("read %d bytes (size %d, error %v), want the file's %d", len(got), c.size, rerr, len(want))
				}
				if (c.spill != nil) != tt.spilled {
					t.Errorf("spilled %v, want %v", c.spill != nil, tt.spilled)
				}
				c.close()
			}
			if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}
