package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestOneIsSingular: a line about one CPU or one IRQ says "CPU 5",
// "IRQ 283", not "CPUs 5"; several keep the plural.
func TestOneIsSingular(t *testing.T) {
	one, two := cpuset.New(5), cpuset.New(5, 6)
	tests := []struct {
		give  func(w *bytes.Buffer)
		wants []string
	}{
		{func(w *bytes.Buffer) {
			writePinTargets(w, &tune.PinResult{Strategy: tune.StrategySpread, Targets: []tune.Target{{NIC: "eth0", CPUs: one, Source: "--cpus 5"}}})
		}, []string{"eth0: spread on CPU 5 (--cpus 5)\n"}},
		{func(w *bytes.Buffer) {
			writePinTargets(w, &tune.PinResult{Strategy: tune.StrategySpread, Targets: []tune.Target{{NIC: "eth0", CPUs: two, Source: "--cpus 5-6"}}})
		}, []string{"eth0: spread on CPUs 5-6 (--cpus 5-6)\n"}},
		{func(w *bytes.Buffer) {
			writeIrqbalanceWarning(w, tune.IrqbalanceWarning{PID: 4242, Loose: []int{283}, BanConfig: []string{"IRQBALANCE_BANNED_IRQS=283"}})
		}, []string{"does not ban IRQ 283: it will move it back.\n", "would make it leave that IRQ alone:\n"}},
		{func(w *bytes.Buffer) {
			writeIrqbalanceWarning(w, tune.IrqbalanceWarning{PID: 4242, Loose: []int{283, 285}, BanConfig: []string{"IRQBALANCE_BANNED_IRQS=283 285"}})
		}, []string{"does not ban IRQs 283,285: it will move them back.\n", "would make it leave them alone:\n"}},
		{func(w *bytes.Buffer) {
			WriteTopology(w, TopologyDoc{Isolation: IsolationJSON{CPUs: unknown.Of(one), NohzFull: SourcedCPUs{CPUs: unknown.Of(one), Source: unknown.Of(topology.SourceCmdline)}}})
		}, []string{"\nisolated CPU 5: nohz_full 5 (source: cmdline)\n"}},
		{func(w *bytes.Buffer) {
			WriteTopology(w, TopologyDoc{Isolation: IsolationJSON{CPUs: unknown.Of(two), NohzFull: SourcedCPUs{CPUs: unknown.Of(two), Source: unknown.Of(topology.SourceCmdline)}}})
		}, []string{"\nisolated CPUs 5-6: nohz_full 5-6 (source: cmdline)\n"}},
	}
	for i, tt := range tests {
		var b bytes.Buffer
		tt.give(&b)
		for _, want := range tt.wants {
			if !strings.Contains(b.String(), want) {
				t.Errorf("case %d: no %q in\n%s", i, want, b.String())
			}
		}
	}
}
