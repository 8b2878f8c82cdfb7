package topology

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/hosttest"
)

func TestIOMMU(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	h, err := Read(root)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadIOMMU(root)
	if err != nil {
		t.Fatal(err)
	}
	if m.Known() || m.Active() {
		t.Errorf("seed (no iommu folders): Known %v Active %v, want false false", m.Known(), m.Active())
	}
	if g, err := h.DeviceIOMMUGroup("0000:98:00.0"); err != nil || g.ID != -1 {
		t.Errorf("DeviceIOMMUGroup without a link = %+v, %v, want ID -1", g, err)
	}

	// Add what a VT-d host in translating mode shows.
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk("sys/devices/virtual/iommu/dmar0")
	mk("sys/devices/virtual/iommu/dmar1")
	mk("sys/class/iommu")
	mk("sys/kernel/iommu_groups/7/devices")
	mk("sys/kernel/iommu_groups/8/devices")
	for _, l := range []struct{ link, target string }{
		{"sys/class/iommu/dmar1", "../../devices/virtual/iommu/dmar1"},
		{"sys/class/iommu/dmar0", "../../devices/virtual/iommu/dmar0"},
		{"sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/iommu_group", "../../../../kernel/iommu_groups/8"},
		{"sys/devices/pci0000:16/0000:16:02.0/0000:17:00.0/iommu_group", "../../../../kernel/iommu_groups/7"},
	} {
		if err := os.Symlink(l.target, filepath.Join(root, l.link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "sys/kernel/iommu_groups/8/type"), []byte("DMA-FQ\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	m, err = ReadIOMMU(root)
	if err != nil {
		t.Fatal(err)
	}
	want := &IOMMU{ClassKnown: true, Units: []string{"dmar0", "dmar1"}, GroupsKnown: true, Groups: 2}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("ReadIOMMU (-want +got):\n%s", diff)
	}
	tests := []struct {
		give string
		want IOMMUGroup
	}{
		{give: "0000:98:00.0", want: IOMMUGroup{ID: 8, Type: "DMA-FQ"}},
		{give: "0000:17:00.0", want: IOMMUGroup{ID: 7}},
		{give: "0000:99:00.0", want: IOMMUGroup{ID: -1}},
	}
	for _, tt := range tests {
		got, err := h.DeviceIOMMUGroup(tt.give)
		if err != nil || got != tt.want {
			t.Errorf("DeviceIOMMUGroup(%q) = %+v, %v, want %+v", tt.give, got, err, tt.want)
		}
	}
	if g := (IOMMUGroup{ID: 8, Type: "DMA-FQ"}); !g.Translating() {
		t.Error("DMA-FQ is not translating")
	}
	if g := (IOMMUGroup{ID: 8, Type: "identity"}); g.Translating() {
		t.Error("identity is translating")
	}
	if _, err := h.DeviceIOMMUGroup("eth0"); err == nil {
		t.Error("DeviceIOMMUGroup(eth0): no error")
	}
}

func TestIOMMULive(t *testing.T) {
	if _, err := os.Stat("/sys/class/iommu"); err != nil {
		t.Skipf("no /sys/class/iommu on this host: %v", err)
	}
	m, err := ReadIOMMU("/")
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir("/sys/class/iommu")
	if !m.ClassKnown || len(m.Units) != len(ents) {
		t.Errorf("ReadIOMMU(/) = %+v, want ClassKnown and %d units", m, len(ents))
	}
}
