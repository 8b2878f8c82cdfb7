package tune

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func TestFormatSeed(t *testing.T) {
	h, tb := loadHost(t, hosttest.Root("seed"))
	node1, err := pickCPUs(h, tb, PickRequest{NIC: "eth0"})
	if err != nil {
		t.Fatal(err)
	}
	cores, err := pickCPUs(h, tb, PickRequest{NIC: "eth0", OnePerCore: true})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		pick   *Pick
		format string
		mem    bool
		want   string
	}{
		{"list", node1, "list", false, "16-31,48-63"},
		{"taskset", node1, "taskset", false, "0xffff0000ffff0000"},
		{"mask", node1, "mask", false, "ffff0000,ffff0000"},
		{"numactl", node1, "numactl", false, "--physcpubind=16-31,48-63 --membind=1"},
		{"docker", node1, "docker", false, "--cpuset-cpus=16-31,48-63 --cpuset-mems=1"},
		{"systemd", node1, "systemd", false, "CPUAffinity=16-31,48-63"},
		{"systemd mem", node1, "systemd", true, "CPUAffinity=16-31,48-63\nNUMAPolicy=bind\nNUMAMask=1"},
		{"cgroup", node1, "cgroup", false, "16-31,48-63"},
		// The seed's own mask.
		{"one per core taskset", cores, "taskset", false, "0xffff0000"},
		{"one per core mask keeps the host width", cores, "mask", false, "00000000,ffff0000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.pick.Format(tt.format, tt.mem)
			if err != nil {
				t.Fatalf("Format(%q, %v): %v", tt.format, tt.mem, err)
			}
			if got != tt.want {
				t.Errorf("Format(%q, %v) = %q, want %q", tt.format, tt.mem, got, tt.want)
			}
		})
	}
}

func TestFormatWide(t *testing.T) {
	root := hosttest.Synthetic(t, hosttest.SyntheticSpec{CPUs: 256, Nodes: 2, SMT: true, NICs: 1, QueuesPerNIC: 8})
	h, tb := loadHost(t, root)
	tests := []struct {
		give   PickRequest
		format string
		want   string
	}{
		{PickRequest{NIC: "eth0", ExcludeIRQCPUs: true}, "taskset", "0xffffffffffffffff0000000000000000ffffffffffffff00"},
		{PickRequest{NIC: "eth0", ExcludeIRQCPUs: true}, "mask",
			"00000000,00000000,ffffffff,ffffffff,00000000,00000000,ffffffff,ffffff00"},
		{PickRequest{NIC: "eth0", ExcludeIRQCPUs: true, OnePerCore: true}, "taskset", "0xffffffffffffff00"},
		{PickRequest{NIC: "eth0", ExcludeIRQCPUs: true, OnePerCore: true}, "mask",
			"00000000,00000000,00000000,00000000,00000000,00000000,ffffffff,ffffff00"},
		{PickRequest{CPUs: cpuset.New(255)}, "taskset", "0x8000000000000000000000000000000000000000000000000000000000000000"},
		{PickRequest{CPUs: cpuset.New(64, 255)}, "numactl", "--physcpubind=64,255 --membind=1"},
		{PickRequest{CPUs: cpuset.New(0, 255)}, "docker", "--cpuset-cpus=0,255 --cpuset-mems=0-1"},
	}
	for _, tt := range tests {
		p, err := pickCPUs(h, tb, tt.give)
		if err != nil {
			t.Fatalf("PickCPUs(%+v): %v", tt.give, err)
		}
		got, err := p.Format(tt.format, false)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("PickCPUs(%+v).Format(%q) = %q, want %q", tt.give, tt.format, got, tt.want)
		}
	}
}

