package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/affinity"
	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/hosttest"
	"github.com/irqnuma/irqnuma/steer"
)

// labVirtio is eth2 as the lab's 6.18 guest reads it: virtio_net rss=on,
// 4 combined channels at most, one in use, a 128-entry default table,
// no ntuple and no tcp-data-split.
func labVirtio() *steer.NIC {
	t := make([]uint32, 128)
	return &steer.NIC{Name: "eth2", Driver: &steer.DriverInfo{Driver: "virtio_net"},
		Channels: &steer.Channels{MaxCombined: 4, Combined: 1},
		RSS:      &steer.RSS{Rings: 1, Table: t},
		Rings:    &steer.Rings{RX: 256, TX: 256},
		Unknown:  map[steer.Part]steer.Reason{steer.PartRules: {Why: steer.WhyDriver, Detail: "EOPNOTSUPP"}},
	}
}

func stepNames(steps []affinity.SteerStep) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Name())
	}
	return out
}

func TestPlanZC(t *testing.T) {
	p, err := planZC(labVirtio(), 1, 9000)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"eth2 channels combined 2", "eth2 rss table over 0 (128 entries)"}
	if diff := cmp.Diff(want, stepNames(p.Steps)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	var skipped []string
	for _, s := range p.Skipped {
		skipped = append(skipped, s.Step)
	}
	if diff := cmp.Diff([]string{"ntuple rule", "tcp-data-split on", "hds-thresh 0"}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	p, err = planZC(labVirtio(), 3, 9000)
	if err != nil || len(p.Steps) != 2 || *p.Steps[0].Channels.Combined != 4 || slices3(p.Steps[1].RSS.Table) != "0,1,2" {
		t.Errorf("queue 3: %v, %v", err, stepNames(p.Steps))
	}
	if p, err := planZC(labVirtio(), 4, 9000); err != nil || len(p.Steps) != 0 || len(p.Skipped) == 0 ||
		p.Skipped[0].Why != "queue 4 needs 5 rx queues: eth2 has at most 4 combined channels" {
		t.Errorf("queue 4 of 4 channels: %v, %+v; want it blocked, nothing planned", err, p)
	}
	bn := labVirtio()
	on, hds := steer.TCPDataSplitDisabled, uint32(256)
	bn.Channels.Combined, bn.RSS.Rings = 8, 8
	bn.Channels.MaxCombined = 8
	bn.Rings.TCPDataSplit, bn.Rings.HDSThresh = &on, &hds
	bn.Rules, bn.Unknown = &steer.Rules{TableSize: 8}, nil
	p, err = planZC(bn, 1, 9000)
	want = []string{"eth2 rss table over 0,2,3,4,5,6,7 (128 entries)", "eth2 ntuple flow-type tcp4 dst-port 9000 action 1",
		"eth2 ntuple flow-type tcp6 dst-port 9000 action 1", "eth2 rings tcp-data-split on hds-thresh 0"}
	if diff := cmp.Diff(want, stepNames(p.Steps)); err != nil || diff != "" {
		t.Errorf("a NIC with every part: %v (-want +got):\n%s", err, diff)
	}
}

// slices3 shows a table's distinct queues.
func slices3(t []uint32) string {
	seen := map[uint32]bool{}
	var out []string
	for _, q := range t {
		if !seen[q] {
			seen[q] = true
			out = append(out, string(rune('0'+q)))
		}
	}
	return strings.Join(out, ",")
}

// TestZCPrepareRefuses: a NIC that cannot bind zero-copy receive is
// refused with the first reason, in a dry run and without one, and a
// captured root is never changed (--partial on a tree: not live).
func TestZCPrepareRefuses(t *testing.T) {
	root := hosttest.Copy(t, "vm-virtio")
	before := treeFiles(t, root)
	out, stderr, code := runCLI(t, "--root", root, "zc", "prepare", "eth0", "--queue", "1", "--port", "9000", "--dry-run")
	if code != cli.ExitError || !strings.Contains(stderr, "eth0 cannot do zero-copy receive: ") || !strings.Contains(out, "application CPUs") {
		t.Errorf("dry run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	_, stderr, code = runCLI(t, "--root", root, "zc", "prepare", "eth0", "--queue", "1", "--port", "9000")
	if code != cli.ExitError || !strings.Contains(stderr, "nothing was changed") {
		t.Errorf("without --partial: exit %d, stderr %s", code, stderr)
	}
	_, stderr, code = runCLI(t, "--root", root, "zc", "prepare", "eth0", "--queue", "1", "--port", "9000", "--partial")
	if code == 0 || !strings.Contains(stderr, "only on the live root") {
		t.Errorf("--partial on a tree: exit %d, stderr %s", code, stderr)
	}
	if diff := cmp.Diff(before, treeFiles(t, root)); diff != "" {
		t.Errorf("the tree changed (-before +after):\n%s", diff)
	}
	for _, args := range [][]string{{"--queue", "1"}, {"--port", "9000"}, {"--queue", "-1", "--port", "1"}, {"--queue", "1", "--port", "70000"}} {
		_, _, code := runCLI(t, append([]string{"--root", root, "zc", "prepare", "eth0"}, args...)...)
		if code != cli.ExitUsage {
			t.Errorf("zc prepare eth0 %v: exit %d, want %d", args, code, cli.ExitUsage)
		}
	}
}
