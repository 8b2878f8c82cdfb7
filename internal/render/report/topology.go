package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/textwrap"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TopologyDoc is the JSON document of `irqnuma topology`. Fields are added,
// never renamed.
type TopologyDoc struct {
	Nodes    []NodeJSON `json:"nodes"`
	CPUs     []CPUJSON  `json:"cpus"`
	NICs     []NICJSON  `json:"nics"`
	Online   cpuset.Set `json:"online"`
	Possible cpuset.Set `json:"possible"`
	Isolated cpuset.Set `json:"isolated"`
	NohzFull cpuset.Set `json:"nohz_full"`
	Notes    []string   `json:"notes"`
	// Isolation is every kind of CPU isolation with where it was read;
	// Isolated and NohzFull above are two of its sets.
	Isolation IsolationJSON `json:"isolation"`
	IOMMU     IOMMUJSON     `json:"iommu"`
	// Steer is the NICs' steering (Steering); absent when it was not
	// read.
	Steer *SteerDoc `json:"steer,omitempty"`
}

// IsolationJSON is the host's CPU isolation, kind by kind.
type IsolationJSON struct {
	// CPUs is every isolated CPU (any kind): no IRQ or benchmark is
	// placed there unless named; unknown when no kind is known.
	CPUs unknown.Value[cpuset.Set] `json:"cpus"`
	// Domain is isolcpus= with the domain flag (or none): cpu/isolated.
	Domain SourcedCPUs `json:"domain"`
	// ManagedIRQ is isolcpus=managed_irq: kernel-managed IRQs avoid
	// these CPUs.
	ManagedIRQ SourcedCPUs `json:"managed_irq"`
	NohzFull   SourcedCPUs `json:"nohz_full"`
	// IRQAffinity is irqaffinity=, the default affinity of IRQs; ""
	// when not given.
	IRQAffinity SourcedCPUs `json:"irqaffinity"`
}

