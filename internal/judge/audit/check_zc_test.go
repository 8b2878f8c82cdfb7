package audit

import (
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestCheckZC: on the sos-ice sosreport the zero-copy findings come only
// when asked: receive blocked by ice's missing queue API, its missing
// header split and (for the default queue 7) the rule that sends port
// 5201 to queue 2; unknown what the sosreport does not hold; send has
// nothing that fails.
func TestCheckZC(t *testing.T) {
	fsys := hosttest.Open(t, hosttest.Root("sos-ice"))
	subjects := func(fs []Finding, id Check) []string {
		var out []string
		for _, f := range onlyCheck(fs, id) {
			out = append(out, f.Subject)
		}
		slices.Sort(out)
		return out
	}
	st, err := Read(fsys, Selection{})
	if err != nil {
		t.Fatal(err)
	}
	if got := append(onlyCheck(st.Findings, CheckZCBlocked), onlyCheck(st.Findings, CheckZCUnknown)...); len(got) != 0 {
		t.Errorf("zero-copy findings without --zc: %+v", got)
	}
	st, err = Read(fsys, Selection{ZC: ZCModeReceive})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := subjects(st.Findings, CheckZCBlocked), []string{"flow-rule", "header-split", "queue-api"}; !slices.Equal(got, want) {
		t.Errorf("zc-blocked %v, want %v", got, want)
	}
	if got, want := subjects(st.Findings, CheckZCUnknown), []string{"cap-net-admin", "io-uring", "kernel", "no-xdp", "queue-free", "rss-excludes-queue"}; !slices.Equal(got, want) {
		t.Errorf("zc-unknown %v, want %v", got, want)
	}
	for _, f := range onlyCheck(st.Findings, CheckZCBlocked) {
		if f.Severity != SeverityWarning || f.NIC != "em1" || !strings.HasPrefix(f.Message, "zero-copy receive on em1: ") || f.Fix == "" {
			t.Errorf("finding %+v", f)
		}
	}
	st, err = Read(fsys, Selection{ZC: ZCModeSend})
	if err != nil {
		t.Fatal(err)
	}
	if got := subjects(st.Findings, CheckZCBlocked); len(got) != 0 {
		t.Errorf("zc-blocked for send %v, want none", got)
	}
	if got, want := subjects(st.Findings, CheckZCUnknown), []string{"io-uring", "iommu", "kernel"}; !slices.Equal(got, want) {
		t.Errorf("zc-unknown for send %v, want %v", got, want)
	}
}
