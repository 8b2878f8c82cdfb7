package topology

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestFunction reads a VF of ens1f0's function, a PF, and addresses the
// tree lacks or that are no PCI address.
func TestFunction(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "offline-2node")
	vf := filepath.Join(root, "sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:02.1")
	if err := os.MkdirAll(vf, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vf, "numa_node"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for l, target := range map[string]string{
		filepath.Join(vf, "physfn"):                             "../0000:3b:00.0",
		filepath.Join(root, "sys/bus/pci/devices/0000:3b:02.1"): "../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:02.1",
	} {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	h, err := Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	f, err := h.Function("0000:3b:02.1")
	if err != nil || f.Node.Or(-1) != 1 || f.PF != "0000:3b:00.0" || !slices.Equal(f.NICs, []string{"ens1f0"}) {
		t.Errorf("Function(VF) = %+v, %v", f, err)
	}
	f, err = h.Function("0000:3b:00.0")
	if err != nil || f.Node.Or(-1) != 1 || f.PF != "" || !slices.Equal(f.NICs, []string{"ens1f0"}) {
		t.Errorf("Function(PF) = %+v, %v", f, err)
	}
	if _, err := h.Function("0000:3b:09.0"); !errors.Is(err, ErrNoPCIFunction) {
		t.Errorf("Function(absent) = %v, want ErrNoPCIFunction", err)
	}
	if _, err := h.Function("../../etc"); err == nil {
		t.Error("Function(../../etc): no error")
	}
	if name, err := h.IfaceByIndex(4); err != nil || name != "eth1" {
		t.Errorf("IfaceByIndex(4) = %q, %v; want eth1", name, err)
	}
	if _, err := h.IfaceByIndex(99); !errors.Is(err, ErrNoIfindex) {
		t.Errorf("IfaceByIndex(99) = %v, want ErrNoIfindex", err)
	}
}
