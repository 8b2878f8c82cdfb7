package main

import "fmt"

// topoDoc is the part of `irqnuma topology -o json` compared here.
type topoDoc struct {
	Nodes []struct {
		ID   int    `json:"id"`
		CPUs string `json:"cpus"`
	} `json:"nodes"`
	CPUs []struct {
		ID   int `json:"id"`
		Node int `json:"node"`
	} `json:"cpus"`
	NICs []struct {
		Name      string `json:"name"`
		PCI       string `json:"pci"`
		Node      int    `json:"node"`
		LocalNode int    `json:"local_node"`
		LocalCPUs string `json:"local_cpus"`
		QueueIRQs []int  `json:"queue_irqs"`
		RxQueues  int    `json:"rx_queues"`
	} `json:"nics"`
	Online string `json:"online"`
}

// scenarioTopology: nodes, CPUs and each NIC's node, against sysfs and
// the topology the host configured.
func scenarioTopology(l *lab) {
	var d topoDoc
	jsonOf(&d, "topology")
	for id, want := range l.nodes {
		check(fmt.Sprintf("node%d-cpus-configured", id), id < len(l.cfg.Nodes) && want == mustCPUs(l.cfg.Nodes[id]),
			"sysfs node%d cpulist %s, configured %v", id, want, l.cfg.Nodes)
	}
	check("node-count", len(d.Nodes) == len(l.nodes), "irqnuma %d nodes, sysfs %d", len(d.Nodes), len(l.nodes))
	for _, n := range d.Nodes {
		got, err := parseCPUs(n.CPUs)
		check(fmt.Sprintf("node%d-cpus", n.ID), err == nil && got == l.nodes[n.ID], "irqnuma %q, sysfs %s", n.CPUs, l.nodes[n.ID])
	}
	cpuNode := map[int]int{}
	for node, c := range l.nodes {
		for _, id := range c.ids() {
			cpuNode[id] = node
		}
	}
	bad := 0
	for _, c := range d.CPUs {
		if want, ok := cpuNode[c.ID]; !ok || want != c.Node {
			bad++
			check(fmt.Sprintf("cpu%d-node", c.ID), false, "irqnuma node %d, sysfs %d (known %v)", c.Node, want, ok)
		}
	}
	check("cpus", bad == 0 && len(d.CPUs) == len(cpuNode), "irqnuma lists %d CPUs, sysfs %d, %d on the wrong node", len(d.CPUs), len(cpuNode), bad)
	for _, n := range l.nics {
		found := false
		for _, j := range d.NICs {
			if j.Name != n.Name {
				continue
			}
			found = true
			check(n.Name+"-configured-node", n.node == n.Node, "sysfs numa_node of %s is %d, the expander's is %d", n.pci, n.node, n.Node)
			check(n.Name+"-node", j.Node == n.node && j.LocalNode == n.node, "irqnuma node %d local_node %d, sysfs numa_node %d", j.Node, j.LocalNode, n.node)
			lc, err := parseCPUs(j.LocalCPUs)
			check(n.Name+"-local-cpus", err == nil && lc == l.nodes[n.node], "irqnuma local_cpus %q, node %d CPUs %s", j.LocalCPUs, n.node, l.nodes[n.node])
			check(n.Name+"-pci", j.PCI == n.pci, "irqnuma %s, sysfs %s", j.PCI, n.pci)
			want := n.queueIRQs()
			check(n.Name+"-queue-irqs", fmt.Sprint(j.QueueIRQs) == fmt.Sprint(want) && len(want) == 2*n.QueuePairs,
				"irqnuma %v, /proc/interrupts %v (%d queue pairs configured)", j.QueueIRQs, want, n.QueuePairs)
		}
		check(n.Name+"-listed", found, "irqnuma lists NICs %v", d.NICs)
	}
	check("nvme-configured-node", l.nvme.node == l.cfg.NVMeNode, "sysfs numa_node of nvme0 (%s) is %d, the expander's is %d", l.nvme.pci, l.nvme.node, l.cfg.NVMeNode)
}
