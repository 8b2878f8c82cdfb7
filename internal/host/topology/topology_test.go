package topology

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func list(t *testing.T, s string) cpuset.Set {
	t.Helper()
	set, err := cpuset.ParseList(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestSeed(t *testing.T) {
	h, err := Read(hosttest.Open(t, hosttest.Root("seed")))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.NodeIDs(); !got.Equal(cpuset.New(0, 1)) {
		t.Errorf("nodes %s, want 0-1", got)
	}
	n1, _ := h.Node(1)
	if !n1.CPUs.Equal(list(t, "16-31,48-63")) || n1.MemoryBytes.Or(-1) <= 0 || !cmp.Equal(n1.Distances.Or(nil), []int{21, 10}) {
		t.Errorf("node 1 = %+v", n1)
	}
	c50, _ := h.CPU(50)
	want := CPU{ID: 50, Online: true, Node: unknown.Of(1), Package: unknown.Of(1), Core: unknown.Of(18), Siblings: unknown.Of(cpuset.New(18, 50)), L3: unknown.Of(16)}
	if diff := cmp.Diff(want, c50, exportAll); diff != "" {
		t.Errorf("CPU 50 (-want +got):\n%s", diff)
	}
	nic, ok := h.NICByName("eth0")
	if !ok {
		t.Fatal("no eth0")
	}
	if nic.PCI != "0000:98:00.0" || nic.Driver != "mlx5_core" || nic.Node.Or(-1) != 1 || nic.RxQueues.Or(-1) != 16 || nic.TxQueues.Or(-1) != 16 ||
		nic.SpeedMbps.Or(-1) != 100000 || len(nic.MSIIRQs.Or(nil)) != 17 {
		t.Errorf("eth0 = %+v", nic)
	}
	if loc := h.Locality(nic); loc.Node.Or(-1) != 1 || !unknown.Is(loc.Source, LocalitySourceNumaNode) || !loc.CPUs.Equal(n1.CPUs) {
		t.Errorf("eth0 locality = %+v", loc)
	}
	if got := len(h.Cores(n1.CPUs)); got != 16 {
		t.Errorf("node 1 has %d cores, want 16", got)
	}
}

func TestOfflineCPUs(t *testing.T) {
	h, err := Read(hosttest.Open(t, hosttest.Root("offline-2node")))
	if err != nil {
		t.Fatal(err)
	}
	if want := list(t, "0,2-4,6-8,10-15"); !h.Online.Equal(want) {
		t.Errorf("online %s, want %s", h.Online, want)
	}
	c9, _ := h.CPU(9)
	if c9.Online || c9.Core.Or(-1) != -1 || c9.Package.Or(-1) != -1 || c9.Node.Or(-1) != 1 {
		t.Errorf("offline CPU 9 = %+v, want offline, core and package unknown, node 1 from its link", c9)
	}
	// CPU 13's sibling (9) is offline, and the kernel drops an offline
	// CPU from its siblings' thread_siblings_list (x86's
	// remove_siblinginfo): the tree's says 13 alone, so CPU 13 is a core
	// of its own thread, named 13, the lowest of its siblings. (Core 9,
	// accepted too before, would be a core named by an offline CPU.)
	c13, _ := h.CPU(13)
	if !c13.Online || !c13.Siblings.Or(cpuset.Set{}).Equal(cpuset.New(13)) || c13.Core.Or(-1) != 13 || c13.Package.Or(-1) != 1 || c13.Node.Or(-1) != 1 {
		t.Errorf("CPU 13 = %+v, want online, siblings 13, core 13, package 1, node 1", c13)
	}
	if want := list(t, "10-11"); !h.IsolatedCPUs().Equal(want) {
		t.Errorf("isolated %s, want %s", h.IsolatedCPUs(), want)
	}
	// numa_node -1 with a local_cpulist narrower than the host.
	nic, _ := h.NICByName("ens2f0")
	if loc := h.Locality(nic); !unknown.Is(loc.Source, LocalitySourceLocalCPUList) || loc.Node.Or(-1) != 1 {
		t.Errorf("ens2f0 locality = %+v, want node 1 from local_cpulist", loc)
	}
}

func TestSingleNodeVM(t *testing.T) {
	h, err := Read(hosttest.Open(t, hosttest.Root("vm-virtio")))
	if err != nil {
		t.Fatal(err)
	}
	nic, ok := h.NICByName("eth0")
	if !ok {
		t.Fatal("no eth0")
	}
	if nic.Virtio != "virtio2" || nic.PCI != "0000:00:03.0" || nic.Driver != "virtio_net" || nic.Node.Or(-1) != -1 {
		t.Errorf("eth0 = %+v", nic)
	}
	if loc := h.Locality(nic); !unknown.Is(loc.Source, LocalitySourceSingleNode) || loc.Node.Or(-1) != 0 {
		t.Errorf("locality = %+v, want node 0 as the only node", loc)
	}
}

func TestL3Groups(t *testing.T) {
	h, err := Read(hosttest.Open(t, hosttest.Root("nps2")))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ cpu, l3 int }{{0, 0}, {3, 0}, {4, 4}, {21, 20}} {
		if got, _ := h.CPU(c.cpu); got.L3.Or(-1) != c.l3 {
			t.Errorf("CPU %d L3 = %v, want %d", c.cpu, got.L3, c.l3)
		}
	}
	if got, _ := h.CPU(20); got.Package.Or(-1) != 1 {
		t.Errorf("CPU 20 package = %v, want 1", got.Package)
	}
}

func TestReadErrors(t *testing.T) {
	if _, err := Read(hosttest.Open(t, "/nonexistent")); err == nil {
		t.Error("Read(/nonexistent) succeeded")
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sys/devices/system/cpu"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(hosttest.Open(t, root)); err == nil {
		t.Error("Read of a tree without CPUs succeeded")
	}
	if err := os.WriteFile(filepath.Join(root, "sys/devices/system/cpu/online"), []byte("0-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatalf("Read with only cpu/online: %v", err)
	}
	if len(h.Nodes) != 0 || len(h.Notes) == 0 {
		t.Errorf("nodes %v notes %v: want no nodes and a note saying so", h.Nodes, h.Notes)
	}
}

// TestNamePCIDevices names a NIC from the tree's own pci.ids, from the
// function's ids when the tree has no modalias.
func TestNamePCIDevices(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	ids := filepath.Join(root, "usr/share/misc/pci.ids")
	if err := os.MkdirAll(filepath.Dir(ids), 0o755); err != nil {
		t.Fatal(err)
	}
	db := "# test pci.ids\n15b3  Mellanox Technologies\n\t101d  MT2892 Family [ConnectX-6 Dx]\n"
	if err := os.WriteFile(ids, []byte(db), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	h.NamePCIDevices()
	nic, _ := h.NICByName("eth0")
	if nic.Vendor != "Mellanox Technologies" || nic.Product != "MT2892 Family [ConnectX-6 Dx]" {
		t.Errorf("eth0 named %q %q, want Mellanox's ConnectX-6 Dx (notes %v)", nic.Vendor, nic.Product, h.Notes)
	}
}

// TestScanPCIIDs reads only the wanted names, skips subsystems and the
// class section, and stops past the last wanted vendor.
func TestScanPCIIDs(t *testing.T) {
	db := `# pci.ids
#	comment lines are skipped
1000  Broadcom / LSI
	0001  53c810
15b3  Mellanox Technologies
	1017  MT27800 Family [ConnectX-5]
	101d  MT2892 Family [ConnectX-6 Dx]
		15b3 0016  ConnectX-6 Dx EN adapter card
1af4  Red Hat, Inc.
	1041  Virtio 1.0 network device
8086  Intel Corporation
	1572  Ethernet Controller X710 for 10GbE SFP+
C 02  Network controller
	00  Ethernet controller
`
	tests := []struct {
		give        []pciID
		wantVendors map[uint16]string
		wantDevices map[pciID]string
	}{
		{
			give:        []pciID{{0x15b3, 0x101d}, {0x1af4, 0x1041}},
			wantVendors: map[uint16]string{0x15b3: "Mellanox Technologies", 0x1af4: "Red Hat, Inc."},
			wantDevices: map[pciID]string{{0x15b3, 0x101d}: "MT2892 Family [ConnectX-6 Dx]", {0x1af4, 0x1041}: "Virtio 1.0 network device"},
		},
		{
			give:        []pciID{{0x15b3, 0x9999}, {0x0002, 0x0001}},
			wantVendors: map[uint16]string{0x15b3: "Mellanox Technologies"},
			wantDevices: map[pciID]string{},
		},
		{
			give:        []pciID{{0x8086, 0x1572}},
			wantVendors: map[uint16]string{0x8086: "Intel Corporation"},
			wantDevices: map[pciID]string{{0x8086, 0x1572}: "Ethernet Controller X710 for 10GbE SFP+"},
		},
	}
	for _, tt := range tests {
		want := map[pciID]bool{}
		for _, id := range tt.give {
			want[id] = true
		}
		v, d, err := scanPCIIDs(strings.NewReader(db), want)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.wantVendors, v); diff != "" {
			t.Errorf("scanPCIIDs(%v) vendors (-want +got):\n%s", tt.give, diff)
		}
		if diff := cmp.Diff(tt.wantDevices, d); diff != "" {
			t.Errorf("scanPCIIDs(%v) devices (-want +got):\n%s", tt.give, diff)
		}
	}
}

// TestNamePCIDevicesGzip: hwdata's compressed database is read too.
func TestNamePCIDevicesGzip(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	ids := filepath.Join(root, "usr/share/hwdata/pci.ids.gz")
	if err := os.MkdirAll(filepath.Dir(ids), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, "15b3  Mellanox Technologies\n\t101d  MT2892 Family [ConnectX-6 Dx]\n")
	zw.Close()
	if err := os.WriteFile(ids, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	h.NamePCIDevices()
	nic, _ := h.NICByName("eth0")
	if nic.Vendor != "Mellanox Technologies" || nic.Product != "MT2892 Family [ConnectX-6 Dx]" {
		t.Errorf("eth0 named %q %q from pci.ids.gz (notes %v)", nic.Vendor, nic.Product, h.Notes)
	}
}

// BenchmarkNamePCIDevices names the live host's NICs from its installed
// pci.ids (Debian's pciutils or hwdata).
func BenchmarkNamePCIDevices(b *testing.B) {
	h, err := Read(hosttest.Open(b, "/"))
	if err != nil || len(h.NICs) == 0 {
		b.Skip("no live NICs")
	}
	found := false
	for _, p := range PCIIDsPaths {
		if _, err := os.Stat("/" + p); err == nil {
			found = true
		}
	}
	if !found {
		b.Skip("no pci.ids installed")
	}
	for b.Loop() {
		h.NamePCIDevices()
	}
}

// exportAll has cmp compare unknown.Values by what they hold, reason
// included.
var exportAll = cmp.Exporter(func(reflect.Type) bool { return true })
