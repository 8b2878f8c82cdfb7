package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestWriteIRQsJSON: the streamed document is byte for byte what
// jsondoc.Write makes of IRQs(h, t), on every committed tree and on
// an empty table with a clean note and with hostile ones, which it
// shows escaped.
func TestWriteIRQsJSON(t *testing.T) {
	for _, name := range hosttest.Names() {
		h, err := topology.Read(hosttest.Open(t, hosttest.Root(name)))
		if err != nil {
			t.Fatal(err)
		}
		tab, err := irq.Load(h, irq.Options{All: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []*irq.Table{tab, {Notes: []string{"a <note> & more"}}, {Notes: []string{hostile, "x\u0085\x7f\u061c"}}} {
			var want, got bytes.Buffer
			if err := jsondoc.Write(&want, jsondoc.SchemaIRQList, IRQs(h, tt), true); err != nil {
				t.Fatal(err)
			}
			if err := WriteIRQsJSON(&got, h, tt, nil); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("%s: WriteIRQsJSON differs from jsondoc.Write (-want +got):\n%s", name, diff)
			}
			if bad := rawRune(got.String()); bad != "" {
				t.Errorf("%s: WriteIRQsJSON wrote a raw %s", name, bad)
			}
		}
	}
}

// TestPerCPU: keys in encoding/json's map order, zero counts left out, a
// CPU listed in two columns summed.
func TestPerCPU(t *testing.T) {
	cols := newPerCPUCols([]int{0, 1, 2, 10, 11, 100, 2})
	p := PerCPU{cols: cols, counts: []uint64{5, 0, 7, 1, 2, 3, 1}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"0": 5, "2": 8, "10": 1, "11": 2, "100": 3}
	wantJSON, _ := json.Marshal(want)
	if string(b) != string(wantJSON) {
		t.Errorf("PerCPU JSON = %s, want %s", b, wantJSON)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "eth0-TxRx-3", "a<b>&c", "q\"\\\n\t\x00\x1f\x7f", "\u2028\u2029", "bad\xff\xfe", "网卡"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, encoding/json says %s", s, got, want)
		}
	})
}

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
