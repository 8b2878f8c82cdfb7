package irq

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestManagedStaysInTheTree: the files the managed-IRQ judgement reads
// (issue 22) are read through the tree's FS: links to files outside the
// root, absolute or climbing with "..", are followed inside it, so the
// outside files are never opened and say nothing. Before, os.Stat and the
// live root's kfile.String followed them out: an outside osrelease of
// 6.12 and an outside read-only smp_affinity made ttyS0 "not managed"
// where the tree alone leaves it unknown.
func TestManagedStaysInTheTree(t *testing.T) {
	outside := t.TempDir()
	release := filepath.Join(outside, "osrelease")
	ro := filepath.Join(outside, "smp_affinity_list")
	if err := os.WriteFile(release, []byte("6.12.117+deb12-amd64\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ro, []byte("0-3\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	link := func(t *testing.T, root, rel, target string, climb bool) {
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
	tests := []struct {
		name    string
		prepare func(t *testing.T, root string)
	}{
		{"osrelease, absolute link", func(t *testing.T, root string) {
			link(t, root, "proc/sys/kernel/osrelease", release, false)
		}},
		{"osrelease, climbing link", func(t *testing.T, root string) {
			link(t, root, "proc/sys/kernel/osrelease", release, true)
		}},
		{"smp_affinity, absolute links", func(t *testing.T, root string) {
			link(t, root, "proc/irq/36/smp_affinity_list", ro, false)
			link(t, root, "proc/irq/36/smp_affinity", ro, false)
		}},
		{"smp_affinity, climbing links", func(t *testing.T, root string) {
			link(t, root, "proc/irq/36/smp_affinity_list", ro, true)
			link(t, root, "proc/irq/36/smp_affinity", ro, true)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := hosttest.Copy(t, "vm-virtio")
			// Every smp_affinity writable and no release: the tree
			// alone cannot say whether the kernel marks managed IRQs.
			chmodAll(t, root, "smp_affinity", 0o644)
			chmodAll(t, root, "smp_affinity_list", 0o644)
			tt.prepare(t, root)
			opened := hosttest.WatchOpens(t, release, ro)
			got := managedOf(t, root)
			if got[26] != "unknown" {
				t.Errorf("managed of IRQ 26 = %s, want unknown: a file outside the tree was taken for the tree's", got[26])
			}
			if o := opened(); len(o) != 0 {
				t.Errorf("opened %v, outside the root", o)
			}
			// The watch sees an open: the test can fail.
			f, err := os.Open(release)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			if o := opened(); len(o) != 1 {
				t.Errorf("the watch saw %v after opening %s, want it once", o, release)
			}
		})
	}
}
