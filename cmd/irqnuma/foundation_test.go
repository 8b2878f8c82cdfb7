package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

var foundationHosts = []string{"seed", "vm-virtio", "offline-2node", "arm64", "nps2"}

// TestFoundationGolden runs topology and irq list, in both formats, on
// every host tree and compares with the golden files.
func TestFoundationGolden(t *testing.T) {
	t.Parallel()
	for _, host := range foundationHosts {
		t.Run(host, func(t *testing.T) {
			root := hosttest.Shared(t, host)
			for _, c := range []struct{ file, cmd string }{
				{"topology", "topology"},
				{"irq-list", "irq list"},
				{"irq-list-all", "irq list --all"},
			} {
				for _, format := range []string{"table", "json"} {
					args := append([]string{"--root", root, "-o", format}, strings.Fields(c.cmd)...)
					stdout, stderr, code := runCLI(t, args...)
					if code != 0 {
						t.Fatalf("irqnuma %s: exit %d, stderr %s", strings.Join(args, " "), code, stderr)
					}
					if stderr != "" {
						t.Errorf("irqnuma %s: unexpected stderr %q", c.cmd, stderr)
					}
					ext := map[string]string{"table": ".txt", "json": ".json"}[format]
					golden(t, filepath.Join(c.file, host+ext), stdout)
				}
			}
		})
	}
}

