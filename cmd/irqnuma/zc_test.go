package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/judge/zc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestZCGolden: zc check's text and JSON on the sos-ice sosreport (ice:
// no queue API, no header split, a rule for port 5201 to queue 2; the
// kernel's files and RSS not captured), and on the seed with its recorded
// steering (a 128-entry table over 16 queues, a rule for TCP port 5201 to
// queue 7), receive and send.
func TestZCGolden(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file, root, args string
		code             int
	}{
		{"sos-ice-q2-p5201", hosttest.Root("sos-ice"), "zc check em1 --queue 2 --port 5201", 3},
		{"sos-ice-default", hosttest.Root("sos-ice"), "zc check em1", 3},
		{"sos-ice-send", hosttest.Root("sos-ice"), "zc check em1 --send", 0},
		{"seed-steer-q7-p5201", seedWithSteering(t), "zc check eth0 --queue 7 --port 5201", 3},
	} {
		for _, format := range []string{"table", "json"} {
			args := append([]string{"--root", c.root, "-o", format}, strings.Fields(c.args)...)
			stdout, stderr, code := runCLI(t, args...)
			if code != c.code || stderr != "" {
				t.Fatalf("irqnuma %s: exit %d (want %d), stderr %q", strings.Join(args, " "), code, c.code, stderr)
			}
			ext := map[string]string{"table": ".txt", "json": ".json"}[format]
			golden(t, filepath.Join("zc", c.file+ext), stdout)
		}
	}
}

// TestZCUsage: bad arguments exit 2 with one line saying what is wrong.
func TestZCUsage(t *testing.T) {
	t.Parallel()
	root := hosttest.Root("sos-ice")
	for _, c := range []struct{ args, says string }{
		{"zc check", "irqnuma zc check: want IF, the NIC to check (irqnuma topology lists them) (got 0 arguments)"},
		{"zc check em1 em2", "want IF, the NIC to check"},
		{"zc check em1 --queue -1", "queue -1"},
		{"zc check em1 --port 70000", "port 70000"},
		{"zc check em1 --send --queue 1", "send checks"},
		{"zc check eth9", "eth9"},
	} {
		_, stderr, code := runCLI(t, append([]string{"--root", root}, strings.Fields(c.args)...)...)
		if code != 2 || !strings.Contains(stderr, c.says) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("irqnuma %s: exit %d, stderr %q; want 2 saying %q", c.args, code, stderr, c.says)
		}
	}
}

// TestZCLiveVirtio: on this VM's virtio_net eth0 (kernel 6.15 or later),
// zc check says the kernel and io_uring hold and names the missing queue
// API and header split among the blockers, the queue API first.
func TestZCLiveVirtio(t *testing.T) {
	drv, err := os.Readlink("/sys/class/net/eth0/device/driver")
	if err != nil || filepath.Base(drv) != "virtio_net" {
		t.Skip("no virtio_net eth0 on this host")
	}
	if os.Geteuid() != 0 {
		t.Skip("steering reads need CAP_NET_ADMIN on some kernels: run as root")
	}
	stdout, stderr, code := runCLI(t, "-o", "json", "zc", "check", "eth0")
	if code != 3 {
		t.Fatalf("exit %d, want 3 (a prerequisite fails); stderr %q", code, stderr)
	}
	var r zc.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	got := map[zc.ID]zc.Status{}
	for _, p := range r.Prereqs {
		got[p.ID] = p.Status.Or("unknown")
	}
	if b := r.Blocker(); b == nil || b.ID != zc.IDQueueAPI || !strings.Contains(b.Evidence, "virtio_net does not implement netdev_queue_mgmt_ops") {
		t.Errorf("blocker %+v, want queue-api naming virtio_net", b)
	}
	// eth0 has no XDP program here: IFLA_XDP says none.
	if got[zc.IDHeaderSplt] != zc.StatusFails || got[zc.IDCapNetAdm] != zc.StatusHolds || got[zc.IDXDP] != zc.StatusHolds {
		t.Errorf("header-split %s, cap-net-admin %s, no-xdp %s; want does not hold, holds, holds", got[zc.IDHeaderSplt], got[zc.IDCapNetAdm], got[zc.IDXDP])
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		if v, err := zc.ParseRelease(strings.TrimSpace(string(b))); err == nil && v.AtLeast(zc.Version{Major: 6, Minor: 15}) && got[zc.IDKernel] != zc.StatusHolds {
			t.Errorf("kernel %s: %s, want holds", b, got[zc.IDKernel])
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/io_uring_disabled"); err == nil && strings.TrimSpace(string(b)) == "0" && got[zc.IDIOURing] != zc.StatusHolds {
		t.Errorf("io_uring_disabled 0: %s, want holds", got[zc.IDIOURing])
	}
	text, _, _ := runCLI(t, "zc", "check", "eth0")
	if !strings.Contains(text, "\nverdict: no, first because queue-api: ") || !strings.Contains(text, "header-split") {
		t.Errorf("text:\n%s", text)
	}
}

// TestZCREADME: the README's zc block on the committed sos-ice tree is
// what irqnuma prints (the live VM's blocks are pasted, and say so).
func TestZCREADME(t *testing.T) {
	block := readmeBlock(t, "zc", "$ irqnuma --root testdata/hosts/sos-ice zc check em1 --queue 2 --port 5201\n")
	out, errOut, code := runCLI(t, "--root", hosttest.Root("sos-ice"), "zc", "check", "em1", "--queue", "2", "--port", "5201")
	if code != 3 || errOut != "" {
		t.Fatalf("exit %d (want 3): %s", code, errOut)
	}
	if block != out {
		t.Errorf("README block:\n%s\nirqnuma prints:\n%s", block, out)
	}
}
