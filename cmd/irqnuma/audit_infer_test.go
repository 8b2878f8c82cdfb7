package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// TestAuditFixWithoutInterface: a NIC the capture knows only by its PCI
// address (dell-2numa's ConnectX-4 ports 0000:19:00.0 and .1, named
// "mlx5_comp*@pci:...") or its virtio device (cnto-sno's virtio1) has no
// interface name for ethtool or irqnuma on the host, so no fix line may
// be such a command naming it; each says how to find the interface and
// gives the command with a placeholder.
func TestAuditFixWithoutInterface(t *testing.T) {
	realhosts.Require(t)
	tests := []struct {
		capture, nic string
		check        audit.Check
		fix          string // the whole fix
	}{
		// 63 queue IRQs (mlx5_comp0-62) on node 0's 52 CPUs.
		{"dell-2numa", "0000:19:00.0", audit.CheckQueuesVsCPUs,
			"this capture names 0000:19:00.0 by its PCI address, not by an interface, and the command needs the interface name: " +
				"on the host, find it with `ls /sys/bus/pci/devices/0000:19:00.0/net`, then run: ethtool -L <interface> combined 52  # or rx N tx N, as the driver counts queues"},
		{"dell-2numa", "0000:19:00.0", audit.CheckIRQSharedCPU,
			"this capture names 0000:19:00.0 by its PCI address, not by an interface, and the command needs the interface name: " +
				"on the host, find it with `ls /sys/bus/pci/devices/0000:19:00.0/net`, then run: irqnuma irq pin <interface>"},
		{"dell-2numa", "0000:19:00.1", audit.CheckQueuesVsCPUs,
			"this capture names 0000:19:00.1 by its PCI address, not by an interface, and the command needs the interface name: " +
				"on the host, find it with `ls /sys/bus/pci/devices/0000:19:00.1/net`, then run: ethtool -L <interface> combined 52  # or rx N tx N, as the driver counts queues"},
		// One queue (input.0/output.0) on a 12-CPU, 12-core VM.
		{"cnto-sno", "virtio1", audit.CheckQueuesVsCPUs,
			"this capture names virtio1 by its virtio device, not by an interface, and the command needs the interface name: " +
				"on the host, find it with `ls /sys/bus/virtio/devices/virtio1/net`, then run: ethtool -l <interface>; ethtool -L <interface> combined 12  # -l shows the maximum"},
	}
	docs := map[string]auditDoc{}
	for _, tt := range tests {
		doc, ok := docs[tt.capture]
		if !ok {
			c := realhosts.MustLookup(t, tt.capture)
			doc, _ = auditJSON(t, realhosts.Root(t, c))
			docs[tt.capture] = doc
		}
		found := false
		for _, f := range byCheck(doc, tt.check) {
			if f.NIC == tt.nic {
				found = true
				if f.Fix != tt.fix {
					t.Errorf("%s %s %s fix:\n got %q\nwant %q", tt.capture, tt.nic, tt.check, f.Fix, tt.fix)
				}
			}
		}
		if !found {
			t.Errorf("%s: no %s finding for %s", tt.capture, tt.check, tt.nic)
		}
	}
	// No fix of any of those NICs runs a command that names them.
	for name, doc := range docs {
		for _, f := range doc.Findings {
			if f.NIC != "0000:19:00.0" && f.NIC != "0000:19:00.1" && f.NIC != "virtio1" {
				continue
			}
			for _, cmd := range []string{"ethtool -L " + f.NIC, "ethtool -l " + f.NIC, "ethtool -X " + f.NIC,
				"irq pin " + f.NIC, "--nic " + f.NIC, "/sys/class/net/" + f.NIC} {
				if strings.Contains(f.Fix, cmd) {
					t.Errorf("%s: %s fix of %s runs %q: %s", name, f.Check, f.NIC, cmd, f.Fix)
				}
			}
		}
	}
}

// TestAuditAbsentPCIFunction: dell-2numa with the link of 0000:19:00.0 cut,
// as a capture that kept /proc but not that PCI function would be. The
// NIC keeps its 64 IRQs (mlx5_async 267, mlx5_comp0-62 268-330) and is
// audited on node 0, where /proc/irq/N/node puts all of them; the
// nic-node-unknown finding says so instead of blaming the firmware.
func TestAuditAbsentPCIFunction(t *testing.T) {
	realhosts.Require(t)
	c := realhosts.MustLookup(t, "dell-2numa")
	root := realhosts.Unpack(t, c)
	if err := os.Remove(filepath.Join(root, "sys/bus/pci/devices/0000:19:00.0")); err != nil {
		t.Fatal(err)
	}
	doc, _ := auditJSON(t, root, "--nic", "0000:19:00.0")
	want := "0000:19:00.0 is known from IRQ names and the tree has no PCI function 0000:19:00.0, so its numa_node is unknown; " +
		"all 64 of its IRQs were allocated on node 0 (/proc/irq/N/node), which is used as its locality for the other checks"
	var got []auditFinding
	for _, f := range byCheck(doc, audit.CheckNICNodeUnknown) {
		got = append(got, f)
		if f.Message != want || f.Severity != "info" || f.CPUs != "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48,50,52,54,56,58,60,62,64,66,68,70,72,74,76,78,80,82,84,86,88,90,92,94,96,98,100,102" {
			t.Errorf("nic-node-unknown = %+v\nwant info %q on node 0's CPUs", f, want)
		}
	}
	if len(got) != 1 {
		t.Errorf("%d nic-node-unknown findings, want 1: %+v", len(got), got)
	}
	if fs := byCheck(doc, audit.CheckQueuesVsCPUs); len(fs) != 1 || !strings.Contains(fs[0].Message, "0000:19:00.0 has 63 queues for 52 local online CPUs") {
		t.Errorf("queues-vs-cpus = %+v, want 63 queues for node 0's 52 CPUs", fs)
	}
}
