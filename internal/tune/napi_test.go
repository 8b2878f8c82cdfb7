package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// fakeThreads is a ThreadAffinity over a map, as the kernel's would be:
// it records every Set, fails the failAt-th one (1-based; 0 never), and
// calls onSet before each.
type fakeThreads struct {
	cpus   map[int]cpuset.Set
	failAt int
	sets   int
	calls  []string
	onSet  func(n int)
}

func (f *fakeThreads) Get(pid int) (cpuset.Set, error) {
	s, ok := f.cpus[pid]
	if !ok {
		return cpuset.Set{}, fmt.Errorf("sched_getaffinity(%d): %w", pid, syscall.ESRCH)
	}
	return s, nil
}

func (f *fakeThreads) Set(pid int, cpus cpuset.Set) error {
	f.calls = append(f.calls, fmt.Sprintf("%d=%s", pid, cpus))
	f.sets++
	if f.onSet != nil {
		f.onSet(f.sets)
	}
	if f.sets == f.failAt {
		return fmt.Errorf("sched_setaffinity(%d, %s): %w", pid, cpus, syscall.EINVAL)
	}
	if _, ok := f.cpus[pid]; !ok {
		return fmt.Errorf("sched_setaffinity(%d): %w", pid, syscall.ESRCH)
	}
	f.cpus[pid] = cpus
	return nil
}

// addTask writes /proc/PID/{comm,stat,status} of a kernel thread into a
// host tree, in the kernel's formats (a napi kthread on 6.18).
func addTask(t *testing.T, root string, pid int, comm string, start uint64, cpus string) {
	t.Helper()
	dir := filepath.Join(root, "proc", strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (%s) S 2 0 0 0 -1 2129984 0 0 0 0 0 52 0 0 20 0 1 0 %d 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, comm, start)
	status := fmt.Sprintf("Name:\t%s\nUmask:\t0000\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nPPid:\t2\nCpus_allowed:\tffffffff,ffffffff\nCpus_allowed_list:\t%s\nMems_allowed_list:\t0-1\n", comm, pid, pid, cpus)
	for name, body := range map[string]string{"comm": comm + "\n", "stat": stat, "status": status} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// napiHost is the seed tree's eth0 with threaded NAPI: NAPI 8193 on IRQ
// 284 (queue 0) in pid 812, 8194 on IRQ 285 (queue 1, an IRQ the plan
// keeps where it is) in pid 813, 8195 without an IRQ (as virtio_net
// reports it) serving rx queue 2 (IRQ 286) in pid 814, and pid 815, a
// NAPI thread netdev does not list (virtio_net's tx NAPI).
func napiHost(t *testing.T) (root string, sh *steer.Host, ft *fakeThreads) {
	t.Helper()
	root = hosttest.Copy(t, "seed")
	addTask(t, root, 812, "napi/eth0-8193", 4100, "0-63")
	addTask(t, root, 813, "napi/eth0-8194", 4101, "0-63")
	addTask(t, root, 814, "napi/eth0-8195", 4102, "0-63")
	addTask(t, root, 815, "napi/eth0-0", 4103, "0-63")
	addTask(t, root, 816, "napi/eth0-x-5", 4104, "0-63") // another NIC's (eth0-x)
	one := 1
	sh = &steer.Host{NICs: []*steer.NIC{{
		Name: "eth0",
		NAPIs: []steer.NAPI{
			{ID: 8193, IRQ: unknown.Of(284), PID: 812}, {ID: 8194, IRQ: unknown.Of(285), PID: 813}, {ID: 8195, IRQ: unknown.Not[int](steer.NoIRQ), PID: 814},
		},
		Queues: []steer.NetdevQueue{{ID: 2, Type: steer.QueueTypeRX, NAPI: 8195}, {ID: 2, Type: steer.QueueTypeTX}},
		Sysfs:  steer.Sysfs{Threaded: &one},
	}}}
	all := cpuset.Range(0, 63)
	ft = &fakeThreads{cpus: map[int]cpuset.Set{812: all, 813: all, 814: all, 815: all, 816: all}}
	return root, sh, ft
}

func napiPin(t *testing.T, root string, sh *steer.Host, ft ThreadAffinity, ctx context.Context) (*PinResult, error) {
	t.Helper()
	return Pin(ctx, PinRequest{Root: hosttest.Open(t, root), NICs: []string{"eth0"}, Writer: FileWriter{},
		Now: time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC), StatePath: filepath.Join(t.TempDir(), "state.json"),
		Steering: sh, Threads: ft})
}

