package tune

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// onlyPin pins only IRQ 285 (eth0's queue 1) of the NAPI host to CPU 20.
func onlyPin(t *testing.T, root string, sh *steer.Host, ft ThreadAffinity) (*PinResult, error) {
	t.Helper()
	return Pin(context.Background(), PinRequest{Root: hosttest.Open(t, root), NICs: []string{"eth0"}, Writer: FileWriter{},
		Now: time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC), StatePath: filepath.Join(t.TempDir(), "state.json"),
		Steering: sh, Threads: ft, Options: PlanOptions{CPUs: cpuset.New(20), IRQs: []int{285}}})
}

// TestPinOnlyIRQs: with PlanOptions.IRQs a pin writes that IRQ and its
// paired NAPI thread and nothing else of the NIC; the other threads are
// left alone, saying why; the state file holds what moved, and restore
// puts the tree back exactly.
func TestPinOnlyIRQs(t *testing.T) {
	root, sh, ft := napiHost(t)
	before := hosttest.Files(t, root)
	res, err := onlyPin(t, root, sh, ft)
	if err != nil || res.Err() != nil {
		t.Fatalf("Pin: %v, %v", err, res.Err())
	}
	var rows []string
	for _, r := range res.Rows {
		rows = append(rows, r.Name()+" "+r.From+"->"+r.To+" "+string(r.Action)+" "+string(r.Result))
	}
	if len(rows) != 1 || !strings.HasPrefix(rows[0], "IRQ 285 ") || !strings.HasSuffix(rows[0], "->20 change changed") {
		t.Errorf("IRQ rows = %q, want IRQ 285 alone, changed to 20", rows)
	}
	want := []string{
		"napi/eth0-8194 pid=813 napi=8194 q=1 irq=285 0-63->20 change changed now=20 ",
		"napi/eth0-8193 pid=812 napi=8193 q=-1 irq=284 0-63-> skip-unknown skipped now=- not moved: its IRQ 284 is not one this pin places",
		"napi/eth0-8195 pid=814 napi=8195 q=-1 irq=-1 0-63-> skip-unknown skipped now=- not moved: its IRQ is unknown (napi-get reports none) and no queue this pin places is served by it",
		"napi/eth0-0 pid=815 napi=0 q=-1 irq=-1 0-63-> skip-unknown skipped now=- its queue is unknown: netdev napi-get does not list it; not moved: this pin places only IRQ 285, and the thread may serve another queue",
	}
	if diff := cmp.Diff(want, threadLines(res.Threads)); diff != "" {
		t.Errorf("thread rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"813=20"}, ft.calls); diff != "" {
		t.Errorf("sched_setaffinity calls (-want +got):\n%s", diff)
	}
	if res.Changes != 2 || res.Changed != 2 {
		t.Errorf("changed %d of %d, want 2 of 2 (IRQ 285 and pid 813)", res.Changed, res.Changes)
	}
	state := mustRead(t, res.StateFile)
	for _, other := range []string{`"irq": 284`, `"irq": 286`, `"pid": 812`} {
		if strings.Contains(state, other) {
			t.Errorf("state file saves %s, which the pin did not move:\n%s", other, state)
		}
	}
	ft.calls = nil
	rr, err := Restore(context.Background(), hosttest.Open(t, root), res.StateFile, FileWriter{}, ft)
	if err != nil || rr.Err() != nil {
		t.Fatalf("Restore: %v, %v", err, rr.Err())
	}
	if diff := cmp.Diff([]string{"813=0-63"}, ft.calls); diff != "" {
		t.Errorf("restore's sched_setaffinity calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("tree not back as it was (-before +after):\n%s", diff)
	}
}

// TestPinOnlyUnpaired: without netdev napi-get no thread can be tied to
// the one IRQ placed, so none moves (each would otherwise go to the
// NIC's queue IRQs' CPUs, whichever queue it serves).
func TestPinOnlyUnpaired(t *testing.T) {
	root, sh, ft := napiHost(t)
	n := sh.NICs[0]
	n.NAPIs, n.Queues = nil, nil
	n.SetUnknown(steer.PartNAPI, unknown.Reason{Kind: unknown.KindKernel, Detail: "netdev has no napi-get"})
	res, err := onlyPin(t, root, sh, ft)
	if err != nil || res.Err() != nil {
		t.Fatalf("Pin: %v, %v", err, res.Err())
	}
	got := threadLines(res.Threads)
	wantRow := "napi/eth0-8193 pid=812 napi=8193 q=-1 irq=-1 0-63-> skip-unknown skipped now=- its queue is unknown on this kernel (no netdev napi-get); not moved: this pin places only IRQ 285, and the thread may serve another queue"
	if len(got) != 4 || got[0] != wantRow {
		t.Errorf("thread rows:\n%s\nwant 4, the first:\n%s", strings.Join(got, "\n"), wantRow)
	}
	if len(ft.calls) != 0 || res.Changes != 1 {
		t.Errorf("moved %v, %d changes; want no thread moved, 1 change (IRQ 285)", ft.calls, res.Changes)
	}
}

// TestPlanOnlyNotNIC: an IRQ that is not the NIC's is refused before
// anything is read for a change, naming it and the NIC's IRQs.
func TestPlanOnlyNotNIC(t *testing.T) {
	h, tab := planHost(t, hosttest.Root("vm-virtio"), "eth0")
	_, err := planPin(h, tab, []string{"eth0"}, PlanOptions{IRQs: []int{38, 99}})
	if !errors.Is(err, ErrNotNICIRQ) {
		t.Fatalf("planPin with IRQ 99 = %v, want ErrNotNICIRQ", err)
	}
	if want := "IRQ 99: not an IRQ of the NIC eth0 (their IRQs: 37 38 39)"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}
