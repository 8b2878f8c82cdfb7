package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
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
