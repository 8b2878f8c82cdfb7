package topology

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func TestIOMMU(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	h, err := Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadIOMMU(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	if m.Known() || m.Active() {
		t.Errorf("seed (no iommu folders): Known %v Active %v, want false false", m.Known(), m.Active())
	}
	if g, err := h.DeviceIOMMUGroup("0000:98:00.0"); err != nil || g.ID.Or(-1) != -1 {
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
	m, err = ReadIOMMU(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	want := &IOMMU{Units: unknown.Of([]string{"dmar0", "dmar1"}), Groups: unknown.Of(2)}
	if diff := cmp.Diff(want, m, exportAll); diff != "" {
		t.Errorf("ReadIOMMU (-want +got):\n%s", diff)
	}
	if h, err = Read(hosttest.Open(t, root)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, h.IOMMU, exportAll); diff != "" {
		t.Errorf("Read: Host.IOMMU (-want +got):\n%s", diff)
	}
	if got := h.IOMMUMode(); !sameMode(got, iommuMode(DMAMode("default"), SourceCmdline, "")) {
		t.Errorf("IOMMUMode with units and a silent command line = %+v, want the build default", got)
	}
	const noLink = "no sys/bus/pci/devices/0000:99:00.0/iommu_group"
	tests := []struct {
		give string
		want IOMMUGroup
	}{
		{give: "0000:98:00.0", want: IOMMUGroup{ID: unknown.Of(8), Type: unknown.Of(DomainTypeDMAFQ)}},
		{give: "0000:17:00.0", want: IOMMUGroup{ID: unknown.Of(7), Type: unknown.NotAs[DomainType](unknown.KindNotCaptured, "no sys/kernel/iommu_groups/7/type")}},
		{give: "0000:99:00.0", want: IOMMUGroup{ID: unknown.NotAs[int](unknown.KindNotCaptured, noLink), Type: unknown.NotAs[DomainType](unknown.KindNotCaptured, noLink)}},
	}
	for _, tt := range tests {
		got, err := h.DeviceIOMMUGroup(tt.give)
		if err != nil || got != tt.want {
			t.Errorf("DeviceIOMMUGroup(%q) = %+v, %v, want %+v", tt.give, got, err, tt.want)
		}
	}
	if g := (IOMMUGroup{ID: unknown.Of(8), Type: unknown.Of(DomainTypeDMAFQ)}); !g.Translating() {
		t.Error("DMA-FQ is not translating")
	}
	if g := (IOMMUGroup{ID: unknown.Of(8), Type: unknown.Of(DomainTypeIdentity)}); g.Translating() {
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
	m, err := ReadIOMMU(hosttest.Open(t, "/"))
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir("/sys/class/iommu")
	if units, ok := m.Units.Get(); !ok || len(units) != len(ents) {
		t.Errorf("ReadIOMMU(/) = %+v, want ClassKnown and %d units", m, len(ents))
	}
}

// TestResolveIOMMUMode: sysfs says whether an IOMMU is active; the
// command line names the mode, and stands in for sysfs when the tree has
// no IOMMU folders. Every answer says where it came from.
func TestResolveIOMMUMode(t *testing.T) {
	active := &IOMMU{Units: unknown.Of([]string{"dmar0"}), Groups: unknown.Of(40)}
	none := &IOMMU{Units: unknown.Of([]string{}), Groups: unknown.Of(0)}
	notRead := &IOMMU{}
	notKnown := IOMMUMode{}
	tests := []struct {
		name    string
		m       *IOMMU
		cmdline string // "-" for no /proc/cmdline
		want    IOMMUMode
	}{
		{"no IOMMU registered", none, "intel_iommu=on", iommuMode(DMAMode("off"), SourceSysfs, "")},
		{"active, iommu=pt", active, "intel_iommu=on iommu=pt", iommuMode(DMAMode("passthrough"), SourceCmdline, "iommu=pt")},
		{"active, iommu.passthrough=0", active, "iommu.passthrough=0", iommuMode(DMAMode("translated"), SourceCmdline, "iommu.passthrough=0")},
		{"active, silent command line", active, "ro quiet", iommuMode(DMAMode("default"), SourceCmdline, "")},
		{"active, no /proc/cmdline", active, "-", notKnown},
		{"no sysfs, iommu=pt", notRead, "intel_iommu=on iommu=pt", iommuMode(DMAMode("passthrough"), SourceCmdline, "iommu=pt")},
		{"nil IOMMU, iommu.passthrough=1", nil, "iommu.passthrough=1", iommuMode(DMAMode("passthrough"), SourceCmdline, "iommu.passthrough=1")},
		{"no sysfs, intel_iommu=off", notRead, "intel_iommu=off", iommuMode(DMAMode("off"), SourceCmdline, "intel_iommu=off")},
		{"no sysfs, iommu=nopt", notRead, "iommu=nopt", iommuMode(DMAMode("translated"), SourceCmdline, "iommu=nopt")},
		{"no sysfs, intel_iommu=on", notRead, "intel_iommu=on,sm_on", iommuMode(DMAMode("default"), SourceCmdline, "intel_iommu=on")},
		{"no sysfs, amd_iommu=force_enable", notRead, "amd_iommu=force_enable", iommuMode(DMAMode("default"), SourceCmdline, "amd_iommu=force_enable")},
		{"no sysfs, amd_iommu=on is no word of the kernel", notRead, "amd_iommu=on", notKnown},
		{"no sysfs, silent command line", notRead, "ro quiet", notKnown},
		{"no sysfs, no /proc/cmdline", notRead, "-", notKnown},
		{"no sysfs, garbage", notRead, `iommu= intel_iommu intel_iommu="" iommu.passthrough=maybe`, notKnown},
	}
	for _, tt := range tests {
		var c *Cmdline
		if tt.cmdline != "-" {
			c = ParseCmdline(tt.cmdline)
		}
		if got := ResolveIOMMUMode(tt.m, c); !sameMode(got, tt.want) {
			t.Errorf("%s: ResolveIOMMUMode(%+v, %q) = %+v, want %+v", tt.name, tt.m, tt.cmdline, got, tt.want)
		}
	}
}

// TestIOMMUModeRealHosts: the OpenShift captures have no IOMMU folders;
// cnto-worker1 booted with intel_iommu=on iommu=pt and hwloc-128arm with
// iommu.passthrough=1, so their mode is passthrough from the command line;
// cnto-worker2's command line says nothing of the IOMMU: unknown.
func TestIOMMUModeRealHosts(t *testing.T) {
	realhosts.Require(t)
	for _, tt := range []struct {
		capture string
		want    IOMMUMode
	}{
		{"cnto-worker1", iommuMode(DMAMode("passthrough"), SourceCmdline, "iommu=pt")},
		{"hwloc-128arm-2pa2n8cluster4co", iommuMode(DMAMode("passthrough"), SourceCmdline, "iommu.passthrough=1")},
		{"cnto-worker2", IOMMUMode{}},
	} {
		c, ok := realhosts.Lookup(tt.capture)
		if !ok {
			t.Errorf("no %s capture", tt.capture)
			continue
		}
		h, err := Read(hosttest.Open(t, realhosts.Root(t, c)))
		if err != nil {
			t.Fatal(err)
		}
		if h.IOMMU == nil || h.IOMMU.Known() {
			t.Errorf("%s: IOMMU %+v, want read and without folders", tt.capture, h.IOMMU)
		}
		if got := h.IOMMUMode(); !sameMode(got, tt.want) {
			t.Errorf("%s: IOMMUMode = %+v, want %+v", tt.capture, got, tt.want)
		}
	}
}

func iommuMode(mode DMAMode, src Source, param string) IOMMUMode {
	return IOMMUMode{Mode: unknown.Of(mode), Source: unknown.Of(src), Param: param}
}

// sameMode compares two modes by what is known of them, reasons aside.
func sameMode(a, b IOMMUMode) bool {
	return a.Mode.Known() == b.Mode.Known() && a.Mode.Or("") == b.Mode.Or("") &&
		a.Source.Known() == b.Source.Known() && a.Source.Or("") == b.Source.Or("") && a.Param == b.Param
}
