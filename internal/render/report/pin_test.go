package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestWritePinThreads: a line per NAPI thread, saying where it was and
// goes, what became of it and why it was left alone; a thread's name is
// escaped as every name from the host is.
func TestWritePinThreads(t *testing.T) {
	now := "4"
	rows := []tune.ThreadRow{
		{PID: 812, Comm: "napi/eth0-8193", NIC: "eth0", NAPI: 8193, Queue: unknown.Of(3), Dir: "rx", IRQ: unknown.Of(41), From: "0-7", To: "4",
			Action: tune.ActionChange, Result: tune.ResultChanged, Affinity: unknown.Of(now)},
		{PID: 813, Comm: "napi/eth0-8194", NIC: "eth0", NAPI: 8194, Queue: unknown.Of(4), IRQ: unknown.Of(42), From: "5", To: "5",
			Action: tune.ActionKeep, Result: tune.ResultUnchanged},
		{PID: 815, Comm: "napi/eth0-0", NIC: "eth0", Queue: unknown.NotAs[int](unknown.KindDriver, "no queue"), IRQ: unknown.NotAs[int](unknown.KindDriver, "no IRQ"), From: "0-7",
			Action: tune.ActionSkipUnknown, Result: tune.ResultSkipped, Error: "its queue is unknown on this kernel (no netdev napi-get); not moved"},
		{PID: 817, Comm: "napi/eth2-8193", NIC: "eth2", Queue: unknown.NotAs[int](unknown.KindDriver, "no queue"), IRQ: unknown.NotAs[int](unknown.KindDriver, "no IRQ"), From: "0-7", To: "4-7", Note: "its queue is unknown (virtio_net links no NAPI to a queue or IRQ)",
			Action: tune.ActionChange, Result: tune.ResultPlanned},
		{PID: 816, Comm: "napi/e\x1b[2J-1", NIC: "e\x1b[2J", Queue: unknown.NotAs[int](unknown.KindDriver, "no queue"), IRQ: unknown.NotAs[int](unknown.KindDriver, "no IRQ"),
			Action: tune.ActionSkipUnknown, Result: tune.ResultSkipped, Error: "not moved"},
	}
	var plan, done bytes.Buffer
	if err := WritePinThreads(&plan, rows, false); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"napi/eth0-8193 (pid 812, queue rx-3, IRQ 41): 0-7 -> 4",
		"napi/eth0-8194 (pid 813, queue 4, IRQ 42): 5 -> 5 (already there)",
		"napi/eth0-0 (pid 815): on 0-7; its queue is unknown on this kernel (no netdev napi-get); not moved",
		"napi/eth2-8193 (pid 817): its queue is unknown (virtio_net links no NAPI to a queue or IRQ): 0-7 -> 4-7 (the CPUs of eth2's queue IRQs)",
		`napi/e\x1b[2J-1 (pid 816): not moved`,
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(plan.String(), "\n"), "\n")); diff != "" {
		t.Errorf("plan lines (-want +got):\n%s", diff)
	}
	if err := WritePinThreads(&done, rows[:1], true); err != nil {
		t.Fatal(err)
	}
	if got := done.String(); got != "napi/eth0-8193 (pid 812, queue rx-3, IRQ 41): 0-7 -> 4 (changed, now 4)\n" {
		t.Errorf("result line = %q", got)
	}
	// JSON: the threads are a list of their own, [] when none.
	b, err := json.Marshal(NewPinDoc(&tune.PinResult{}, true))
	if err != nil || !strings.Contains(string(b), `"threads":[]`) {
		t.Errorf("pin document without threads: %s, %v", b, err)
	}
	b, _ = json.Marshal(NewRestoreDoc(&tune.RestoreResult{Threads: rows[:1]}))
	for _, s := range []string{`"pid":812`, `"comm":"napi/eth0-8193"`, `"napi_id":8193`, `"queue":3`, `"irq":41`, `"from":"0-7"`, `"to":"4"`, `"result":"changed"`, `"affinity":"4"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("restore document does not hold %s: %s", s, b)
		}
	}
}
