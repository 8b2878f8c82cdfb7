package snapshot

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestCaptureStaysInTheTree: capturing a tree whose comm, PCI vendor and
// pci.ids files are links to files outside it (absolute, and climbing
// with "..") never opens those files: before, the capture read them with
// the live root's kfile functions, which follow a link out of the tree.
func TestCaptureStaysInTheTree(t *testing.T) {
	outside := t.TempDir()
	sentinel := func(name, data string) string {
		p := filepath.Join(outside, name)
		if err := os.WriteFile(p, []byte(data), 0o444); err != nil {
			t.Fatal(err)
		}
		return p
	}
	comm := sentinel("comm", "irqbalance\n")
	vendor := sentinel("vendor", "0x15b3\n")
	ids := sentinel("pci.ids", "15b3  Mellanox Technologies\n")
	root := hosttest.Copy(t, "seed")
	link := func(rel, target string, climb bool) {
		t.Helper()
		p := filepath.Join(root, rel)
		if climb {
			r, err := filepath.Rel(filepath.Dir(p), target)
			if err != nil {
				t.Fatal(err)
			}
			target = r
		}
		os.Remove(p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	link("proc/4242/comm", comm, false)
	link("proc/4243/comm", comm, true)
	link("sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/vendor", vendor, false)
	link("sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/device", vendor, true)
	link("usr/share/hwdata/pci.ids", ids, false)
	link("usr/share/misc/pci.ids", ids, true)
	opened := hosttest.WatchOpens(t, comm, vendor, ids)
	if _, err := Write(io.Discard, hosttest.Open(t, root), Options{}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if o := opened(); len(o) != 0 {
		t.Errorf("the capture opened %v, outside the root", o)
	}
	// The watch sees an open: the test can fail.
	f, err := os.Open(ids)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if o := opened(); len(o) != 1 {
		t.Errorf("the watch saw %v after opening %s, want it once", o, ids)
	}
}
