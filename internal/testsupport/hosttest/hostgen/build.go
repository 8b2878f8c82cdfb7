package hostgen

import (
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
)

// Helpers shared by the named trees and the synthetic one.

// counts returns a Count map with v interrupts on each CPU of s.
func counts(s cpuset.Set, v uint64) map[int]uint64 {
	m := map[int]uint64{}
	for c := range s.All() {
		m[c] = v
	}
	return m
}

// one returns a Count map with v interrupts on cpu.
func one(cpu int, v uint64) map[int]uint64 { return map[int]uint64{cpu: v} }

// distances returns the distance row of node i for n nodes, with local
// distance 10, near for nodes sharing a package (per) and far otherwise.
func distances(i, n, per, near, far int) []int {
	d := make([]int, n)
	for j := range n {
		switch {
		case i == j:
			d[j] = 10
		case i/per == j/per:
			d[j] = near
		default:
			d[j] = far
		}
	}
	return d
}

// msixIRQ returns an IRQ of a PCI function on a kernel with per-device MSI
// domains (Linux 6.2 and later): chip "IR-PCI-MSIX-<bdf>", hwirq the MSI-X
// index.
func msixIRQ(n int, chipPrefix string, d *PCIDev, index int, name string) *IRQ {
	return &IRQ{N: n, Chip: chipPrefix + "-" + d.BDF(), HWIRQ: index, Trigger: "edge", Actions: []string{name}}
}

// legacyMSIHWIRQ is the hwirq an x86 kernel before per-device MSI domains
// shows for a PCI MSI vector: the PCI requester id shifted left by 11, plus
// the vector index (e.g. 71827456 for 0000:89:00.0 vector 0).
func legacyMSIHWIRQ(bus, dev, fn, index int) int {
	return (bus<<8|dev<<3|fn)<<11 | index
}

// mac returns a locally administered MAC address numbered i.
func mac(oui string, i int) string {
	return fmt.Sprintf("%s:%02x:%02x:%02x", oui, (i>>16)&0xff, (i>>8)&0xff, i&0xff)
}

// loopback returns the lo interface: no device, single queue.
func loopback() *NIC {
	return &NIC{Name: "lo", Ifindex: 1, Address: "00:00:00:00:00:00", MTU: 65536,
		Operstate: "unknown", NoSpeed: true, Rx: 1, Tx: 1, NoXPS: true}
}
