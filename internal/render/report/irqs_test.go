package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
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
	doc := IRQDoc{IRQs: []IRQJSON{
		{IRQ: 1, Name: "a", Queue: notNIC[int](), Managed: unknown.Of(true)},
		{IRQ: 2, Name: "b", Queue: notNIC[int](), Managed: unknown.Of(false)},
		{IRQ: 3, Name: "c", Queue: notNIC[int](), Managed: unknown.NotAs[bool](unknown.KindKernel, "a kernel before 6.12 does not mark managed IRQs")},
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
	for _, want := range []string{`"managed":true`, `"managed":false`, `"managed":null`,
		`"managed_unknown":{"reason":"not supported by this kernel","detail":"a kernel before 6.12 does not mark managed IRQs"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
}

// TestAppendIRQJSON: one IRQ streamed is what json.MarshalIndent makes of
// the same IRQJSON at the same indent, for every kind of value a field
// holds: known, unknown with a detail and without, unknown for nobody
// saying why, and reasons holding what JSON escapes.
func TestAppendIRQJSON(t *testing.T) {
	cols := newPerCPUCols([]int{0, 1, 10, 2})
	tests := []IRQJSON{
		{IRQ: 1, Name: "all known", NIC: "eth0", Queue: unknown.Of(3), Kind: unknown.Of(irq.KindQueue), Dir: interrupts.DirRX,
			Chip: "PCI-MSIX", Affinity: unknown.Of("0-3"), Effective: unknown.Of("2"), Node: unknown.Of(1),
			AffinityNodes: []int{0, 1}, EffectiveNodes: []int{1}, Local: unknown.Of(true), Managed: unknown.Of(false),
			Total: unknown.Of(uint64(12)), PerCPU: unknown.Of(PerCPU{cols: cols, counts: []uint64{5, 0, 7, 0}})},
		{IRQ: 2, Name: "all unknown", AffinityNodes: []int{}, EffectiveNodes: []int{},
			Queue: notNIC[int](), Kind: notNIC[irq.Kind](),
			Affinity:  unknown.NotAs[string](unknown.KindNotCaptured, "no /proc/irq/2/smp_affinity"),
			Effective: unknown.NotAs[string](unknown.KindKernel, ""),
			Node:      unknown.NotAs[int](unknown.KindNotReported, "/proc/irq/2/node is -1"),
			Local:     unknown.NotAs[bool](unknown.KindFailed, `a "quoted" <detail> & more`+hostile),
			Total:     unknown.NotAs[uint64](unknown.KindNotCaptured, "no /proc/interrupts"),
			PerCPU:    unknown.NotAs[PerCPU](unknown.KindNotCaptured, "no /proc/interrupts")},
		{IRQ: 3, Name: "zero values", AffinityNodes: []int{}, EffectiveNodes: []int{},
			PerCPU: unknown.Of(PerCPU{})},
	}
	for _, j := range tests {
		want, err := json.MarshalIndent(j, "    ", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got := appendIRQJSON(nil, j)
		if diff := cmp.Diff("\n    "+string(want), string(got)); diff != "" {
			t.Errorf("IRQ %d (%s): appendIRQJSON differs from json.MarshalIndent (-want +got):\n%s", j.IRQ, j.Name, diff)
		}
	}
}
