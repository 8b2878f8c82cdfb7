package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// transcript runs each command line against root and writes what a shell
// session would show: the command, stdout, stderr lines marked, the exit
// code. root is shown as the host's name.
func transcript(t *testing.T, root, name string, lines []string) string {
	t.Helper()
	var sb strings.Builder
	for _, line := range lines {
		args := append([]string{"--root", root}, strings.Fields(line)...)
		stdout, stderr, code := runCLI(t, args...)
		fmt.Fprintf(&sb, "$ irqnuma --root %s %s\n%s", name, line, stdout)
		for l := range strings.Lines(stderr) {
			sb.WriteString("stderr: " + l)
		}
		fmt.Fprintf(&sb, "[exit %d]\n\n", code)
	}
	return sb.String()
}

func TestMaskGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host  string
		lines []string
	}{
		{"seed", []string{
			"mask --nic eth0",
			"mask --nic eth0 --format taskset",
			"mask --nic eth0 --format mask",
			"mask --nic eth0 --format numactl",
			"mask --nic eth0 --format docker",
			"mask --nic eth0 --format systemd",
			"mask --nic eth0 --format systemd --mem",
			"mask --nic eth0 --format cgroup",
			"mask --nic eth0 --one-per-core",
			"mask --nic eth0 --one-per-core --format taskset",
			"mask --nic eth0 --one-per-core --format mask",
			"mask --nic eth0 --exclude-irq-cpus",
			"mask --nic eth0 --exclude-irq-cpus --format taskset",
			"mask --nic eth0 --exclude-irq-cpus --one-per-core --format numactl",
			"mask --nic eth0 --exclude-irq-cpus --one-per-core --count 2 --format docker",
			"mask --nic eth0 --exclude 16-19 --one-per-core",
			"mask --node 0 --format taskset",
			"mask --cpus 0-3,32-35 --one-per-core --format mask",
			"mask --nic eth0 --exclude-irq-cpus --one-per-core -o json",
			"mask --nic eth0 --exclude-irq-cpus --one-per-core --count 5",
			"mask --nic eth0 --count 33",
			"mask --nic eth0 --exclude 16-31,48-63",
			"mask --nic eth9",
			"mask --node 2",
			"mask --cpus 60-70",
			"mask --cpus 3-1",
			"mask --nic eth0 --exclude 1,",
			"mask --nic eth0 --node 1",
			"mask --node 1 --exclude-irq-cpus",
			"mask --nic eth0 --count 0",
			"mask --nic eth0 --format hex",
			"mask --nic eth0 --format taskset --mem",
		}},
		{"offline-2node", []string{
			"mask --node 1",
			"mask --cpus 8-15",
			"mask --nic ens1f0 --format numactl",
			"mask --nic ens2f0 -o json",
			"mask --nic ens1f0 --exclude-irq-cpus",
			"mask --nic ens1f0 --exclude-irq-cpus --one-per-core",
			"mask --nic eth1 --exclude-irq-cpus --format taskset",
		}},
		{"vm-virtio", []string{
			"mask --nic eth0",
			"mask --nic eth0 --format mask",
			"mask --nic eth0 --exclude-irq-cpus",
		}},
		{"nps2", []string{
			"mask --nic enp65s0f0 --exclude-irq-cpus --format numactl",
			"mask --node 2 --format mask",
		}},
		{"arm64", []string{
			"mask --nic eth0 --exclude-irq-cpus --format taskset",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			got := transcript(t, hosttest.Root(tt.host), tt.host, tt.lines)
			golden(t, filepath.Join("mask", tt.host+".txt"), got)
		})
	}
}

// TestMaskSeed checks the numbers on the seed host, apart from
// the golden files.
func TestMaskSeed(t *testing.T) {
	t.Parallel()
	root := hosttest.Root("seed")
	tests := []struct {
		give     string
		want     string
		wantCode int
	}{
		{"mask --nic eth0", "16-31,48-63\n", 0},
		{"mask --nic eth0 --format taskset", "0xffff0000ffff0000\n", 0},
		{"mask --nic eth0 --format mask", "ffff0000,ffff0000\n", 0},
		{"mask --nic eth0 --format numactl", "--physcpubind=16-31,48-63 --membind=1\n", 0},
		{"mask --nic eth0 --format docker", "--cpuset-cpus=16-31,48-63 --cpuset-mems=1\n", 0},
		{"mask --nic eth0 --format systemd", "CPUAffinity=16-31,48-63\n", 0},
		{"mask --nic eth0 --format systemd --mem", "CPUAffinity=16-31,48-63\nNUMAPolicy=bind\nNUMAMask=1\n", 0},
		{"mask --nic eth0 --format cgroup", "16-31,48-63\n", 0},
		{"mask --nic eth0 --one-per-core --format taskset", "0xffff0000\n", 0},
		{"mask --nic eth0 --exclude 16-31,48-63", "", 1},
		{"mask --nic eth0 --count 33", "", 1},
	}
	for _, tt := range tests {
		args := append([]string{"--root", root}, strings.Fields(tt.give)...)
		stdout, stderr, code := runCLI(t, args...)
		if stdout != tt.want || code != tt.wantCode {
			t.Errorf("irqnuma %s = %q, exit %d (stderr %q); want %q, exit %d", tt.give, stdout, code, stderr, tt.want, tt.wantCode)
		}
	}
}

