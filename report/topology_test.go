package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteTopologyInferred: a NIC whose queue counts are unknown (-1, as
// for a NIC known from IRQ names) shows them as unknown, and a PCI
// address its tree has no function for says so.
func TestWriteTopologyInferred(t *testing.T) {
	doc := TopologyDoc{NICs: []NICJSON{
		{Name: "0000:19:00.0", PCI: "0000:19:00.0", LocalNode: -1, Locality: "unknown", Inferred: true, PCIAbsent: true, RxQueues: -1, TxQueues: -1, IRQs: []int{267, 268}},
		{Name: "ens1f0", PCI: "0000:3b:00.0", LocalNode: 0, Locality: "numa_node", Inferred: true, RxQueues: -1, TxQueues: -1, IRQs: []int{331}},
	}}
	var b bytes.Buffer
	if err := WriteTopology(&b, doc); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"unknown  0000:19:00.0  -       0000:19:00.0 (not in tree)  unknown",
		"0        ens1f0        -       0000:3b:00.0                unknown",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteTopology lacks %q:\n%s", want, b.String())
		}
	}
}
