package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// labHosts are the snapshots the lab (make vmtest LAB_REFRESH=1) took of
// its Debian guests, one per kernel, named by the kernel's major.minor:
// every testdata/hosts/lab-debian-*.tar.gz, so that the snapshot of a
// kernel the lab newly boots (when Debian's newest moves on) has goldens
// too. testdata/hosts/lab-README.md says how they were made.
func labHosts(t *testing.T) []string {
	paths, err := filepath.Glob(filepath.Join(moduleRoot(t), "testdata", "hosts", "lab-debian-*.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, p := range paths {
		hosts = append(hosts, strings.TrimSuffix(filepath.Base(p), ".tar.gz"))
	}
	for _, want := range []string{"lab-debian-6.1", "lab-debian-6.12", "lab-debian-7.3"} {
		if !slices.Contains(hosts, want) {
			t.Errorf("testdata/hosts has no %s.tar.gz: %v", want, hosts)
		}
	}
	return hosts
}

func labSnapshot(t *testing.T, name string) string {
	return filepath.Join(moduleRoot(t), "testdata", "hosts", name+".tar.gz")
}

// TestLabGolden runs topology, irq list --all and audit, in both
// formats, on the lab's kernel-written snapshots.
func TestLabGolden(t *testing.T) {
	for _, host := range labHosts(t) {
		t.Run(host, func(t *testing.T) {
			root := labSnapshot(t, host)
			for _, c := range []struct{ file, cmd string }{
				{"topology", "topology"},
				{"irq-list-all", "irq list --all"},
				{"audit", "audit --fail-on never"},
			} {
				for _, format := range []string{"table", "json"} {
					args := append([]string{"--root", root, "-o", format}, strings.Fields(c.cmd)...)
					stdout, stderr, code := runCLI(t, args...)
					if code != 0 {
						t.Fatalf("irqnuma %s: exit %d, stderr %s", strings.Join(args, " "), code, stderr)
					}
					ext := map[string]string{"table": ".txt", "json": ".json"}[format]
					golden(t, filepath.Join(c.file, host+ext), stdout)
				}
			}
		})
	}
}

// TestLabManaged: on the 6.1 snapshot, where every smp_affinity is 0644
// and the kernel refused every write to an NVMe queue IRQ with EIO, no
// NVMe queue IRQ is called unmanaged; on 6.12 and 7.3 they are 0444 and
// managed.
func TestLabManaged(t *testing.T) {
	tests := []struct {
		give string
		want string // managed of nvme0q1..q8, as JSON
	}{
		{"lab-debian-6.1", "null"},
		{"lab-debian-6.12", "true"},
		{"lab-debian-7.3", "true"},
	}
	for _, tt := range tests {
		stdout, stderr, code := runCLI(t, "--root", labSnapshot(t, tt.give), "-o", "json", "irq", "list", "--all")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.give, code, stderr)
		}
		var doc struct {
			IRQs []struct {
				IRQ     int             `json:"irq"`
				Name    string          `json:"name"`
				Managed json.RawMessage `json:"managed"`
			} `json:"irqs"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, q := range doc.IRQs {
			if !strings.HasPrefix(q.Name, "nvme0q") || q.Name == "nvme0q0" {
				continue
			}
			n++
			if got := string(q.Managed); got != tt.want {
				t.Errorf("%s: IRQ %d %s: managed %s, want %s", tt.give, q.IRQ, q.Name, got, tt.want)
			}
		}
		if n != 8 {
			t.Errorf("%s: %d NVMe queue IRQs, want 8", tt.give, n)
		}
	}
}
