package irq

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestInferVirtioSNO: cnto-sno is a one-node VM without /sys/class/net
// whose only NIC is virtio_net on virtio1 (PCI 0000:01:00.0): IRQs 68
// "virtio1-config", 69 "virtio1-input.0" and 70 "virtio1-output.0" on
// chip PCI-MSIX-0000:01:00.0. It is inferred under its virtio device's
// name with its three IRQs; the other virtio devices (virtio0 gpu
// "control"/"cursor", virtio2 "virtqueues", virtio3 blk "req.N",
// virtio5 console "input", virtio4 on the IO-APIC) are no NICs.
func TestInferVirtioSNO(t *testing.T) {
	realhosts.Require(t)
	c := realhosts.MustLookup(t, "cnto-sno")
	h, err := topology.Read(hosttest.Open(t, realhosts.Root(t, c)))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.NICs) != 1 {
		t.Fatalf("%d NICs, want virtio1 alone: %+v", len(h.NICs), h.NICs)
	}
	n := &h.NICs[0]
	if n.Name != "virtio1" || n.Virtio != "virtio1" || n.PCI != "0000:01:00.0" || !n.Inferred || n.PCIAbsent {
		t.Errorf("NIC = %s virtio %q PCI %q inferred %v absent %v, want virtio1 on 0000:01:00.0, inferred",
			n.Name, n.Virtio, n.PCI, n.Inferred, n.PCIAbsent)
	}
	if loc := h.Locality(n); loc.Node.Or(-1) != 0 || !unknown.Is(loc.Source, topology.LocalitySourceSingleNode) {
		t.Errorf("locality = node %v from %q, want node 0, the single node", loc.Node, loc.Source)
	}
	tab, err := Load(h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type vec struct {
		IRQ   int
		Queue int
		Dir   string
		Kind  Kind
	}
	var got []vec
	for _, q := range tab.ForNIC("virtio1") {
		got = append(got, vec{q.IRQ, q.Owner.Queue.Or(-1), string(q.Owner.Dir), q.Owner.Kind})
	}
	want := []vec{{68, -1, "", KindOther}, {69, 0, "rx", KindQueue}, {70, 0, "tx", KindQueue}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("virtio1's IRQs (-want +got):\n%s", diff)
	}
}

// TestInferTG3Master: cnto-master's two BCM5720 ports (tg3, PCI
// 0000:04:00.0 and .1, driver links to tg3 in the capture) each have five
// IRQs named by vector: "eno8303-tx-0" (2015) is vector 0, which carries
// tx ring 0 and the link, and "eno8303-rx-1".."rx-4" (2016-2019) are
// vectors 1-4 with rx rings 0-3; eno8403 likewise at 2020-2024.
func TestInferTG3Master(t *testing.T) {
	realhosts.Require(t)
	c := realhosts.MustLookup(t, "cnto-master")
	h, err := topology.Read(hosttest.Open(t, realhosts.Root(t, c)))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Load(h, Options{NICs: []string{"eno8303", "eno8403"}})
	if err != nil {
		t.Fatal(err)
	}
	type vec struct {
		IRQ   int
		Queue int
		Dir   string
	}
	for nic, first := range map[string]int{"eno8303": 2015, "eno8403": 2020} {
		n, _ := h.NICByName(nic)
		if n.Driver != "tg3" {
			t.Errorf("%s driver %q, want tg3 (its PCI function's driver link)", nic, n.Driver)
		}
		want := []vec{{first, 0, "tx"}}
		for ring := range 4 {
			want = append(want, vec{first + 1 + ring, ring, "rx"})
		}
		var got []vec
		for _, q := range tab.ForNIC(nic) {
			got = append(got, vec{q.IRQ, q.Owner.Queue.Or(-1), string(q.Owner.Dir)})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s's IRQs (-want +got):\n%s", nic, diff)
		}
	}
}
