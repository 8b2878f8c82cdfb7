package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileSnapshotEmptyEntries: a snapshot of a million empty files
// (issue 27) is refused, naming the bound, before a single one is made,
// so the refusal costs what reading the headers up to the bound does,
// not a minute and a million inodes.
func TestHostileSnapshotEmptyEntries(t *testing.T) {
	t.Parallel()
	bin := hostileBinary(t)
	file := filepath.Join(t.TempDir(), "empty.tar.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	zw, _ := gzip.NewWriterLevel(bw, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "proc/", Typeflag: tar.TypeDir, Mode: 0o755})
	for i := range 1_000_000 {
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("proc/d%d/e%d", i/1000, i), Typeflag: tar.TypeReg, Mode: 0o444}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []interface{ Close() error }{tw, zw} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	args := []string{"--root", file, "topology"}
	r := runBin(t, bin, args...)
	checkBounds(t, args, r)
	t.Logf("%v: %v of CPU, %d MB", args, r.cpu, r.maxRSS>>20)
	if r.code == 0 || !strings.Contains(r.stderr, "more than 262144 entries") {
		t.Errorf("%v: exit %d, %q; want an error saying the entries are too many", args, r.code, r.stderr)
	}
}