// threadLines is each thread row as one comparable line.
func threadLines(rows []ThreadRow) []string {
	var out []string
	for _, r := range rows {
		aff := r.Affinity.Or("-")
		line := fmt.Sprintf("%s pid=%d napi=%d q=%d irq=%d %s->%s %s %s now=%s %s", r.Comm, r.PID, r.NAPI, r.Queue.Or(-1), r.IRQ.Or(-1), r.From, r.To, r.Action, r.Result, aff, r.Error)
		if r.Note != "" {
			line += "| " + r.Note
		}
		out = append(out, line)
	}
	return out
}

// TestPinNAPIThreads: each threaded NAPI instance's kthread gets its
// IRQ's CPUs (paired by napi-get's IRQ, or by queue where napi-get has
// none, and also when the IRQ itself is already in place), the threads
// netdev does not list goes to the CPUs of the NIC's queue IRQs, saying
// why, the state file holds
// each moved thread's pid, name, start time and CPUs, and restore puts
// every thread and IRQ back exactly.
func TestPinNAPIThreads(t *testing.T) {
	root, sh, ft := napiHost(t)
	before := hosttest.Files(t, root)
	res, err := napiPin(t, root, sh, ft, context.Background())
	if err != nil || res.Err() != nil {
		t.Fatalf("Pin: %v, %v", err, res.Err())
	}
	want := []string{
		"napi/eth0-8193 pid=812 napi=8193 q=0 irq=284 0-63->16 change changed now=16 ",
		"napi/eth0-8194 pid=813 napi=8194 q=1 irq=285 0-63->17 change changed now=17 ",
		"napi/eth0-8195 pid=814 napi=8195 q=2 irq=286 0-63->18 change changed now=18 ",
		"napi/eth0-0 pid=815 napi=0 q=-1 irq=-1 0-63->16-31 change changed now=16-31 | its queue is unknown: netdev napi-get does not list it",
	}
	if diff := cmp.Diff(want, threadLines(res.Threads)); diff != "" {
		t.Errorf("thread rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"812=16", "813=17", "814=18", "815=16-31"}, ft.calls); diff != "" {
		t.Errorf("sched_setaffinity calls (-want +got):\n%s", diff)
	}
	if res.Changes != res.Changed || res.Changed < 3 {
		t.Errorf("changed %d of %d", res.Changed, res.Changes)
	}
	var st struct {
		Version int              `json:"version"`
		Threads []map[string]any `json:"threads"`
	}
	b, err := os.ReadFile(res.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if st.Version != 2 || len(st.Threads) != 4 || st.Threads[0]["pid"] != 812.0 || st.Threads[0]["comm"] != "napi/eth0-8193" ||
		st.Threads[0]["start_time"] != 4100.0 || st.Threads[0]["cpus"] != "0-63" {
		t.Errorf("state file: %s", b)
	}

	ft.calls = nil
	rr, err := Restore(context.Background(), hosttest.Open(t, root), res.StateFile, FileWriter{}, ft)
	if err != nil || rr.Err() != nil {
		t.Fatalf("Restore: %v, %v", err, rr.Err())
	}
	if diff := cmp.Diff([]string{"812=0-63", "813=0-63", "814=0-63", "815=0-63"}, ft.calls); diff != "" {
		t.Errorf("restore's sched_setaffinity calls (-want +got):\n%s", diff)
	}
	for pid, s := range ft.cpus {
		if s.String() != "0-63" {
			t.Errorf("pid %d on %s after restore, want 0-63", pid, s)
		}
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("tree not back as it was (-before +after):\n%s", diff)
	}
	if rr.Total != len(rr.Rows)+4 || len(rr.Threads) != 4 || rr.Threads[3].Result != ResultChanged {
		t.Errorf("restore result: total %d, %d rows, threads %v", rr.Total, len(rr.Rows), threadLines(rr.Threads))
	}
}

// logWriter writes through FileWriter and logs each write's value
// in the fake's log of thread moves, so the order of both shows.
type logWriter struct{ ft *fakeThreads }

func (w logWriter) WriteFile(path string, b []byte) error {
	w.ft.calls = append(w.ft.calls, filepath.Base(filepath.Dir(path))+"="+strings.TrimSpace(string(b))) // /proc/irq/N/smp_affinity_list
	return FileWriter{}.WriteFile(path, b)
}

// TestPinNAPIThreadFails: a thread write that fails undoes the whole pin,
// newest first: the threads set before it, then every IRQ; the state file
// is retired.
func TestPinNAPIThreadFails(t *testing.T) {
	root, sh, ft := napiHost(t)
	before := hosttest.Files(t, root)
	ft.failAt = 3
	res, err := Pin(context.Background(), PinRequest{Root: hosttest.Open(t, root), NICs: []string{"eth0"}, Writer: logWriter{ft},
		Now: time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC), StatePath: filepath.Join(t.TempDir(), "state.json"),
		Steering: sh, Threads: ft})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopFailed || res.Err() == nil || res.Changed != 0 {
		t.Errorf("stop %v, err %v, changed %d; want a failed pin with nothing kept", res.Stop, res.Err(), res.Changed)
	}
	// The IRQ writes (IRQ=CPUs), the threads (pid=CPUs) until 814 fails,
	// then back: 813, 812, and the IRQs from the last to the first.
	var irqs, back []string
	for _, r := range res.Rows {
		if r.Action == ActionChange {
			irqs = append(irqs, fmt.Sprintf("%d=%s", r.IRQ.Or(-1), r.To))
			back = append([]string{fmt.Sprintf("%d=%s", r.IRQ.Or(-1), r.From)}, back...)
		}
	}
	want := append(append(append([]string{}, irqs...), "812=16", "813=17", "814=18", "813=0-63", "812=0-63"), back...)
	if diff := cmp.Diff(want, ft.calls); diff != "" {
		t.Errorf("writes in order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("IRQs not rolled back (-before +after):\n%s", diff)
	}
	for _, r := range res.Rows {
		if r.Result == ResultChanged {
			t.Errorf("IRQ %d still changed after the rollback", r.IRQ.Or(-1))
		}
	}
	got := threadLines(res.Threads)[:3]
	wantRows := []string{
		"napi/eth0-8193 pid=812 napi=8193 q=0 irq=284 0-63->16 change rolled-back now=0-63 ",
		"napi/eth0-8194 pid=813 napi=8194 q=1 irq=285 0-63->17 change rolled-back now=0-63 ",
		"napi/eth0-8195 pid=814 napi=8195 q=2 irq=286 0-63->18 change failed now=0-63 sched_setaffinity(814, 18): invalid argument",
	}
	if diff := cmp.Diff(wantRows, got); diff != "" {
		t.Errorf("thread rows (-want +got):\n%s", diff)
	}
	if len(res.Failed) != 1 || !strings.HasPrefix(res.Failed[0], "napi/eth0-8195 (pid 814): ") || res.Retired == "" {
		t.Errorf("failed %q, retired %q", res.Failed, res.Retired)
	}
}

// TestPinNAPIInterrupted: a stop signal between thread writes undoes
// every thread and IRQ written.
func TestPinNAPIInterrupted(t *testing.T) {
	root, sh, ft := napiHost(t)
	before := hosttest.Files(t, root)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ft.onSet = func(n int) {
		if n == 1 {
			cancel(errors.New("SIGTERM"))
		}
	}
	res, err := napiPin(t, root, sh, ft, ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopInterrupted || res.Changed != 0 {
		t.Errorf("stop %v, changed %d", res.Stop, res.Changed)
	}
	if diff := cmp.Diff([]string{"812=16", "812=0-63"}, ft.calls); diff != "" {
		t.Errorf("sched_setaffinity calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("IRQs not rolled back (-before +after):\n%s", diff)
	}
}

// TestRestoreNAPIReusedPID: a thread whose pid now names another task (a
// new start time) or that has exited is not touched: restore says it is
// gone and puts back the rest.
func TestRestoreNAPIReusedPID(t *testing.T) {
	root, sh, ft := napiHost(t)
	res, err := napiPin(t, root, sh, ft, context.Background())
	if err != nil || res.Err() != nil {
		t.Fatalf("Pin: %v, %v", err, res.Err())
	}
	addTask(t, root, 812, "napi/eth0-8193", 9999, "16") // the pid taken again
	if err := os.RemoveAll(filepath.Join(root, "proc", "814")); err != nil {
		t.Fatal(err)
	}
	ft.calls = nil
	rr, err := Restore(context.Background(), hosttest.Open(t, root), res.StateFile, FileWriter{}, ft)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"813=0-63", "815=0-63"}, ft.calls); diff != "" {
		t.Errorf("sched_setaffinity calls (-want +got):\n%s", diff)
	}
	want := []string{
		"napi/eth0-8193 pid=812 napi=8193 q=0 irq=284 ->0-63 restore gone now=- napi/eth0-8193 (pid 812) is gone: not restored",
		"napi/eth0-8194 pid=813 napi=8194 q=1 irq=285 17->0-63 restore changed now=0-63 ",
		"napi/eth0-8195 pid=814 napi=8195 q=2 irq=286 ->0-63 restore gone now=- napi/eth0-8195 (pid 814) is gone: not restored",
		"napi/eth0-0 pid=815 napi=0 q=-1 irq=-1 16-31->0-63 restore changed now=0-63 ",
	}
	if diff := cmp.Diff(want, threadLines(rr.Threads)); diff != "" {
		t.Errorf("thread rows (-want +got):\n%s", diff)
	}
	if len(rr.Gone) != 2 || rr.Err() == nil || len(rr.Failed) != 0 {
		t.Errorf("gone %q, failed %q, err %v", rr.Gone, rr.Failed, rr.Err())
	}
}

// TestPinNAPIUnpaired: where a thread cannot be paired with its queue (a
// kernel without netdev napi-get, 6.1; a driver that links no NAPI to a
// queue or IRQ, virtio_net on 6.12) the NIC's napi/IF-N threads go to
// the CPUs of its queue IRQs, saying why, are saved with the IRQs, and
// restore puts them back exactly; NAPI not threaded has no rows; a
// captured root's threads are reported and left alone.
func TestPinNAPIUnpaired(t *testing.T) {
	unpaired := func(t *testing.T, edit func(n *steer.NIC), why string) {
		root, sh, ft := napiHost(t)
		before := hosttest.Files(t, root)
		edit(sh.NICs[0])
		res, err := napiPin(t, root, sh, ft, context.Background())
		if err != nil || res.Err() != nil {
			t.Fatalf("Pin: %v, %v", err, res.Err())
		}
		note := "| " + why + ""
		want := []string{
			"napi/eth0-8193 pid=812 napi=8193 q=-1 irq=-1 0-63->16-31 change changed now=16-31 " + note,
			"napi/eth0-8194 pid=813 napi=8194 q=-1 irq=-1 0-63->16-31 change changed now=16-31 " + note,
			"napi/eth0-8195 pid=814 napi=8195 q=-1 irq=-1 0-63->16-31 change changed now=16-31 " + note,
			"napi/eth0-0 pid=815 napi=0 q=-1 irq=-1 0-63->16-31 change changed now=16-31 " + note,
		}
		if sh.NICs[0].NAPIs != nil {
			want[3] = "napi/eth0-0 pid=815 napi=0 q=-1 irq=-1 0-63->16-31 change changed now=16-31 | its queue is unknown: netdev napi-get does not list it"
		}
		if diff := cmp.Diff(want, threadLines(res.Threads)); diff != "" {
			t.Errorf("thread rows (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"812=16-31", "813=16-31", "814=16-31", "815=16-31"}, ft.calls); diff != "" {
			t.Errorf("sched_setaffinity calls (-want +got):\n%s", diff)
		}
		// 816, napi/eth0-x-5, is another NIC's and stays where it was.
		if ft.cpus[816].String() != "0-63" {
			t.Errorf("pid 816 (napi/eth0-x-5) moved to %s", ft.cpus[816])
		}
		ft.calls = nil
		rr, err := Restore(context.Background(), hosttest.Open(t, root), res.StateFile, FileWriter{}, ft)
		if err != nil || rr.Err() != nil {
			t.Fatalf("Restore: %v, %v", err, rr.Err())
		}
		if diff := cmp.Diff([]string{"812=0-63", "813=0-63", "814=0-63", "815=0-63"}, ft.calls); diff != "" {
			t.Errorf("restore's sched_setaffinity calls (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
			t.Errorf("tree not back as it was (-before +after):\n%s", diff)
		}
	}
	t.Run("no napi-get", func(t *testing.T) {
		unpaired(t, func(n *steer.NIC) {
			n.NAPIs, n.Queues = nil, nil
			n.SetUnknown(steer.PartNAPI, unknown.Reason{Kind: unknown.KindKernel, Detail: "netdev has no napi-get"})
		}, "its queue is unknown on this kernel (no netdev napi-get)")
	})
	t.Run("driver links no queue", func(t *testing.T) {
		unpaired(t, func(n *steer.NIC) {
			n.Driver = &steer.DriverInfo{Driver: "virtio_net"}
			n.Queues = []steer.NetdevQueue{{ID: 0, Type: steer.QueueTypeRX}, {ID: 0, Type: steer.QueueTypeTX}}
			for i := range n.NAPIs {
				n.NAPIs[i].IRQ = unknown.Not[int](steer.NoIRQ)
			}
		}, "its queue is unknown (virtio_net links no NAPI to a queue or IRQ)")
	})
	t.Run("no napi-get, threaded unknown", func(t *testing.T) {
		root, sh, ft := napiHost(t)
		n := sh.NICs[0]
		n.NAPIs, n.Queues, n.Sysfs.Threaded = nil, nil, nil
		n.SetUnknown(steer.PartNAPI, unknown.Reason{Kind: unknown.KindKernel, Detail: "netdev has no napi-get"})
		res, err := napiPin(t, root, sh, ft, context.Background())
		if err != nil || res.Err() != nil {
			t.Fatalf("Pin: %v, %v", err, res.Err())
		}
		got := threadLines(res.Threads)
		if len(got) != 4 || got[0] != "napi/eth0-8193 pid=812 napi=8193 q=-1 irq=-1 0-63-> skip-unknown skipped now=- its queue is unknown on this kernel (no netdev napi-get); not moved: the NIC's NAPI is not known to be threaded" {
			t.Errorf("thread rows:\n%s", strings.Join(got, "\n"))
		}
		if len(ft.calls) != 0 || strings.Contains(mustRead(t, res.StateFile), "threads") {
			t.Errorf("moved %v, state %s", ft.calls, mustRead(t, res.StateFile))
		}
	})
	t.Run("not threaded", func(t *testing.T) {
		root, sh, ft := napiHost(t)
		zero := 0
		n := sh.NICs[0]
		n.Sysfs.Threaded = &zero
		for i := range n.NAPIs {
			n.NAPIs[i].PID = 0
		}
		res, err := napiPin(t, root, sh, ft, context.Background())
		if err != nil || len(res.Threads) != 0 || len(ft.calls) != 0 {
			t.Errorf("Pin: %v, threads %v, calls %v; want none", err, threadLines(res.Threads), ft.calls)
		}
	})
	t.Run("captured root", func(t *testing.T) {
		root, sh, _ := napiHost(t)
		res, err := napiPin(t, root, sh, nil, context.Background())
		if err != nil || res.Err() != nil {
			t.Fatalf("Pin: %v, %v", err, res.Err())
		}
		got := threadLines(res.Threads)
		if len(got) != 4 || got[0] != "napi/eth0-8193 pid=812 napi=8193 q=0 irq=284 0-63->16 skip-unknown skipped now=- not moved: a captured host's threads cannot be moved" {
			t.Errorf("thread rows:\n%s", strings.Join(got, "\n"))
		}
	})
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStateThreadsTampered: a saved thread restore cannot trust refuses
// the whole file, naming what is wrong, before anything is written; a
// state file from before threads were saved still restores.
func TestStateThreadsTampered(t *testing.T) {
	root, sh, ft := napiHost(t)
	res, err := napiPin(t, root, sh, ft, context.Background())
	if err != nil || res.Err() != nil {
		t.Fatalf("Pin: %v, %v", err, res.Err())
	}
	raw := []byte(mustRead(t, res.StateFile))
	edit := func(f func(th map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		f(m["threads"].([]any)[0].(map[string]any))
		b, _ := json.Marshal(m)
		return string(b)
	}
	tests := []struct {
		name, give, want string
	}{
		{"pid 0", edit(func(th map[string]any) { th["pid"] = 0 }), "pid 0: not a pid"},
		{"pid too large", edit(func(th map[string]any) { th["pid"] = 1 << 23 }), "not a pid"},
		{"not a napi thread", edit(func(th map[string]any) { th["comm"] = "systemd" }), `"systemd" is not a NAPI thread of NIC "eth0"`},
		{"another NIC's", edit(func(th map[string]any) { th["nic"] = "eth1" }), `is not a NAPI thread of NIC "eth1"`},
		{"garbage cpus", edit(func(th map[string]any) { th["cpus"] = "0-x" }), `cpus "0-x"`},
		{"empty cpus", edit(func(th map[string]any) { th["cpus"] = "" }), `cpus "": empty`},
		{"CPU beyond the host", edit(func(th map[string]any) { th["cpus"] = "64" }), "CPU 64 does not exist"},
		{"pid twice", edit(func(th map[string]any) { th["pid"] = 813 }), "pid 813 appears twice"},
		{"start not a number", edit(func(th map[string]any) { th["start_time"] = "x" }), "start_time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(p, []byte(tt.give), 0o600); err != nil {
				t.Fatal(err)
			}
			ft.calls = nil
			before := hosttest.Files(t, root)
			_, err := Restore(context.Background(), hosttest.Open(t, root), p, FileWriter{}, ft)
			if !errors.Is(err, ErrBadState) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Restore = %v, want ErrBadState saying %q", err, tt.want)
			}
			if len(ft.calls) != 0 {
				t.Errorf("moved threads: %v", ft.calls)
			}
			if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
				t.Errorf("wrote files (-before +after):\n%s", diff)
			}
		})
	}
	// The same file without its threads, as irqnuma wrote it before,
	// restores the IRQs.
	old := edit(func(map[string]any) {})
	var m map[string]any
	json.Unmarshal([]byte(old), &m)
	delete(m, "threads")
	m["version"] = 1
	b, _ := json.Marshal(m)
	p := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ft.calls = nil
	rr, err := Restore(context.Background(), hosttest.Open(t, root), p, FileWriter{}, ft)
	if err != nil || rr.Err() != nil || len(rr.Threads) != 0 || len(ft.calls) != 0 {
		t.Errorf("old state: %v, %v, threads %v, calls %v", err, rr.Err(), rr.Threads, ft.calls)
	}
}

// FuzzStateThreads: whatever a state file holds, loading it never
// panics, and every thread it accepts is one restore can move back (a
// NAPI thread of its NIC, CPUs the host has).
func FuzzStateThreads(f *testing.F) {
	root := hosttest.Copy(f, "seed")
	abs, _ := filepath.Abs(root)
	f.Add([]byte(`{"version":2,"created":"2026-12-01T18:00:00Z","root":"` + abs + `","entries":[],"threads":[{"pid":812,"comm":"napi/eth0-8193","start_time":4100,"cpus":"0-63","nic":"eth0","napi_id":8193,"queue":0,"dir":"rx","irq":284}]}`))
	f.Add([]byte(`{"version":2,"created":"2026-12-01T18:00:00Z","root":"` + abs + `","entries":[],"threads":[{"pid":-1,"comm":"napi/eth0-x","cpus":"64","nic":"eth0/..","queue":-2,"irq":-1}]}`))
	fsys := hosttest.Open(f, root)
	possible := cpuset.Range(0, 63)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseState(b)
		if err != nil {
			return
		}
		if _, err := s.check(fsys); err != nil {
			return
		}
		for _, th := range s.Threads {
			if err := threadError(th, possible, true); err != nil {
				t.Errorf("accepted thread %+v: %v", th, err)
			}
			if _, ok := napiIDOf(th.Comm, th.NIC); !ok {
				t.Errorf("accepted thread %q of NIC %q", th.Comm, th.NIC)
			}
		}
	})
}
