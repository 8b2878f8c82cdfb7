package audit

import (
	"fmt"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/topology"
)

// DMA translation: iommu-mode, per NIC whose IOMMU group is known, then for the host.
const CheckIOMMUMode Check = "iommu-mode"

func init() {
	register(&check{ids: []Check{CheckIOMMUMode}, needs: []fact{factIOMMU, factCmdline},
		fix: "capture /sys/class/iommu, /sys/kernel/iommu_groups, the NIC's iommu_group link and /proc/cmdline",
		nic: judges((*auditor).checkIOMMU), host: (*auditor).checkHostIOMMU})
}

// checkIOMMU: iommu-mode for a NIC whose IOMMU group type is known. NICs
// without it are judged host-wide by checkHostIOMMU.
func (a *auditor) checkIOMMU(c *nicCtx) {
	g, ok := a.opts.IOMMUGroups[c.nic.PCI]
	if c.nic.PCI == "" || !ok || !g.ID.Known() || !g.Type.Known() {
		a.hostIOMMUNeeded = true
		return
	}
	if !g.Translating() {
		return
	}
	a.add(Finding{Check: CheckIOMMUMode, Severity: SeverityInfo, NIC: c.nic.Name,
		Subject: fmt.Sprintf("IOMMU group %d", g.ID.Or(-1)),
		Message: fmt.Sprintf("%s (%s) is in IOMMU group %d whose default domain is %s: every DMA address is translated; results can differ from an iommu=pt host",
			c.nic.Name, c.nic.PCI, g.ID.Or(-1), g.Type),
		Fix: "to compare with passthrough, boot with iommu=pt (or set /sys/kernel/iommu_groups/N/type to identity with the device unbound)"})
}

// checkHostIOMMU: iommu-mode host-wide, when some audited NIC's IOMMU
// group type is unknown: whether an IOMMU is active from /sys/class/iommu
// and the groups, its mode from the kernel command line, and the command
// line alone when the tree has neither folder (topology.ResolveIOMMUMode).
func (a *auditor) checkHostIOMMU() error {
	if !a.hostIOMMUNeeded {
		return nil
	}
	m := a.opts.IOMMU
	mode := topology.ResolveIOMMUMode(m, a.opts.Cmdline)
	var msg string
	dma, known := mode.Mode.Get()
	switch {
	case dma == topology.DMAModePassthrough || dma == topology.DMAModeOff:
		return nil
	case !known && m.Known():
		return skip("", string(CheckIOMMUMode), "an IOMMU is active but there is no /proc/cmdline: its mode is unknown")
	case !known:
		return skip("", string(CheckIOMMUMode), "no /sys/class/iommu or /sys/kernel/iommu_groups: whether an IOMMU translates DMA is unknown")
	case !m.Known() && dma == topology.DMAModeTranslated:
		msg = fmt.Sprintf("the kernel command line asks for translation (%s) and the tree has no /sys/class/iommu to show an IOMMU active: DMA is translated wherever one is",
			mode.Param)
	case !m.Known():
		msg = fmt.Sprintf("the kernel command line turns the IOMMU on (%s) without iommu=pt or iommu.passthrough=1, and the tree has no /sys/class/iommu to confirm it: DMA is translated unless the kernel was built to default to passthrough",
			mode.Param)
	case dma == topology.DMAModeTranslated:
		msg = fmt.Sprintf("an IOMMU is active (%s) and the kernel command line asks for translation (%s): every DMA address is translated", iommuUnits(m), mode.Param)
	default:
		msg = fmt.Sprintf("an IOMMU is active (%s) and the kernel command line has no iommu=pt or iommu.passthrough=1: DMA is translated unless the kernel was built to default to passthrough",
			iommuUnits(m))
	}
	a.add(Finding{Check: CheckIOMMUMode, Severity: SeverityInfo, Subject: "IOMMU",
		Message: msg + "; zero-copy and small-packet results can differ from an iommu=pt host",
		Fix:     "to compare with passthrough, boot with iommu=pt (Intel: intel_iommu=on iommu=pt)"})
	return nil
}

// iommuUnits is "dmar0, dmar1; 40 IOMMU groups".
func iommuUnits(m *topology.IOMMU) string {
	what := fmt.Sprintf("%d IOMMU groups", m.Groups.Or(0))
	if units := m.Units.Or(nil); len(units) > 0 {
		what = fmt.Sprintf("%s; %s", strings.Join(units, ", "), what)
	}
	return what
}