func TestFormatErrors(t *testing.T) {
	known := &Pick{CPUs: cpuset.New(1), Nodes: unknown.Of(cpuset.New(0)), Width: 2}
	unknown := &Pick{CPUs: cpuset.New(1), Width: 2}
	tests := []struct {
		name    string
		pick    *Pick
		format  string
		mem     bool
		wantErr error
	}{
		{"unknown format", known, "hex", false, ErrUnknownMaskFormat},
		{"numactl, nodes unknown", unknown, "numactl", false, ErrLocalityUnknown},
		{"docker, nodes unknown", unknown, "docker", false, ErrLocalityUnknown},
		{"systemd mem, nodes unknown", unknown, "systemd", true, ErrLocalityUnknown},
		{"mem with list", known, "list", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.pick.Format(tt.format, tt.mem)
			if err == nil {
				t.Fatalf("Format(%q, %v) = %q, want an error", tt.format, tt.mem, got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Format(%q, %v) error = %v, want %v", tt.format, tt.mem, err, tt.wantErr)
			}
		})
	}
	// Without mem, systemd needs no nodes; list never does.
	for _, f := range []string{"list", "taskset", "mask", "cgroup", "systemd"} {
		if _, err := unknown.Format(f, false); err != nil {
			t.Errorf("Format(%q) with unknown nodes: %v", f, err)
		}
	}
}

func TestDocSeed(t *testing.T) {
	h, tb := loadHost(t, hosttest.Root("seed"))
	p, err := pickCPUs(h, tb, PickRequest{NIC: "eth0", ExcludeIRQCPUs: true, OnePerCore: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p.Doc())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	irqCPUs := "17,20-21,23-24,26,30,50-51,53,55,58,60-61,63"
	want := map[string]any{
		"cpus": "16,22,25,27", "nodes": []any{1.0}, "taskset": "0xa410000", "mask": "00000000,0a410000",
		"count": 4.0, "excluded": "17-21,23-24,26,28-31,49-53,55-56,58,60-63", "source": "eth0 local CPUs, node 1 (numa_node)",
		"candidates": "16-31,48-63", "irq_cpus": irqCPUs,
		"dropped": []any{
			map[string]any{"reason": "irq", "cpus": irqCPUs},
			map[string]any{"reason": "irq-siblings", "cpus": "18-19,28-29,31,49,52,56,62"},
		},
		"notes": []any{},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("doc (-want +got):\n%s", diff)
	}
}

// TestPickNoNUMA: a tree without /sys/devices/system/node knows no node:
// a NIC's local CPUs come from its local_cpulist alone (16-31,48-63 for
// the seed's eth0, never node 0's), a list's nodes are unknown, the JSON
// says null and formats that need nodes refuse.
func TestPickNoNUMA(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	if err := os.RemoveAll(filepath.Join(root, "sys/devices/system/node")); err != nil {
		t.Fatal(err)
	}
	h, tb := loadHost(t, root)
	nic, err := pickCPUs(h, tb, PickRequest{NIC: "eth0"})
	if err != nil || !nic.CPUs.Equal(cpuset.Range(16, 31).Union(cpuset.Range(48, 63))) || !strings.Contains(nic.Source, "local_cpulist") {
		t.Fatalf("PickCPUs(eth0) = %v from %q, %v; want 16-31,48-63 from local_cpulist", nic.CPUs, nic.Source, err)
	}
	p, err := pickCPUs(h, tb, PickRequest{CPUs: cpuset.Range(16, 19)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Nodes.Known() {
		t.Errorf("Nodes known for a host without nodes")
	}
	if want := []string{"NUMA node of CPUs 16-19 unknown"}; !cmp.Equal(want, p.Notes) {
		t.Errorf("notes = %q, want %q", p.Notes, want)
	}
	b, err := json.Marshal(p.Doc())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"nodes":null`) {
		t.Errorf("doc %s: want \"nodes\":null", b)
	}
	if _, err := p.Format("numactl", false); !errors.Is(err, ErrLocalityUnknown) {
		t.Errorf("Format(numactl) error = %v, want ErrLocalityUnknown", err)
	}
	if got, err := p.Format("taskset", false); err != nil || got != "0xf0000" {
		t.Errorf("Format(taskset) = %q, %v; want 0xf0000", got, err)
	}
	if got := p.Describe(); got != "CPUs 16-19 (node unknown)" {
		t.Errorf("Describe() = %q", got)
	}
}
