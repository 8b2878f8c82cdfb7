package zc

import (
	"fmt"
	"strconv"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// sendCost is what the published measurements say of zero-copy send and
// the IOMMU (the zero-copy issue's sources): the mode decided the result
// on one NIC and mattered much less on another.
const sendCost = "zero-copy send maps each page it sends through the IOMMU: on an Intel XL710, " +
	"721 -> 1,130 MB/s at 4 KiB and 2,255 -> 3,717 MB/s at 64 KiB once iommu=pt was set; " +
	"on a ConnectX-6 Dx the mode mattered much less. Fixed buffers (io_uring_register_buffers, " +
	"IORING_RECVSEND_FIXED_BUF) spare the per-send pinning of the pages, not this mapping: " +
	"the driver still maps each fragment for DMA when it transmits"

// iommu judges the default domain of the NIC's IOMMU group
// (/sys/kernel/iommu_groups/N/type, 5.11+): identity is passthrough, DMA
// strict translation, DMA-FQ lazy (a flush queue batches the
// invalidations).
func (c *checker) iommu() Prereq {
	const what = "the NIC's DMA not translated by an IOMMU (passthrough or none)"
	m := c.h.IOMMU
	if c.nic.PCI == "" {
		if m.Known() && !m.Active() {
			return holds(IDIOMMU, what, "no IOMMU: /sys/class/iommu and /sys/kernel/iommu_groups are empty")
		}
		return notKnown(IDIOMMU, what, unknown.KindNotApplicable, "the NIC is not a PCI function the tree shows, so its IOMMU group is unknown", "")
	}
	g, err := c.h.DeviceIOMMUGroup(c.nic.PCI)
	if err != nil {
		return notKnown(IDIOMMU, what, unknown.KindFailed, err.Error(), "")
	}
	id, ok := g.ID.Get()
	if !ok {
		if m != nil && m.Groups.Known() {
			return holds(IDIOMMU, what, c.nic.PCI+" is in no IOMMU group: its DMA is not translated")
		}
		return notKnown(IDIOMMU, what, unknown.KindNotCaptured, "not captured: the root has no /sys/kernel/iommu_groups", "")
	}
	grp := "/sys/kernel/iommu_groups/" + strconv.Itoa(id) + "/type"
	ev := fmt.Sprintf("%s is in IOMMU group %d, %s: %s", c.nic.PCI, id, grp, g.Type)
	fix := fmt.Sprintf("iommu=pt on the kernel command line, then reboot (or, with %s's driver unbound: echo identity > %s)", c.nic.PCI, grp)
	switch typ, ok := g.Type.Get(); {
	case !ok:
		return notKnown(IDIOMMU, what, unknown.KindKernel, fmt.Sprintf("%s is in IOMMU group %d, which has no type file (a kernel before 5.11)", c.nic.PCI, id), "")
	case typ == topology.DomainTypeIdentity:
		return holds(IDIOMMU, what, ev+" (passthrough)")
	case typ == topology.DomainTypeDMA:
		p := fails(IDIOMMU, what, ev+" (strict: every mapping is translated and invalidated at once)", fix)
		p.Cost = sendCost
		return p
	case typ == topology.DomainTypeDMAFQ:
		p := fails(IDIOMMU, what, ev+" (lazy: translated, invalidations batched in a flush queue)", fix)
		p.Cost = sendCost
		return p
	}
	return notKnown(IDIOMMU, what, unknown.KindMalformed, ev+": not a default DMA domain the kernel uses for a bound driver", "")
}
