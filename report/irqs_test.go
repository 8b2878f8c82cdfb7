package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/hosttest"
	"github.com/irqnuma/irqnuma/irq"
	"github.com/irqnuma/irqnuma/topology"
)

// TestIRQsManagedUnknown: managed is true, false or null in JSON and
// yes, no or unknown in the table; unknown is never printed as "no".
func TestIRQsManagedUnknown(t *testing.T) {
	yes, no := true, false
	doc := IRQDoc{IRQs: []IRQJSON{
		{IRQ: 1, Name: "a", Queue: -1, Managed: &yes},
		{IRQ: 2, Name: "b", Queue: -1, Managed: &no},
		{IRQ: 3, Name: "c", Queue: -1},
	}}
	var tbl bytes.Buffer
	if err := WriteIRQs(&tbl, doc); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(tbl.String()), "\n")
	col := -1
	for i, h := range strings.Fields(lines[0]) {
		if h == "MANAGED" {
			col = i
		}
	}
	for i, want := range []string{"yes", "no", "unknown"} {
		if got := strings.Fields(lines[i+1])[col]; got != want {
			t.Errorf("IRQ %d: MANAGED %q, want %q", i+1, got, want)
		}
	}
	b, err := json.Marshal(doc.IRQs)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"managed":true`, `"managed":false`, `"managed":null`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
}

// TestPlaceManagedNode: /proc/irq/N/node of a managed IRQ is the node of
// its CPUs, not its device's, so it decides nothing; that of an IRQ known
// not to be managed is the device's. seed's nvme0q0 (IRQ 40) is not
// managed, nvme0q2 (IRQ 42) is.
func TestPlaceManagedNode(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	h, err := topology.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := irq.Load(h, irq.Options{All: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		give      int
		wantKnown bool
	}{{40, true}, {42, false}}
	for _, tt := range tests {
		q, ok := tab.Get(tt.give)
		if !ok {
			t.Fatalf("no IRQ %d", tt.give)
		}
		if p := Place(h, q); p.LocalKnown != tt.wantKnown {
			t.Errorf("Place(IRQ %d, managed %v, node %d).LocalKnown = %v, want %v", tt.give, q.Managed, q.Node, p.LocalKnown, tt.wantKnown)
		}
	}
}
