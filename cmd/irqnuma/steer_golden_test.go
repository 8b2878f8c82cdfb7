package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestSteerGolden shows the steering on the tree that holds some: the
// sos-ice sosreport (ethtool text: 8 combined channels of 64, one flow
// rule to queue 2, whose IRQ lands on node 0; no RSS table or NAPI, which
// a sosreport does not collect). topology and irq list --steer show its queues,
// audit judges them, map draws them; each in both formats.
//
// And on the seed with its recorded steering (testdata/flow/seed-steer:
// a 128-entry table over 16 queues, udp4 hashed sd, a rule sending TCP
// to port 5201 to queue 7): the queues' NAPI ids and table shares, and
// udp-hash-no-ports.
func TestSteerGolden(t *testing.T) {
	t.Parallel()
	for _, host := range []struct{ name, root string }{
		{"sos-ice", hosttest.Root("sos-ice")},
		{"seed-steer", seedWithSteering(t)},
	} {
		for _, c := range []struct {
			file, cmd string
			code      int
		}{
			{"topology", "topology", 0},
			{"irq-list", "irq list --steer", 0},
			{"audit", "audit", 3},
			{"map", "map --color never", 0},
		} {
			for _, format := range []string{"table", "json"} {
				args := append([]string{"--root", host.root, "-o", format}, strings.Fields(c.cmd)...)
				stdout, stderr, code := runCLI(t, args...)
				if code != c.code || stderr != "" {
					t.Fatalf("irqnuma %s: exit %d (want %d), stderr %q", strings.Join(args, " "), code, c.code, stderr)
				}
				ext := map[string]string{"table": ".txt", "json": ".json"}[format]
				golden(t, filepath.Join("steer", host.name+"-"+c.file+ext), stdout)
			}
		}
	}
}