// MarshalJSON writes unknown isolated CPUs as null with the reason.
func (i IsolationJSON) MarshalJSON() ([]byte, error) {
	type plain IsolationJSON
	return unknown.MarshalObject(plain(i))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (i *IsolationJSON) UnmarshalJSON(b []byte) error {
	type plain IsolationJSON
	return unknown.UnmarshalObject(b, (*plain)(i))
}

// SourcedCPUs is a CPU set and where it was read, "sysfs" or "cmdline";
// both are unknown, with the reason, when nothing in the tree says.
type SourcedCPUs struct {
	CPUs   unknown.Value[cpuset.Set]      `json:"cpus"`
	Source unknown.Value[topology.Source] `json:"source"`
}

// MarshalJSON writes an unknown set and source as null with the reason.
func (s SourcedCPUs) MarshalJSON() ([]byte, error) {
	type plain SourcedCPUs
	return unknown.MarshalObject(plain(s))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (s *SourcedCPUs) UnmarshalJSON(b []byte) error {
	type plain SourcedCPUs
	return unknown.UnmarshalObject(b, (*plain)(s))
}

// IOMMUJSON is the IOMMU's default mode (topology.IOMMUMode): mode
// "passthrough", "translated", "default" or "off"; source "sysfs" or
// "cmdline" (both unknown, with the reason, when nothing says); param the
// command-line parameter that decided, "" for none.
type IOMMUJSON struct {
	Mode   unknown.Value[topology.DMAMode] `json:"mode"`
	Source unknown.Value[topology.Source]  `json:"source"`
	Param  string                          `json:"param"`
}

// MarshalJSON writes an unknown mode and source as null with the reason.
func (m IOMMUJSON) MarshalJSON() ([]byte, error) {
	type plain IOMMUJSON
	return unknown.MarshalObject(plain(m))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (m *IOMMUJSON) UnmarshalJSON(b []byte) error {
	type plain IOMMUJSON
	return unknown.UnmarshalObject(b, (*plain)(m))
}

// NodeJSON is one NUMA node.
type NodeJSON struct {
	ID          int                  `json:"id"`
	CPUs        cpuset.Set           `json:"cpus"`
	OnlineCPUs  cpuset.Set           `json:"online_cpus"`
	MemoryBytes unknown.Value[int64] `json:"memory_bytes"`
	Distances   unknown.Value[[]int] `json:"distances"`
}

// CPUJSON is one logical CPU; an unknown number or set is null, with
// its reason beside it.
type CPUJSON struct {
	ID       int                       `json:"id"`
	Node     unknown.Value[int]        `json:"node"`
	Package  unknown.Value[int]        `json:"package"`
	Core     unknown.Value[int]        `json:"core"`
	Online   bool                      `json:"online"`
	Siblings unknown.Value[cpuset.Set] `json:"siblings"`
	L3       unknown.Value[int]        `json:"l3"`
	Isolated bool                      `json:"isolated"`
}

// NICJSON is one network interface with a device.
type NICJSON struct {
	Name      string             `json:"name"`
	PCI       string             `json:"pci"`
	Virtio    string             `json:"virtio,omitempty"`
	Driver    string             `json:"driver"`
	Node      unknown.Value[int] `json:"node"` // numa_node as the kernel says
	LocalNode unknown.Value[int] `json:"local_node"`
	// Locality is how LocalNode and the local CPUs are known.
	Locality  unknown.Value[topology.LocalitySource] `json:"locality"`
	LocalCPUs unknown.Value[string]                  `json:"local_cpus"` // local_cpulist
	RxQueues  unknown.Value[int]                     `json:"rx_queues"`
	TxQueues  unknown.Value[int]                     `json:"tx_queues"`
	IRQs      []int                                  `json:"irqs"`
	QueueIRQs []int                                  `json:"queue_irqs"`
	SpeedMbps unknown.Value[int]                     `json:"speed_mbps"`
	OperState unknown.Value[topology.OperState]      `json:"operstate"`
	VendorID  string                                 `json:"vendor_id,omitempty"`
	DeviceID  string                                 `json:"device_id,omitempty"`
	Vendor    string                                 `json:"vendor,omitempty"`
	Product   string                                 `json:"product,omitempty"`
	Steering  []QueueCPU                             `json:"steering,omitempty"`
	// Inferred is true for a NIC known only from IRQ names (a tree
	// without /sys/class/net): its queues and speed are unknown, its
	// driver is its PCI function's.
	Inferred bool `json:"inferred,omitempty"`
	// PCIAbsent is true when PCI comes from IRQ names and the tree has no
	// such PCI function.
	PCIAbsent bool `json:"pci_absent,omitempty"`
}

// QueueCPU is one queue's rps_cpus or xps_cpus.
type QueueCPU struct {
	Queue string                `json:"queue"` // "rx-0", "tx-3"
	CPUs  unknown.Value[string] `json:"cpus"`
}

// MarshalJSON writes an unknown memory size as null with its reason.
func (n NodeJSON) MarshalJSON() ([]byte, error) {
	type plain NodeJSON
	return unknown.MarshalObject(plain(n))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (n *NodeJSON) UnmarshalJSON(b []byte) error {
	type plain NodeJSON
	return unknown.UnmarshalObject(b, (*plain)(n))
}

// MarshalJSON writes unknown numbers as null with their reasons.
func (c CPUJSON) MarshalJSON() ([]byte, error) {
	type plain CPUJSON
	return unknown.MarshalObject(plain(c))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (c *CPUJSON) UnmarshalJSON(b []byte) error {
	type plain CPUJSON
	return unknown.UnmarshalObject(b, (*plain)(c))
}

// MarshalJSON writes unknown facts as null with their reasons.
func (n NICJSON) MarshalJSON() ([]byte, error) {
	type plain NICJSON
	return unknown.MarshalObject(plain(n))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (n *NICJSON) UnmarshalJSON(b []byte) error {
	type plain NICJSON
	return unknown.UnmarshalObject(b, (*plain)(n))
}

// MarshalJSON writes an unknown steering mask as null with its reason.
func (q QueueCPU) MarshalJSON() ([]byte, error) {
	type plain QueueCPU
	return unknown.MarshalObject(plain(q))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (q *QueueCPU) UnmarshalJSON(b []byte) error {
	type plain QueueCPU
	return unknown.UnmarshalObject(b, (*plain)(q))
}

// Topology builds the topology document of h; t supplies each NIC's IRQs.
func Topology(h *topology.Host, t *irq.Table) TopologyDoc {
	doc := TopologyDoc{Online: h.Online, Possible: h.Possible, Isolated: h.Isolated,
		NohzFull: h.NohzFull, Notes: append(slices.Clone(h.Notes), t.Notes...),
		Isolation: isolationJSON(h)}
	m := h.IOMMUMode()
	doc.IOMMU = IOMMUJSON{Mode: m.Mode, Source: m.Source, Param: m.Param}
	for _, n := range h.Nodes {
		nj := NodeJSON{ID: n.ID, CPUs: n.CPUs, OnlineCPUs: n.CPUs.Intersection(h.Online), Distances: n.Distances,
			MemoryBytes: n.MemoryBytes}
		doc.Nodes = append(doc.Nodes, nj)
	}
	for _, c := range h.CPUs {
		doc.CPUs = append(doc.CPUs, CPUJSON{ID: c.ID, Node: c.Node, Package: c.Package, Core: c.Core,
			Online: c.Online, Siblings: c.Siblings, L3: c.L3, Isolated: c.Isolated})
	}
	for i := range h.NICs {
		n := &h.NICs[i]
		loc := h.Locality(n)
		nj := NICJSON{Name: n.Name, PCI: n.PCI, Virtio: n.Virtio, Driver: n.Driver, Node: n.Node,
			LocalNode: loc.Node, Locality: loc.Source, RxQueues: n.RxQueues, TxQueues: n.TxQueues,
			IRQs: []int{}, QueueIRQs: []int{}, SpeedMbps: n.SpeedMbps, OperState: n.OperState,
			VendorID: n.VendorID, DeviceID: n.DeviceID, Vendor: n.Vendor, Product: n.Product,
			Inferred: n.Inferred, PCIAbsent: n.PCIAbsent}
		if local, ok := n.LocalCPUs.Get(); ok {
			nj.LocalCPUs = unknown.Of(local.List())
		} else {
			nj.LocalCPUs = unknown.Not[string](n.LocalCPUs.Why())
		}
		for _, q := range t.ForNIC(n.Name) {
			nj.IRQs = append(nj.IRQs, q.IRQ)
			if q.Owner.Kind == irq.KindQueue {
				nj.QueueIRQs = append(nj.QueueIRQs, q.IRQ)
			}
		}
		for _, q := range n.Queues {
			qc := QueueCPU{Queue: fmt.Sprintf("%s-%d", q.Kind, q.Index)}
			if cpus, ok := q.CPUs.Get(); ok {
				qc.CPUs = unknown.Of(cpus.List())
			} else {
				qc.CPUs = unknown.Not[string](q.CPUs.Why())
			}
			nj.Steering = append(nj.Steering, qc)
		}
		doc.NICs = append(doc.NICs, nj)
	}
	if doc.Nodes == nil {
		doc.Nodes = []NodeJSON{}
	}
	if doc.NICs == nil {
		doc.NICs = []NICJSON{}
	}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	return doc
}

func isolationJSON(h *topology.Host) IsolationJSON {
	from := h.IsolationFrom
	iso := IsolationJSON{
		Domain: sourced(h.Isolated, from.Isolated), ManagedIRQ: sourced(h.ManagedIRQ, from.ManagedIRQ),
		NohzFull: sourced(h.NohzFull, from.NohzFull), IRQAffinity: sourced(h.IRQAffinity, from.IRQAffinity)}
	if iso.Domain.CPUs.Known() || iso.ManagedIRQ.CPUs.Known() || iso.NohzFull.CPUs.Known() {
		iso.CPUs = unknown.Of(h.IsolatedCPUs())
	} else {
		iso.CPUs = unknown.Not[cpuset.Set](from.Isolated.Why())
	}
	return iso
}

func sourced(s cpuset.Set, src unknown.Value[topology.Source]) SourcedCPUs {
	if !src.Known() {
		return SourcedCPUs{CPUs: unknown.Not[cpuset.Set](src.Why()), Source: src}
	}
	return SourcedCPUs{CPUs: unknown.Of(s), Source: src}
}

// writeIsolation writes the isolation and IOMMU lines: "isolated CPUs
// 0-4,11-79: isolcpus managed_irq 0-4,11-79 (source: cmdline); ...", the
// default IRQ affinity when irqaffinity= sets it, the IOMMU mode when
// known. Unknown sets are left to the notes.
func writeIsolation(w io.Writer, doc TopologyDoc) {
	iso := doc.Isolation
	var parts []string
	for _, k := range []struct {
		name string
		set  SourcedCPUs
	}{{"isolcpus", iso.Domain}, {"isolcpus managed_irq", iso.ManagedIRQ}, {"nohz_full", iso.NohzFull}} {
		if cpus, ok := k.set.CPUs.Get(); ok && !cpus.IsEmpty() {
			parts = append(parts, fmt.Sprintf("%s %s%s", k.name, cpus, sourceWords(string(k.set.Source.Or("")), "")))
		}
	}
	if len(parts) > 0 {
		all := iso.CPUs.Or(cpuset.Set{})
		linef(w, "isolated %s %s: %s", units.Choose(all.Len(), "CPU", "CPUs"), units.OrDash(all.List()), strings.Join(parts, "; "))
	}
	if a := iso.IRQAffinity; !a.CPUs.Or(cpuset.Set{}).IsEmpty() {
		linef(w, "default IRQ affinity %s (irqaffinity=, and the kernel's boot CPU)%s", a.CPUs.Or(cpuset.Set{}), sourceWords(string(a.Source.Or("")), ""))
	}
	m := doc.IOMMU
	src := string(m.Source.Or(""))
	switch mode, ok := m.Mode.Get(); {
	case !ok || mode == "":
	case mode == topology.DMAModeDefault:
		linef(w, "IOMMU on, in the kernel's build default mode (translated unless built for passthrough)%s", sourceWords(src, m.Param))
	default:
		linef(w, "IOMMU %s%s", mode, sourceWords(src, m.Param))
	}
}

// sourceWords is " (source: cmdline iommu=pt)", or "" for no source.
func sourceWords(src, param string) string {
	if src == "" {
		return ""
	}
	if param != "" {
		src += " " + param
	}
	return " (source: " + src + ")"
}

// cpuListWidth is where a node's CPU list wraps, after a comma, onto the
// rows below: an interleaved node ("0,2,4,...,102") is shown whole.
const cpuListWidth = 64

// WriteTopology writes the human form: the nodes, each CPU list whole
// (wrapped), then the NICs grouped under the node they are local to,
// unknown last.
func WriteTopology(w io.Writer, doc TopologyDoc) error {
	if rows := nodeRows(doc.Nodes); len(rows) > 0 {
		if err := writeTable(w, []string{"NODE", "CPUS", "ONLINE", "MEMORY", "DISTANCES"}, rows); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\nCPUs online %s of %s", units.OrDash(doc.Online.List()), units.OrDash(doc.Possible.List()))
	if absent := doc.Possible.Difference(presentCPUs(doc)); !absent.IsEmpty() {
		// Not offline: possible slots without a CPU.
		fmt.Fprintf(w, " (%s not present)", absent)
	}
	fmt.Fprintln(w)
	writeIsolation(w, doc)

	nics := slices.Clone(doc.NICs)
	slices.SortStableFunc(nics, func(a, b NICJSON) int {
		ka, kb := a.LocalNode.Or(-1), b.LocalNode.Or(-1)
		if ka < 0 {
			ka = 1 << 30
		}
		if kb < 0 {
			kb = 1 << 30
		}
		return ka - kb
	})
	var rows [][]string
	for _, n := range nics {
		rows = append(rows, nicRow(n))
	}
	fmt.Fprintln(w)
	if len(rows) == 0 {
		fmt.Fprintln(w, "no NICs with a device")
	} else if err := writeTable(w, []string{"NODE", "NIC", "DRIVER", "PCI", "RX/TX", "SPEED", "STATE", "IRQS", "DEVICE"}, rows); err != nil {
		return err
	}
	if err := writeSteering(w, doc.Steer); err != nil {
		return err
	}
	return writeNotes(w, doc.Notes)
}

// nodeRows is a row per node, its CPU list whole: wrapped after a comma
// onto the rows below.
func nodeRows(nodes []NodeJSON) [][]string {
	var rows [][]string
	for _, n := range nodes {
		mem := "unknown"
		if m, ok := n.MemoryBytes.Get(); ok {
			mem = units.Bytes(m)
		}
		dist := "unknown"
		if d, ok := n.Distances.Get(); ok {
			dist = units.Ints(d, " ")
		}
		cpus := textwrap.Lines(units.OrDash(n.CPUs.List()), cpuListWidth, runeWidth)
		rows = append(rows, []string{strconv.Itoa(n.ID), cpus[0], strconv.Itoa(n.OnlineCPUs.Len()), mem, dist})
		for _, c := range cpus[1:] {
			rows = append(rows, []string{"", c})
		}
	}
	return rows
}

// nicRow is one NIC's row of the NIC table.
func nicRow(n NICJSON) []string {
	node := "unknown"
	local, localOK := n.LocalCPUs.Get()
	if id, ok := n.LocalNode.Get(); ok {
		node = strconv.Itoa(id)
		if !unknown.Is(n.Locality, topology.LocalitySourceNumaNode) {
			node += " (" + n.Locality.String() + ")"
		}
	} else if unknown.Is(n.Locality, topology.LocalitySourceLocalCPUList) && localOK {
		node = "CPUs " + local
	}
	speed := "-"
	if s, ok := n.SpeedMbps.Get(); ok && s > 0 {
		speed = Speed(s)
	}
	dev := n.PCI
	switch {
	case dev == "":
		dev = "-"
	case n.PCIAbsent:
		dev += " (not in tree)"
	}
	queues := "unknown"
	if rx, ok := n.RxQueues.Get(); ok {
		if tx, ok := n.TxQueues.Get(); ok {
			queues = fmt.Sprintf("%d/%d", rx, tx)
		}
	}
	model := "-"
	switch {
	case n.Product != "":
		model = n.Product
	case n.VendorID != "":
		model = strings.TrimPrefix(n.VendorID, "0x") + ":" + strings.TrimPrefix(n.DeviceID, "0x")
	}
	return []string{node, n.Name, units.OrDash(n.Driver), dev,
		queues, speed, units.OrDash(string(n.OperState.Or(""))),
		irqRange(n.IRQs), model}
}

// presentCPUs is the set of CPUs the document lists: online ones and
// those with a cpuN folder.
func presentCPUs(doc TopologyDoc) cpuset.Set {
	ids := make([]int, len(doc.CPUs))
	for i, c := range doc.CPUs {
		ids[i] = c.ID
	}
	return cpuset.New(ids...)
}

func writeNotes(w io.Writer, notes []string) error {
	if len(notes) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	for _, n := range notes {
		if err := linef(w, "note: %s", n); err != nil {
			return err
		}
	}
	return nil
}

// irqRange prints IRQ numbers compactly, "283-299 (17)"; "-" for none.
func irqRange(irqs []int) string {
	if len(irqs) == 0 {
		return "-"
	}
	ids := make([]int, 0, len(irqs))
	for _, n := range irqs {
		if n >= 0 && n <= cpuset.MaxID {
			ids = append(ids, n)
		}
	}
	return fmt.Sprintf("%s (%d)", cpuset.New(ids...).List(), len(irqs))
}

// Speed prints a link speed given in Mbit/s, "100 Gbit/s".
func Speed(mbps int) string {
	if mbps >= 1000 && mbps%1000 == 0 {
		return fmt.Sprintf("%d Gbit/s", mbps/1000)
	}
	if mbps >= 1000 {
		return fmt.Sprintf("%.1f Gbit/s", float64(mbps)/1000)
	}
	return fmt.Sprintf("%d Mbit/s", mbps)
}
