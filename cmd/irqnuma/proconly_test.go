package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/interrupts"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// TestProcOnlyTree: a tree holding only proc/interrupts (cnto-worker2's,
// real) works for irq list --all: every numbered row is listed with its
// counts on the CPUs the header names, and the online CPUs come from the
// header. The header is then renumbered to CPU0 CPU2 CPU4 ... (the
// columns of a host with odd CPUs offline, which no capture shows): the
// counts follow the numbers, not the column positions.
func TestProcOnlyTree(t *testing.T) {
	t.Parallel()
	realhosts.Require(t)
	c := realhosts.MustLookup(t, "cnto-worker2")
	text, err := os.ReadFile(filepath.Join(realhosts.Root(t, c), "proc/interrupts"))
	if err != nil {
		t.Fatal(err)
	}
	header, rest, _ := strings.Cut(string(text), "\n")
	var gapped []string
	for i := range strings.Fields(header) {
		gapped = append(gapped, fmt.Sprintf("CPU%d", 2*i))
	}
	for _, tt := range []struct {
		name, text string
		online     string
	}{
		{"as captured", string(text), "0-31"},
		{"odd CPUs offline", "           " + strings.Join(gapped, "       ") + "\n" + rest, "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48,50,52,54,56,58,60,62"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "proc/interrupts"), []byte(tt.text), 0o444); err != nil {
				t.Fatal(err)
			}
			in, err := interrupts.Parse([]byte(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := runCLI(t, "--root", root, "-o", "json", "irq", "list", "--all")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var doc struct {
				IRQs []struct {
					IRQ     int               `json:"irq"`
					PerCPU  map[string]uint64 `json:"per_cpu"`
					Managed *bool             `json:"managed"`
				} `json:"irqs"`
				Notes []string `json:"notes"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatal(err)
			}
			numbered := 0
			for _, r := range in.Rows {
				if r.IRQ.Known() {
					numbered++
				}
			}
			if numbered != 233 || len(doc.IRQs) != numbered {
				t.Fatalf("%d IRQs listed, %d numbered rows; want 233 each", len(doc.IRQs), numbered)
			}
			for i, q := range doc.IRQs {
				r, _ := in.Row(q.IRQ)
				want := map[string]uint64{}
				for col, n := range r.Counts {
					if n != 0 {
						want[strconv.Itoa(in.CPUs[col])] = n
					}
				}
				if fmt.Sprint(want) != fmt.Sprint(q.PerCPU) {
					t.Errorf("IRQ %d: per_cpu %v, want %v", q.IRQ, q.PerCPU, want)
				}
				if q.Managed != nil {
					t.Errorf("IRQ %d: managed %v without /proc/irq; want null", q.IRQ, *q.Managed)
				}
				if i > 3 && t.Failed() {
					break
				}
			}
			stdout, stderr, code = runCLI(t, "--root", root, "-o", "json", "topology")
			if code != 0 {
				t.Fatalf("topology: exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "online CPUs "+tt.online+" taken from the header of /proc/interrupts") {
				t.Errorf("topology does not say where the online CPUs came from:\n%s", stdout)
			}
		})
	}
}
