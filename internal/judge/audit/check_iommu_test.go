package audit

import (
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestAuditIOMMUMessages: iommu-mode says what sysfs and the command line
// each told: an active IOMMU from /sys/class/iommu, or only the command
// line when the tree has no IOMMU folders.
func TestAuditIOMMUMessages(t *testing.T) {
	active := &topology.IOMMU{Units: unknown.Of([]string{"dmar0"}), Groups: unknown.Of(3)}
	tests := []struct {
		m       *topology.IOMMU
		cmdline string
		want    string
	}{
		{active, "ro quiet", "an IOMMU is active (dmar0; 3 IOMMU groups) and the kernel command line has no iommu=pt or iommu.passthrough=1"},
		{active, "iommu=nopt", "an IOMMU is active (dmar0; 3 IOMMU groups) and the kernel command line asks for translation (iommu=nopt)"},
		{&topology.IOMMU{}, "intel_iommu=on", "the kernel command line turns the IOMMU on (intel_iommu=on) without iommu=pt or iommu.passthrough=1, and the tree has no /sys/class/iommu to confirm it"},
		{&topology.IOMMU{}, "iommu.passthrough=0", "the kernel command line asks for translation (iommu.passthrough=0) and the tree has no /sys/class/iommu"},
	}
	for _, tt := range tests {
		h, tb := loadHost(t, "seed")
		fs := onlyCheck(Run(h, tb, nil, Options{Governor: performance, IOMMU: tt.m, Cmdline: topology.ParseCmdline(tt.cmdline)}), CheckIOMMUMode)
		if len(fs) != 1 || fs[0].NIC != "" || !strings.Contains(fs[0].Message, tt.want) {
			t.Errorf("IOMMU %+v, command line %q: iommu-mode %+v, want one host-wide finding saying %q", tt.m, tt.cmdline, fs, tt.want)
		}
	}
}
