package audit

import (
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestPodIRQBalancing: on the seed host (eth0's IRQ 285 delivered to
// CPU 17; CPU 16's and 17's thread siblings are 48 and 49), a container
// whose pod asked CRI-O to keep IRQs off its CPUs 16-17 is told IRQ 285
// lands there; under housekeeping the first CPU's siblings keep their
// IRQs, so CPUs 17-18 are not; a value CRI-O ignores is no request; a
// config that could not be read is a warning not-checked naming why.
func TestPodIRQBalancing(t *testing.T) {
	tests := []struct {
		name      string
		ib        unknown.Value[proc.IRQBalancing]
		wantIRQ   string // in the finding's message; "" for none
		wantFix   string
		wantNoted string // in the not-checked's message; "" for none
	}{
		{name: "disable", ib: unknown.Of(proc.IRQBalancing{Value: "disable", Key: "irq-load-balancing.crio.io", Off: true, CPUs: unknown.Of(cpuset.New(16, 17)), From: "/c/config.json"}),
			wantIRQ: `CPU 17, which pod default/p container c asked CRI-O to keep IRQs off (irq-load-balancing.crio.io: "disable", /c/config.json)`,
			wantFix: "irqnuma irq pin eth0 --exclude 16-17; then find what moved them"},
		{name: "the group's CPUs when the config has none", ib: unknown.Of(proc.IRQBalancing{Value: "true", Key: "irq-load-balancing.crio.io/c", Off: true, From: "/c/config.json"}),
			wantIRQ: `(irq-load-balancing.crio.io/c: "true"`, wantFix: "irqnuma irq pin eth0 --exclude 16-17;"},
		{name: "housekeeping keeps the first CPU's", ib: unknown.Of(proc.IRQBalancing{Value: "housekeeping", Key: "irq-load-balancing.crio.io", Off: true, Housekeeping: true, CPUs: unknown.Of(cpuset.New(17, 18))})},
		{name: "housekeeping", ib: unknown.Of(proc.IRQBalancing{Value: "housekeeping", Key: "irq-load-balancing.crio.io", Off: true, Housekeeping: true, CPUs: unknown.Of(cpuset.New(16, 17))}),
			wantIRQ: "CPU 17, which pod default/p container c", wantFix: "--exclude 17;"},
		{name: "ignored", ib: unknown.Of(proc.IRQBalancing{Value: "enable", Key: "irq-load-balancing.crio.io", CPUs: unknown.Of(cpuset.New(16, 17))})},
		{name: "unread", ib: unknown.NotAs[proc.IRQBalancing](unknown.KindMalformed, "/c/config.json: not a JSON object"), wantNoted: "its CRI-O config is not read: /c/config.json: not a JSON object"},
	}
	for _, tt := range tests {
		pg := proc.PodGroup{Path: "/pod/c", Pod: proc.PodRef{Namespace: "default", Name: "p", Container: "c", IRQBalancing: tt.ib, ExclusiveCPUs: unknown.Of(cpuset.Set{})}}
		st := readSeedPod(t, "member", pg)
		got := onlyCheck(st.Findings, CheckPodIRQBalancing)
		switch {
		case tt.wantIRQ == "" && len(got) != 0:
			t.Errorf("%s: findings %+v, want none", tt.name, got)
		case tt.wantIRQ != "" && (len(got) != 1 || got[0].NIC != "eth0" || !slices.Equal(got[0].IRQ, []int{285}) || !got[0].CPUs.Equal(cpuset.New(17)) ||
			got[0].Severity != SeverityWarning || got[0].Subject != "--pod default/p" ||
			!strings.Contains(got[0].Message, tt.wantIRQ) || !strings.Contains(got[0].Fix, tt.wantFix)):
			t.Errorf("%s: findings %+v, want one for IRQ 285 on CPU 17 saying %q, fixed by %q", tt.name, got, tt.wantIRQ, tt.wantFix)
		}
		nc := notCheckedOf(st.Findings, CheckPodIRQBalancing)
		switch {
		case tt.wantNoted == "" && len(nc) != 0:
			t.Errorf("%s: not-checked %+v, want none", tt.name, nc)
		case tt.wantNoted != "" && (len(nc) != 1 || nc[0].Severity != SeverityWarning || nc[0].Subject != "pod-irq-balancing for --pod default/p container c" ||
			!strings.Contains(nc[0].Message, tt.wantNoted)):
			t.Errorf("%s: not-checked %+v, want one warning saying %q", tt.name, nc, tt.wantNoted)
		}
	}
}
