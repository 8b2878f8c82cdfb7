package topology

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

func TestParseCmdline(t *testing.T) {
	tests := []struct {
		give string
		want []Param
	}{
		{give: "", want: nil},
		{give: "ro quiet\n", want: []Param{{Name: "ro"}, {Name: "quiet"}}},
		{give: "BOOT_IMAGE=/boot/vmlinuz root=UUID=3f1c ro", want: []Param{
			{Name: "BOOT_IMAGE", Value: "/boot/vmlinuz", Set: true}, {Name: "root", Value: "UUID=3f1c", Set: true}, {Name: "ro"}}},
		{give: `dyndbg="file foo.c +p"  isolcpus=managed_irq,domain,10-11`, want: []Param{
			{Name: "dyndbg", Value: "file foo.c +p", Set: true}, {Name: "isolcpus", Value: "managed_irq,domain,10-11", Set: true}}},
		{give: `"quoted=a b" x=`, want: []Param{{Name: "quoted", Value: "a b", Set: true}, {Name: "x", Set: true}}},
		{give: "panic=1 -- --init-arg iommu=pt", want: []Param{{Name: "panic", Value: "1", Set: true}}},
	}
	for _, tt := range tests {
		got := ParseCmdline(tt.give).Params
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseCmdline(%q) (-want +got):\n%s", tt.give, diff)
		}
	}
}

func TestCmdlineIOMMUPassthrough(t *testing.T) {
	tests := []struct {
		give      string
		wantMode  string
		wantParam string
	}{
		{give: "ro quiet", wantMode: "", wantParam: ""},
		{give: "intel_iommu=on iommu=pt", wantMode: "passthrough", wantParam: "iommu=pt"},
		{give: "iommu=soft,pt", wantMode: "passthrough", wantParam: "iommu=pt"},
		{give: "iommu=pt iommu=nopt", wantMode: "translated", wantParam: "iommu=nopt"},
		{give: "iommu.passthrough=1", wantMode: "passthrough", wantParam: "iommu.passthrough=1"},
		{give: "iommu.passthrough=0 iommu.strict=1", wantMode: "translated", wantParam: "iommu.passthrough=0"},
		{give: "intel_iommu=off", wantMode: "off", wantParam: "intel_iommu=off"},
		{give: "amd-iommu=off", wantMode: "off", wantParam: "amd-iommu=off"},
		{give: "intel_iommu=on,sm_on", wantMode: "", wantParam: ""},
		{give: "-- iommu=pt", wantMode: "", wantParam: ""},
	}
	for _, tt := range tests {
		mode, param := ParseCmdline(tt.give).IOMMUPassthrough()
		if string(mode) != tt.wantMode || param != tt.wantParam {
			t.Errorf("IOMMUPassthrough(%q) = %q, %q, want %q, %q", tt.give, mode, param, tt.wantMode, tt.wantParam)
		}
	}
}

func TestCmdlineGet(t *testing.T) {
	c := ParseCmdline("nohz-full=2-3 nohz_full=4 quiet")
	if v, ok := c.Get("nohz_full"); !ok || v != "4" {
		t.Errorf(`Get("nohz_full") = %q, %v, want "4", true`, v, ok)
	}
	if !c.Has("quiet") || c.Has("splash") {
		t.Errorf("Has: quiet %v, splash %v, want true, false", c.Has("quiet"), c.Has("splash"))
	}
	var none *Cmdline
	if none.Has("quiet") {
		t.Error("nil Cmdline has quiet")
	}
}

func TestReadCmdline(t *testing.T) {
	root := t.TempDir()
	if _, err := ReadCmdline(hosttest.Open(t, root)); !os.IsNotExist(err) {
		t.Errorf("ReadCmdline without proc/cmdline: error %v, want not-exist", err)
	}
	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proc/cmdline"), []byte("BOOT_IMAGE=/vmlinuz iommu=pt\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	c, err := ReadCmdline(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	if mode, _ := c.IOMMUPassthrough(); mode != "passthrough" || c.Raw != "BOOT_IMAGE=/vmlinuz iommu=pt" {
		t.Errorf("ReadCmdline = %q (mode %q), want the line without its newline and passthrough", c.Raw, mode)
	}
}
