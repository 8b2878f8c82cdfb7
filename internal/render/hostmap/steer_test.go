package hostmap

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestMapMarksNoRSS: after `ethtool -X eth0 equal 8` on the seed's 16
// queues, the IRQs of queues 8-15 (292-299) get no RSS traffic: their
// cells carry "-", eth0's line counts them, the legend says what "-" is;
// a rule to queue 12 takes it out. Without the steering nothing is
// marked.
func TestMapMarksNoRSS(t *testing.T) {
	h, tb := loadMapHost(t, hosttest.Root("seed"))
	n := &steer.NIC{Name: "eth0", RSS: &steer.RSS{Rings: 16},
		Rules: &steer.Rules{Count: 1, Rules: []steer.Rule{{Location: 3, FlowType: "tcp4", Action: steer.RuleActionQueue, Queue: 12}}}}
	for i := range 128 {
		n.RSS.Table = append(n.RSS.Table, uint32(i%8))
	}
	m := Build(h, tb, nil, Options{Steer: &steer.Host{Source: "netlink", NICs: []*steer.NIC{n}}})
	nic, _ := m.NIC("eth0")
	if diff := cmp.Diff([]int{292, 293, 294, 295, 297, 298, 299}, nic.NoRSSIRQs); diff != "" {
		t.Errorf("NoRSSIRQs (-want +got):\n%s", diff)
	}
	// IRQ 292 (queue 8) lands on CPU 60 alone, 296 (queue 12, ruled) on 26.
	if c := mustCPU(t, m, 60); !c.NoRSS || c.Label != "q8-" {
		t.Errorf("CPU 60: NoRSS %v label %q, want marked q8-", c.NoRSS, c.Label)
	}
	if c := mustCPU(t, m, 26); c.NoRSS || strings.Contains(c.Label, "-") {
		t.Errorf("CPU 26 (queue 12, a rule's target): label %q, want unmarked", c.Label)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, m, Style{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"7 get no RSS traffic (-)", "- = its queues get no RSS traffic"} {
		if !strings.Contains(out, want) {
			t.Errorf("map text lacks %q:\n%s", want, out)
		}
	}
	plain := Build(h, tb, nil, Options{})
	if nic, _ := plain.NIC("eth0"); len(nic.NoRSSIRQs) != 0 || slices.ContainsFunc(plain.Packages[1].Nodes[0].Cores, func(c Core) bool {
		return slices.ContainsFunc(c.Threads, func(th CPU) bool { return th.NoRSS })
	}) {
		t.Errorf("without steering, queues are marked: %v", nic.NoRSSIRQs)
	}
}