// TestSeedDoneWhen checks the foundation issue's acceptance on the seed
// host: IRQ 284 affinity 50, 285 17, all 16 queue IRQs local to node 1,
// and eth0 under node 1.
func TestSeedDoneWhen(t *testing.T) {
	t.Parallel()
	root := hosttest.Shared(t, "seed")
	stdout, stderr, code := runCLI(t, "--root", root, "irq", "list", "-o", "json")
	if code != 0 {
		t.Fatalf("irq list: exit %d: %s", code, stderr)
	}
	var doc struct {
		IRQs []listedIRQ `json:"irqs"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[int]string{284: "50", 285: "17", 286: "53", 290: "53", 299: "63"}
	queues := 0
	for _, q := range doc.IRQs {
		if !q.Queue.Known() {
			continue
		}
		queues++
		if q.IRQ < 284 || q.IRQ > 299 || q.NIC != "eth0" || !unknown.Is(q.Queue, q.IRQ-284) {
			t.Errorf("IRQ %d: nic %q queue %s, want eth0 queue %d", q.IRQ, q.NIC, q.Queue, q.IRQ-284)
		}
		if w, ok := want[q.IRQ]; ok && (q.Affinity == nil || *q.Affinity != w) {
			t.Errorf("IRQ %d affinity = %v, want %s", q.IRQ, q.Affinity, w)
		}
		if q.Local == nil || !*q.Local || len(q.Nodes) != 1 || q.Nodes[0] != 1 {
			t.Errorf("IRQ %d: local %v nodes %v, want local on node 1", q.IRQ, q.Local, q.Nodes)
		}
	}
	if queues != 16 {
		t.Errorf("%d queue IRQs, want 16", queues)
	}

	stdout, _, code = runCLI(t, "--root", root, "topology", "-o", "json")
	if code != 0 {
		t.Fatalf("topology: exit %d", code)
	}
	var topo struct {
		NICs []struct {
			Name      string `json:"name"`
			Node      int    `json:"node"`
			LocalNode int    `json:"local_node"`
			IRQs      []int  `json:"irqs"`
		} `json:"nics"`
	}
	if err := json.Unmarshal([]byte(stdout), &topo); err != nil {
		t.Fatal(err)
	}
	if len(topo.NICs) != 1 || topo.NICs[0].Name != "eth0" || topo.NICs[0].Node != 1 || topo.NICs[0].LocalNode != 1 {
		t.Errorf("topology NICs = %+v, want eth0 on node 1", topo.NICs)
	}
}

// TestBadInput: every kind of bad input gives one clear line on stderr and
// a non-zero exit, never a panic or a silent wrong value.
func TestBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mutate   func(t *testing.T, root string)
		args     []string
		wantCode int
		wantErr  string
	}{
		{"missing root", nil, []string{"--root", "/nonexistent/host", "topology"}, 2, "root /nonexistent/host: no such folder"},
		{"unknown NIC", nil, []string{"irq", "list", "--nic", "eth9"}, 2, `unknown NIC "eth9"`},
		{"unknown command", nil, []string{"frobnicate"}, 2, "unknown command"},
		{"bad output", nil, []string{"-o", "yaml", "topology"}, 2, "--output"},
		{"bad flag", nil, []string{"irq", "list", "--bogus"}, 2, "unknown flag"},
		{"garbage mask", func(t *testing.T, root string) {
			write(t, root, "proc/irq/284/smp_affinity_list", "0-x\n")
		}, []string{"irq", "list"}, 1, "proc/irq/284/smp_affinity_list"},
		{"truncated interrupts", func(t *testing.T, root string) {
			write(t, root, "proc/interrupts", "")
		}, []string{"irq", "list"}, 1, "proc/interrupts"},
		{"interrupts garbage header", func(t *testing.T, root string) {
			write(t, root, "proc/interrupts", "garbage\n")
		}, []string{"irq", "list"}, 1, "proc/interrupts"},
		// Without the cpu folder the header of /proc/interrupts says
		// which CPUs are online (TestProcOnlyTree); without both, nothing.
		{"missing cpu folder and interrupts", func(t *testing.T, root string) {
			for _, p := range []string{"sys/devices/system/cpu", "proc/interrupts"} {
				if err := os.RemoveAll(filepath.Join(root, p)); err != nil {
					t.Fatal(err)
				}
			}
		}, []string{"topology"}, 1, "cpu/online"},
		{"bad node cpulist", func(t *testing.T, root string) {
			write(t, root, "sys/devices/system/node/node1/cpulist", "16-31,48-\n")
		}, []string{"topology"}, 1, "node1/cpulist"},
		{"bad numa_node", func(t *testing.T, root string) {
			write(t, root, "sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/numa_node", "one\n")
		}, []string{"topology"}, 1, "numa_node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := hosttest.Copy(t, "seed")
			if tt.mutate != nil {
				tt.mutate(t, root)
			}
			args := tt.args
			if args[0] != "--root" {
				args = append([]string{"--root", root}, args...)
			}
			stdout, stderr, code := runCLI(t, args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stderr, tt.wantErr) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one line naming %q", stderr, tt.wantErr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing on error", stdout)
			}
		})
	}
}

// TestUnknownLocality: numa_node -1 on a two-node host with a
// local_cpulist covering every CPU is unknown, never node 0.
func TestUnknownLocality(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	dev := "sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/"
	write(t, root, dev+"numa_node", "-1\n")
	write(t, root, dev+"local_cpulist", "0-63\n")
	stdout, _, code := runCLI(t, "--root", root, "irq", "list", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(stdout, `"local": null`) || strings.Contains(stdout, `"local": true`) {
		t.Errorf("want every eth0 IRQ local null, got:\n%s", stdout)
	}
	stdout, _, _ = runCLI(t, "--root", root, "topology")
	if !strings.Contains(stdout, "unknown  eth0") {
		t.Errorf("want eth0 under unknown, got:\n%s", stdout)
	}
}

// TestLive runs both commands on this machine and checks them against
// /proc directly.
func TestLive(t *testing.T) {
	t.Parallel()
	hosttest.Live(t)
	if _, err := os.Stat("/proc/interrupts"); err != nil {
		t.Skip("no /proc/interrupts on this machine")
	}
	stdout, stderr, code := runCLI(t, "topology", "-o", "json")
	if code != 0 {
		t.Fatalf("topology: exit %d: %s", code, stderr)
	}
	var topo struct {
		Online cpuset.Set `json:"online"`
	}
	if err := json.Unmarshal([]byte(stdout), &topo); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := cpuset.ParseList(strings.TrimSpace(string(b))); !topo.Online.Equal(want) {
		t.Errorf("online = %s, want %s", topo.Online, want)
	}

	stdout, stderr, code = runCLI(t, "irq", "list", "--all", "-o", "json")
	if code != 0 {
		t.Fatalf("irq list: exit %d: %s", code, stderr)
	}
	var doc struct {
		IRQs []struct {
			IRQ      int     `json:"irq"`
			Affinity *string `json:"affinity"`
		} `json:"irqs"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.IRQs) == 0 {
		t.Fatal("no IRQs listed")
	}
	checked := 0
	for _, q := range doc.IRQs {
		b, err := os.ReadFile("/proc/irq/" + strconv.Itoa(q.IRQ) + "/smp_affinity_list")
		if err != nil {
			continue // freed since
		}
		if q.Affinity == nil {
			t.Errorf("IRQ %d: affinity unknown, /proc says %q", q.IRQ, b)
			continue
		}
		want, _ := cpuset.ParseList(strings.TrimSpace(string(b)))
		got, _ := cpuset.ParseList(*q.Affinity)
		if !got.Equal(want) {
			t.Errorf("IRQ %d affinity = %s, /proc says %s", q.IRQ, got, want)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no IRQ checked against /proc/irq")
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.Chmod(p, 0o644); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVersion: --version prints the build on one line and exits 0.
func TestVersion(t *testing.T) {
	t.Parallel()
	out, errOut, code := runCLI(t, "--version")
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "irqnuma ") || strings.Count(out, "\n") != 1 {
		t.Errorf("--version = %q, %q, exit %d; want one line naming irqnuma", out, errOut, code)
	}
}

// TestRelativeRoot: --root may be relative to the working folder; every
// command answers exactly as with the absolute path (links in the tree
// were once judged to leave a relative root).
func TestRelativeRoot(t *testing.T) {
	t.Parallel()
	abs := hosttest.Root("seed")
	rel, err := filepath.Rel(mustGetwd(t), abs)
	if err != nil || filepath.IsAbs(rel) {
		t.Fatalf("relative path of %s: %q, %v", abs, rel, err)
	}
	for _, args := range [][]string{{"topology"}, {"irq", "list"}, {"audit"}, {"-o", "json", "map"}} {
		want, _, wcode := runCLI(t, append([]string{"--root", abs}, args...)...)
		got, stderr, code := runCLI(t, append([]string{"--root", rel}, args...)...)
		if code != wcode || got != want {
			t.Errorf("%v with --root %s: exit %d, %s\n%s\nwant exit %d:\n%s", args, rel, code, stderr, got, wcode, want)
		}
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
