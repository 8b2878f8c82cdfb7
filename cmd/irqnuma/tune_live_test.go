package main

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune"
)

// TestTuneLive, on this machine's eth0: with napi_defer_hard_irqs set
// and no gro_flush_timeout (a setting that defers nothing) and the CPU
// the kernel delivers eth0's first queue IRQ to kept for the application
// (the kernel picks it from the 0-1 mask: CPU 0 on one boot, 1 on
// another), the audit is NOT READY; one tune sets napi_defer_hard_irqs to
// 0 and moves the IRQs off that CPU, and the audit is READY; restore puts
// back every value read before, the IRQs' affinity and the sysfs file
// byte for byte.
func TestTuneLive(t *testing.T) {
	hosttest.Writes(t, "IRQ affinities (/proc/irq), eth0's napi_defer_hard_irqs and /var/lib/irqnuma")
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("not root: the test writes /proc/irq and /sys/class/net/eth0")
	}
	const nic = "eth0"
	deferFile := "/sys/class/net/" + nic + "/napi_defer_hard_irqs"
	old, err := os.ReadFile(deferFile)
	if err != nil {
		t.Fatalf("%s: %v", deferFile, err)
	}
	gro, err := os.ReadFile("/sys/class/net/" + nic + "/gro_flush_timeout")
	if err != nil || strings.TrimSpace(string(gro)) != "0" {
		t.Fatalf("gro_flush_timeout %q, %v: the test needs it 0", gro, err)
	}
	irqs := liveNICIRQs(t, nic)
	before := map[int]string{}
	for _, n := range irqs {
		before[n] = liveCPUs(t, "/proc/irq/"+strconv.Itoa(n)+"/smp_affinity_list", "")
	}
	t.Cleanup(func() {
		if err := os.WriteFile(deferFile, old, 0o644); err != nil {
			t.Errorf("put %s back: %v", deferFile, err)
		}
		for n, v := range before {
			os.WriteFile("/proc/irq/"+strconv.Itoa(n)+"/smp_affinity_list", []byte(v+"\n"), 0o644)
		}
	})
	if err := os.WriteFile(deferFile, []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range irqs {
		if err := os.WriteFile("/proc/irq/"+strconv.Itoa(n)+"/smp_affinity_list", []byte("0-1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cpu := liveQueueEffective(t, nic)
	app := strconv.Itoa(cpu)
	ps := pinSys(tune.FileWriter{}, 0)
	if out, _, code := runCLISys(t, ps, "audit", "--app-cpus", app); code != 3 ||
		!strings.Contains(out, "napi-settings") || !strings.Contains(out, "irq-app-cpu") {
		t.Fatalf("audit before: exit %d, want 3 with napi-settings and irq-app-cpu\n%s", code, out)
	}
	out, stderr, code := runCLISys(t, ps, "tune", "--app-cpus", app)
	if code != 0 || !strings.Contains(out, "after: verdict: ready") {
		t.Fatalf("tune: exit %d\n%s\n%s", code, out, stderr)
	}
	if got := strings.TrimSpace(readFile(t, deferFile)); got != "0" {
		t.Errorf("after the tune %s = %q, want 0", deferFile, got)
	}
	for _, n := range irqs {
		got := liveCPUs(t, "/proc/irq/"+strconv.Itoa(n)+"/smp_affinity_list", "")
		if set, err := cpuset.ParseList(got); err != nil || set.Contains(cpu) {
			t.Errorf("after the tune IRQ %d may go to %s, CPU %s kept for the application", n, got, app)
		}
	}
	if out, _, code := runCLISys(t, ps, "audit", "--app-cpus", app); code != 0 {
		t.Errorf("audit after the tune: exit %d\n%s", code, out)
	}
	if _, stderr, code := runCLISys(t, ps, "restore"); code != 0 {
		t.Fatalf("restore: exit %d\n%s", code, stderr)
	}
	if got := readFile(t, deferFile); got != "2\n" {
		t.Errorf("after restore %s = %q, want 2", deferFile, got)
	}
	for _, n := range irqs {
		if got := liveCPUs(t, "/proc/irq/"+strconv.Itoa(n)+"/smp_affinity_list", ""); got != "0-1" {
			t.Errorf("after restore IRQ %d = %s, want 0-1", n, got)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// liveIRQ is one IRQ of nic as irq list -o json reads it on the live
// host.
type liveIRQ struct {
	IRQ       int     `json:"irq"`
	NIC       string  `json:"nic"`
	Queue     *int    `json:"queue"`
	Effective *string `json:"effective"`
}

// liveIRQList is nic's IRQs on the live host, as irq list names them; a
// NIC without IRQs skips the test.
func liveIRQList(t *testing.T, nic string) []liveIRQ {
	t.Helper()
	stdout, stderr, code := runCLI(t, "irq", "list", "--nic", nic, "-o", "json")
	if code != 0 {
		t.Fatalf("irq list: exit %d\n%s", code, stderr)
	}
	var list struct {
		IRQs []liveIRQ `json:"irqs"`
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil {
		t.Fatal(err)
	}
	out := slices.DeleteFunc(list.IRQs, func(q liveIRQ) bool { return q.NIC != nic })
	if len(out) == 0 {
		t.Skipf("%s has no IRQ", nic)
	}
	return out
}

// liveNICIRQs are the numbers of nic's IRQs on the live host.
func liveNICIRQs(t *testing.T, nic string) []int {
	t.Helper()
	var out []int
	for _, q := range liveIRQList(t, nic) {
		out = append(out, q.IRQ)
	}
	return out
}

// liveQueueEffective is the CPU the kernel delivers nic's first queue
// IRQ to (its effective_affinity_list, one CPU).
func liveQueueEffective(t *testing.T, nic string) int {
	t.Helper()
	for _, q := range liveIRQList(t, nic) {
		if q.Queue == nil {
			continue
		}
		var eff cpuset.Set
		if q.Effective != nil {
			eff, _ = cpuset.ParseList(*q.Effective)
		}
		if eff.Len() != 1 {
			t.Fatalf("IRQ %d's effective CPUs %v: the test keeps the one CPU the kernel delivers it to", q.IRQ, q.Effective)
		}
		c, _ := eff.Min()
		return c
	}
	t.Skipf("%s has no queue IRQ", nic)
	return 0
}
