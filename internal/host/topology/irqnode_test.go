package topology

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestIRQNode: the node every IRQ's node file agrees on; unknown when they
// disagree, any says -1, none has the file, or some are kernel-managed
// (read-only smp_affinity_list beside writable ones).
func TestIRQNode(t *testing.T) {
	type irqFile struct {
		node string // "" for no folder
		mode os.FileMode
	}
	tests := []struct {
		name   string
		give   []irqFile
		want   int
		wantOK bool
	}{
		{"all agree", []irqFile{{"1", 0o644}, {"1", 0o644}, {"1", 0o644}}, 1, true},
		{"all read-only agree", []irqFile{{"0", 0o444}, {"0", 0o444}}, 0, true},
		{"a folder missing", []irqFile{{"1", 0o644}, {"", 0}}, 1, true},
		{"disagree", []irqFile{{"0", 0o644}, {"1", 0o644}}, -1, false},
		{"minus one", []irqFile{{"-1", 0o644}, {"-1", 0o644}}, -1, false},
		{"one minus one", []irqFile{{"0", 0o644}, {"-1", 0o644}}, -1, false},
		{"managed beside unmanaged", []irqFile{{"0", 0o644}, {"0", 0o444}}, -1, false},
		{"no files", []irqFile{{"", 0}}, -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			var irqs []int
			for i, f := range tt.give {
				n := 100 + i
				irqs = append(irqs, n)
				if f.node == "" {
					continue
				}
				dir := filepath.Join(root, "proc/irq", strconv.Itoa(n))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "node"), []byte(f.node+"\n"), 0o444); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "smp_affinity_list"), []byte("0-3\n"), f.mode); err != nil {
					t.Fatal(err)
				}
			}
			h := &Host{Root: root, fs: hosttest.Open(t, root)}
			got, ok, why, err := h.irqNode(irqs)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || ok != tt.wantOK || (ok == (why != "")) {
				t.Errorf("irqNode = %d, %v, %q; want %d, %v", got, ok, why, tt.want, tt.wantOK)
			}
		})
	}
}

// TestIRQNodeRealHosts: on the captures whose NICs are inferred from IRQ
// names and whose PCI functions are in the tree, the node all of a NIC's
// IRQs were allocated on is its PCI function's numa_node, for every one
// of the 92 NICs: 10 on cnto-master, 6 on each cnto-worker, 70 on
// dell-2numa (i40e, ice, iavf VFs, tg3, igb, mlx5 by PCI address).
func TestIRQNodeRealHosts(t *testing.T) {
	realhosts.Require(t)
	for name, want := range map[string]int{"cnto-master": 10, "cnto-worker1": 6, "cnto-worker2": 6, "dell-2numa": 70} {
		t.Run(name, func(t *testing.T) {
			c := realhosts.MustLookup(t, name)
			h, err := Read(hosttest.Open(t, realhosts.Root(t, c)))
			if err != nil {
				t.Fatal(err)
			}
			agree := 0
			for _, n := range h.NICs {
				switch {
				case !n.Inferred || n.Node.Or(-1) < 0:
					t.Errorf("%s: inferred %v, numa_node %d; want inferred with a numa_node", n.Name, n.Inferred, n.Node.Or(-1))
				case !unknown.Same(n.IRQNode, n.Node):
					t.Errorf("%s: IRQ node %v, numa_node %v", n.Name, n.IRQNode, n.Node)
				default:
					agree++
				}
			}
			if agree != want || len(h.NICs) != want {
				t.Errorf("%d of %d NICs agree, want %d of %d", agree, len(h.NICs), want, want)
			}
		})
	}
}