// TestMaskSeedExcludeIRQCPUs reads the effective CPUs of IRQs 284-299 from
// irq list and checks mask --exclude-irq-cpus drops exactly those.
func TestMaskSeedExcludeIRQCPUs(t *testing.T) {
	t.Parallel()
	root := hosttest.Root("seed")
	stdout, stderr, code := runCLI(t, "--root", root, "-o", "json", "irq", "list", "--nic", "eth0")
	if code != 0 {
		t.Fatalf("irq list: exit %d: %s", code, stderr)
	}
	var doc struct {
		IRQs []struct {
			IRQ       int     `json:"irq"`
			Kind      string  `json:"kind"`
			Effective *string `json:"effective"`
		} `json:"irqs"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var irqCPUs cpuset.Set
	n := 0
	for _, q := range doc.IRQs {
		if q.IRQ < 284 || q.IRQ > 299 {
			continue
		}
		n++
		if q.Kind != "queue" || q.Effective == nil {
			t.Fatalf("IRQ %d: kind %q effective %v", q.IRQ, q.Kind, q.Effective)
		}
		irqCPUs = irqCPUs.Union(mustParseList(t, *q.Effective))
	}
	if n != 16 {
		t.Fatalf("irq list shows %d of IRQs 284-299", n)
	}
	stdout, stderr, code = runCLI(t, "--root", root, "mask", "--nic", "eth0", "--exclude-irq-cpus")
	if code != 0 {
		t.Fatalf("mask: exit %d: %s", code, stderr)
	}
	got := mustParseList(t, strings.TrimSuffix(stdout, "\n"))
	want := mustParseList(t, "16-31,48-63").Difference(irqCPUs)
	if !got.Equal(want) {
		t.Errorf("mask --exclude-irq-cpus = %s, want %s (node 1 minus %s)", got, want, irqCPUs)
	}
}

// TestMaskWide checks the mask and taskset forms on a 256-CPU host.
func TestMaskWide(t *testing.T) {
	t.Parallel()
	root := hosttest.Synthetic(t, hosttest.SyntheticSpec{CPUs: 256, Nodes: 2, SMT: true, NICs: 1, QueuesPerNIC: 8})
	got := transcript(t, root, "synthetic-256", []string{
		"mask --nic eth0",
		"mask --nic eth0 --format mask",
		"mask --nic eth0 --format taskset",
		"mask --nic eth0 --exclude-irq-cpus --one-per-core --format mask",
		"mask --nic eth0 --exclude-irq-cpus --one-per-core --format taskset",
		"mask --cpus 255 --format mask",
		"mask --node 1 --count 70 --format numactl",
		"mask --node 1 --count 200",
	})
	golden(t, filepath.Join("mask", "synthetic-256.txt"), got)
}

// TestMaskNoNUMA runs mask on the seed tree without its node folder: the
// NIC's CPUs come from its local_cpulist, their node is unknown, and
// formats that carry nodes refuse (exit 1).
func TestMaskNoNUMA(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	if err := os.RemoveAll(filepath.Join(root, "sys/devices/system/node")); err != nil {
		t.Fatal(err)
	}
	got := transcript(t, root, "seed-without-nodes", []string{
		"mask --nic eth0",
		"mask --cpus 16-19 --format taskset",
		"mask --cpus 16-19 --format numactl",
		"mask --cpus 16-19 -o json",
	})
	golden(t, filepath.Join("mask", "seed-without-nodes.txt"), got)
}

func mustParseList(t *testing.T, s string) cpuset.Set {
	t.Helper()
	set, err := cpuset.ParseList(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// BenchmarkMaskSynthetic is the whole `mask --exclude-irq-cpus` command on
// a 512-CPU host with 1,000 IRQs: reading the topology and the NIC's IRQs,
// picking, printing.
func BenchmarkMaskSynthetic(b *testing.B) {
	spec := hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488}
	if spec.IRQs() != 1000 {
		b.Fatalf("spec has %d IRQs, want 1000", spec.IRQs())
	}
	root := hosttest.Synthetic(b, spec)
	args := []string{"--root", root, "mask", "--nic", "eth0", "--exclude-irq-cpus", "--one-per-core", "--format", "mask"}
	b.ReportAllocs()
	for b.Loop() {
		if _, stderr, code := runCLI(b, args...); code != 0 {
			b.Fatalf("exit %d: %s", code, stderr)
		}
	}
}
