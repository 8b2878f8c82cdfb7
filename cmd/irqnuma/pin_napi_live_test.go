package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// liveCPUs reads a task's Cpus_allowed_list, or an IRQ's
// smp_affinity_list, from the live host.
func liveCPUs(t *testing.T, path, key string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if key == "" {
		return strings.TrimSpace(string(b))
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("%s: no %s", path, key)
	return ""
}

// liveNAPIThreads returns nic's napi/NIC-N threads on the live host, by
// pid, with their names, read from /proc for the test's own checks.
func liveNAPIThreads(t *testing.T, nic string) map[int]string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil {
			continue
		}
		comm := strings.TrimSpace(string(b))
		if id, ok := strings.CutPrefix(comm, "napi/"+nic+"-"); ok {
			if _, err := strconv.Atoi(id); err == nil {
				out[pid] = comm
			}
		}
	}
	return out
}

// TestPinNAPILive turns threaded NAPI on for this machine's eth0, pins
// eth0 to one CPU, and checks that each NAPI thread of a queue follows
// its IRQ (its Cpus_allowed_list is the IRQ's smp_affinity_list, read
// from /proc), that the threads it cannot pair (virtio_net's tx NAPI,
// napi/eth0-0, which netdev does not list) go to the CPUs of eth0's queue
// IRQs, saying why, and that restore puts back every IRQ and thread
// exactly. Threaded NAPI is
// put back as it was.
func TestPinNAPILive(t *testing.T) {
	hosttest.Writes(t, "IRQ affinities (/proc/irq), eth0's threaded NAPI and /var/lib/irqnuma")
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("not root: the test writes /proc/irq and /sys/class/net/eth0/threaded")
	}
	const nic = "eth0"
	sw := "/sys/class/net/" + nic + "/threaded"
	old, err := os.ReadFile(sw)
	if err != nil {
		t.Skipf("no %s: %v", sw, err)
	}
	if err := os.WriteFile(sw, []byte("1\n"), 0o644); err != nil {
		t.Fatalf("turn threaded NAPI on: %v", err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(sw, old, 0o644); err != nil {
			t.Errorf("put %s back to %q: %v", sw, strings.TrimSpace(string(old)), err)
		}
	})
	threads := liveNAPIThreads(t, nic)
	if len(threads) == 0 {
		t.Fatalf("threaded NAPI on and no napi/%s-N thread", nic)
	}
	threadsBefore := map[int]string{}
	for pid := range threads {
		threadsBefore[pid] = liveCPUs(t, "/proc/"+strconv.Itoa(pid)+"/status", "Cpus_allowed_list")
	}
	// eth0's queue IRQs, from /proc/interrupts through irq list.
	ps := pinSys(tune.FileWriter{}, 0)
	stdout, stderr, code := runCLISys(t, ps, "irq", "list", "-o", "json")
	if code != 0 {
		t.Fatalf("irq list: %d %s", code, stderr)
	}
	var list struct {
		IRQs []struct {
			IRQ   int                `json:"irq"`
			NIC   string             `json:"nic"`
			Queue unknown.Value[int] `json:"queue"`
			Dir   string             `json:"dir"`
		} `json:"irqs"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatal(err)
	}
	irqsBefore := map[int]string{}
	var rxIRQs []int
	for _, q := range list.IRQs {
		if q.NIC != nic {
			continue
		}
		irqsBefore[q.IRQ] = liveCPUs(t, irq.AffinityPath(q.IRQ, irq.FileAffinityList), "")
		if q.Queue.Known() && q.Dir != "tx" {
			rxIRQs = append(rxIRQs, q.IRQ)
		}
	}
	if len(rxIRQs) == 0 {
		t.Skipf("%s has no rx queue IRQ", nic)
	}
	online, _ := cpuset.ParseList(liveCPUs(t, "/sys/devices/system/cpu/online", ""))
	if online.Len() < 2 {
		t.Skip("one online CPU: nowhere to move anything")
	}
	last, _ := online.Max()
	target := strconv.Itoa(last)

	state := filepath.Join(t.TempDir(), "state.json")
	stdout, stderr, code = runCLISys(t, ps, "-o", "json", "irq", "pin", nic, "--cpus", target, "--state", state)
	t.Cleanup(func() {
		if _, err := os.Stat(state); err == nil {
			runCLISys(t, ps, "irq", "restore", state)
		}
	})
	if code != 0 {
		t.Fatalf("pin %s --cpus %s: exit %d: %s\n%s", nic, target, code, stderr, stdout)
	}
	var doc struct {
		Threads []struct {
			PID    int    `json:"pid"`
			Comm   string `json:"comm"`
			IRQ    *int   `json:"irq"`   // null when unpaired
			Queue  *int   `json:"queue"` // likewise
			To     string `json:"to"`
			Result string `json:"result"`
			Note   string `json:"note"`
			Error  string `json:"error"`
		} `json:"threads"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	moved := map[int]bool{}
	for _, r := range doc.Threads {
		if threads[r.PID] != r.Comm {
			t.Errorf("row names pid %d %q; /proc says %q", r.PID, r.Comm, threads[r.PID])
		}
		if r.Result != "changed" {
			continue
		}
		moved[r.PID] = true
		if r.IRQ == nil {
			// Unpaired: with the queue IRQs' CPUs, all of them target.
			got := liveCPUs(t, "/proc/"+strconv.Itoa(r.PID)+"/status", "Cpus_allowed_list")
			if got != target || r.To != target || r.Queue != nil || !strings.HasPrefix(r.Note, "its queue is unknown") {
				t.Errorf("%s (pid %d), unpaired, may run on %s, row to %q queue %v note %q; want %s, the CPUs of %s's queue IRQs", r.Comm, r.PID, got, r.To, r.Queue, r.Note, target, nic)
			}
			continue
		}
		if _, ok := irqsBefore[*r.IRQ]; !ok {
			t.Errorf("%s moved with IRQ %d, not one of %s's", r.Comm, *r.IRQ, nic)
			continue
		}
		got := liveCPUs(t, "/proc/"+strconv.Itoa(r.PID)+"/status", "Cpus_allowed_list")
		want := liveCPUs(t, irq.AffinityPath(*r.IRQ, irq.FileAffinityList), "")
		if got != want || got != target {
			t.Errorf("%s (pid %d) may run on %s; its IRQ %d on %s; pinned to %s", r.Comm, r.PID, got, *r.IRQ, want, target)
		}
	}
	// The test's own pairing: one rx queue and one NAPI thread with a
	// registered id (virtio_net's tx NAPI is napi/eth0-0, never
	// registered) must be that queue's.
	var registered []int
	for pid, comm := range threads {
		if !strings.HasSuffix(comm, "-0") {
			registered = append(registered, pid)
		}
	}
	if len(rxIRQs) == 1 && len(registered) == 1 && !moved[registered[0]] {
		t.Errorf("%s (the one rx queue's NAPI thread) was not moved with IRQ %d:\n%s", threads[registered[0]], rxIRQs[0], stdout)
	}
	if len(moved) == 0 {
		t.Errorf("no NAPI thread moved:\n%s\n%s", stdout, stderr)
	}
	for pid, cpus := range threadsBefore {
		if got := liveCPUs(t, "/proc/"+strconv.Itoa(pid)+"/status", "Cpus_allowed_list"); !moved[pid] && got != cpus {
			t.Errorf("%s (pid %d) not moved by the pin, yet on %s, was %s", threads[pid], pid, got, cpus)
		}
	}

	if _, stderr, code := runCLISys(t, ps, "irq", "restore", state); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, stderr)
	}
	for pid, cpus := range threadsBefore {
		if got := liveCPUs(t, "/proc/"+strconv.Itoa(pid)+"/status", "Cpus_allowed_list"); got != cpus {
			t.Errorf("%s (pid %d) on %s after restore, was %s", threads[pid], pid, got, cpus)
		}
	}
	for n, cpus := range irqsBefore {
		if got := liveCPUs(t, irq.AffinityPath(n, irq.FileAffinityList), ""); got != cpus {
			t.Errorf("IRQ %d on %s after restore, was %s", n, got, cpus)
		}
	}
}
