package audit

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestProcessNICJSON: an entry of the audit's "processes" is one object,
// the Use's fields (an unknown attribution null, with its reason beside
// it) and then judged and judged_by, which the embedded Use's
// MarshalJSON does not swallow; it reads back as it was.
func TestProcessNICJSON(t *testing.T) {
	give := ProcessNIC{Use: nicuse.Use{PID: 7, Comm: "iperf3", NICs: []string{}, How: []string{"it has no TCP or UDP sockets (yet)"},
		Attribution: unknown.NotAs[nicuse.Attribution](unknown.KindNotApplicable, "it has no TCP or UDP sockets (yet)")},
		Judged: []string{"eth1"}, JudgedBy: "--nic"}
	b, err := json.Marshal(give)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"pid":7,"comm":"iperf3","nics":[],"attribution":null,"how":["it has no TCP or UDP sockets (yet)"],` +
		`"attribution_unknown":{"reason":"not applicable","detail":"it has no TCP or UDP sockets (yet)"},"judged":["eth1"],"judged_by":"--nic"}`
	if string(b) != want {
		t.Errorf("json.Marshal(%+v) =\n%s\nwant\n%s", give, b, want)
	}
	var got ProcessNIC
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(give, got, cmp.Comparer(func(x, y unknown.Value[nicuse.Attribution]) bool {
		return x.Known() == y.Known() && x.Or("") == y.Or("") && x.Why() == y.Why()
	})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	known := ProcessNIC{Use: nicuse.Use{PID: 8, NICs: []string{"eth0"}, How: []string{}, Attribution: unknown.Of(nicuse.AttributionSockets)}, Judged: []string{}}
	if b, _ := json.Marshal(known); string(b) != `{"pid":8,"comm":"","nics":["eth0"],"attribution":"sockets","how":[],"judged":[],"judged_by":""}` {
		t.Errorf("json.Marshal(%+v) = %s", known, b)
	}
}
