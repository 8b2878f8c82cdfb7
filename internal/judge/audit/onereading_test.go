package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestOptionsTakeTheHostsReading: the kernel command line and the IOMMU
// the checks judge are the very values topology.Read read, not a second
// reading of the same files.
func TestOptionsTakeTheHostsReading(t *testing.T) {
	root := hosttest.FS(t, "seed")
	h, err := topology.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Cmdline.Known() || h.IOMMU == nil {
		t.Fatal("seed has no command line or IOMMU state: this test needs both")
	}
	opts, err := readOptions(h, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Cmdline != h.Cmdline.Or(nil) {
		t.Errorf("ReadOptions read the command line again: %p, want the host's %p", opts.Cmdline, h.Cmdline.Or(nil))
	}
	if opts.IOMMU != h.IOMMU {
		t.Errorf("ReadOptions read the IOMMU again: %p, want the host's %p", opts.IOMMU, h.IOMMU)
	}
}

// TestUnreadableCmdlineIsUnknown: a /proc/cmdline that cannot be read is
// an unknown command line (the host's note says so), as it is for every
// other command, not an audit that fails while topology carried on.
func TestUnreadableCmdlineIsUnknown(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	p := filepath.Join(root, "proc/cmdline")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := Read(hosttest.Open(t, root), Selection{})
	if err != nil {
		t.Fatalf("Read with an unreadable /proc/cmdline: %v, want the audit with the command line unknown", err)
	}
	if c, ok := st.Host.Cmdline.Get(); ok {
		t.Errorf("Host.Cmdline = %q, want unknown", c.Raw)
	}
	noted := false
	for _, n := range st.Host.Notes {
		noted = noted || strings.Contains(n, "the kernel command line is unknown")
	}
	if !noted {
		t.Errorf("host notes %q say nothing of the command line", st.Host.Notes)
	}
}
