package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestWriteTopologyInferred: a NIC whose queue counts are unknown (as
// for a NIC known from IRQ names) shows them as unknown, and a PCI
// address its tree has no function for says so.
func TestWriteTopologyInferred(t *testing.T) {
	doc := TopologyDoc{NICs: []NICJSON{
		{Name: "0000:19:00.0", PCI: "0000:19:00.0", Inferred: true, PCIAbsent: true, IRQs: []int{267, 268}},
		{Name: "ens1f0", PCI: "0000:3b:00.0", LocalNode: unknown.Of(0), Locality: unknown.Of(topology.LocalitySourceNumaNode), Inferred: true, IRQs: []int{331}},
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

// TestWriteTopologyAbsentCPUs: possible CPUs without a CPU record are
// said to be not present, not counted as offline (hwloc-32intel64's
// possible 0-111 with cpu0-31).
func TestWriteTopologyAbsentCPUs(t *testing.T) {
	doc := TopologyDoc{Online: cpuset.New(0, 1), Possible: cpuset.New(0, 1, 2, 3, 4),
		CPUs: []CPUJSON{{ID: 0, Online: true}, {ID: 1, Online: true}, {ID: 2}}}
	var b bytes.Buffer
	if err := WriteTopology(&b, doc); err != nil {
		t.Fatal(err)
	}
	if want := "CPUs online 0-1 of 0-4 (3-4 not present)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("WriteTopology lacks %q:\n%s", want, b.String())
	}
}
