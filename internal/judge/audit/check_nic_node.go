package audit

import (
	"fmt"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// NIC-node check: nic-node-unknown.
const CheckNICNodeUnknown Check = "nic-node-unknown"

func init() {
	register(&check{ids: []Check{CheckNICNodeUnknown}, nic: judges((*auditor).checkNICNode)})
}

// checkNICNode: nic-node-unknown. numa_node -1 on a host with more than
// one node; says whether local_cpulist still tells the local CPUs.
func (a *auditor) checkNICNode(c *nicCtx) {
	if c.nic.Node.Known() || len(a.h.Nodes) < 2 {
		return
	}
	if c.nic.Inferred && (c.nic.PCI == "" || c.nic.PCIAbsent) {
		a.inferredNICNode(c)
		return
	}
	f := Finding{Check: CheckNICNodeUnknown, Severity: SeverityWarning, NIC: c.nic.Name,
		Subject: fmt.Sprintf("%s numa_node", c.nic.Name),
		Fix:     "the firmware gives the device no node (ACPI _PXM): update the BIOS or enable its PCI NUMA reporting; until then find the slot's socket in the board manual"}
	dev := c.nic.PCI
	if dev == "" {
		dev = c.nic.Device
	}
	if c.loc.Known() {
		f.CPUs = c.loc.CPUs
		if node, ok := c.loc.Node.Get(); ok {
			f.Nodes = []int{node}
		}
		f.Message = fmt.Sprintf("%s (%s) has numa_node -1 on a %d-node host; its local_cpulist %s (%s) is used as its locality for the other checks",
			c.nic.Name, dev, len(a.h.Nodes), c.loc.CPUs.List(), nodeOnly(c.loc))
	} else {
		why := "no local_cpulist"
		if local, ok := c.nic.LocalCPUs.Get(); ok {
			why = fmt.Sprintf("local_cpulist %s names every CPU", local.List())
		}
		f.Message = fmt.Sprintf("%s (%s) has numa_node -1 on a %d-node host and %s: its locality is unknown, so its IRQs and processes are not called local or remote",
			c.nic.Name, dev, len(a.h.Nodes), why)
	}
	a.add(f)
}

// inferredNICNode: nic-node-unknown for a NIC inferred from IRQ names
// whose PCI function the tree lacks, so numa_node was never read: its
// locality is the node its IRQs were allocated on, or unknown.
func (a *auditor) inferredNICNode(c *nicCtx) {
	n := c.nic
	f := Finding{Check: CheckNICNodeUnknown, NIC: n.Name, Subject: n.Name + " numa_node",
		Fix: "capture /sys/class/net and the PCI functions it links to (numa_node, local_cpulist)"}
	why := fmt.Sprintf("the tree has no PCI function %s", n.PCI)
	if n.PCI == "" {
		why = "its IRQ names and chips give no PCI address"
	} else {
		f.Fix = fmt.Sprintf("capture /sys/bus/pci/devices/%s and the folder it links to (numa_node, local_cpulist)", n.PCI)
	}
	if node, ok := c.loc.Node.Get(); ok && unknown.Is(c.loc.Source, topology.LocalitySourceIRQNode) {
		f.Severity, f.CPUs, f.Nodes = SeverityInfo, c.loc.CPUs, []int{node}
		f.Message = fmt.Sprintf("%s is known from IRQ names and %s, so its numa_node is unknown; all %d of its IRQs were allocated on node %d (/proc/irq/N/node), which is used as its locality for the other checks",
			n.Name, why, len(c.irqs), node)
	} else {
		f.Severity = SeverityWarning
		f.Message = fmt.Sprintf("%s is known from IRQ names and %s, so its numa_node is unknown, and its IRQs' /proc/irq/N/node name no single node: its locality is unknown, so its IRQs and processes are not called local or remote",
			n.Name, why)
	}
	a.add(f)
}
