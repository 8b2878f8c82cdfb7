package nicuse

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// netnsHost is netHost with a namespace's links recorded for process
// 4242 (net:[4026532201]; the host's is net:[4026531840], which it
// calls id 0): vethab12 (ifindex 9) on the host, the peer of a veth
// in it, and a VF 0000:3b:02.1 of ens1f0's PCI function 0000:3b:00.0,
// on node 1.
func netnsHost(t *testing.T, links []hosttest.NsLink, podRoutes []hosttest.Route, socks []hosttest.Socket) string {
	t.Helper()
	root := netHost(t)
	mk := func(p, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(p, target string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("sys/devices/virtual/net/vethab12/ifindex", "9\n")
	ln("sys/class/net/vethab12", "../../devices/virtual/net/vethab12")
	vf := "sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:02.1"
	mk(vf+"/numa_node", "1\n")
	ln(vf+"/physfn", "../0000:3b:00.0")
	ln("sys/bus/pci/devices/0000:3b:02.1", "../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:02.1")
	ln("proc/1/ns/net", "net:[4026531840]")
	ln("proc/4242/ns/net", "net:[4026532201]")
	hosttest.WriteNsLinks(t, root, 4026532201, "net:[4026531840]", 0, links)
	hosttest.WriteSockets(t, root, 4242, socks)
	hosttest.WriteRoutes(t, filepath.Join(root, "proc/4242/net"), podRoutes, nil)
	return root
}

// TestOfNetns follows a process's interfaces out of its namespace, from
// the recorded links: a veth through its peer and the host's route, a
// macvlan or ipvlan to its lower device, a VF to its PF.
func TestOfNetns(t *testing.T) {
	t.Parallel()
	lo := hosttest.NsLink{Index: 1, Name: "lo", Flags: 0x8 | 0x1} // IFF_LOOPBACK|IFF_UP
	veth := hosttest.NsLink{Index: 2, Name: "eth0", Kind: "veth", Link: 9, HasNetNSID: true, NetNSID: 0}
	podRoutes := func(dev string) []hosttest.Route {
		return []hosttest.Route{{Iface: dev, Dst: "0.0.0.0/0", Gateway: "172.16.0.1"}, {Iface: dev, Dst: "172.16.0.0/24"}}
	}
	conn := []hosttest.Socket{{Proto: "udp", Local: "172.16.0.2:4000", Remote: "10.0.0.9:9", Inode: 77}}
	listen := []hosttest.Socket{{Proto: "tcp", Local: "0.0.0.0:5201", Inode: 78}}
	tests := []struct {
		name  string
		links []hosttest.NsLink
		dev   string
		socks []hosttest.Socket
		want  Attribution // "" for unknown
		nics  []string
		how   string
	}{
		{"veth, connected", []hosttest.NsLink{lo, veth}, "eth0", conn, AttributionSockets, []string{"eth1"},
			"in netns 4026532201: routed through eth0 (0.0.0.0/0 via 172.16.0.1): eth0 → host peer vethab12 → route to 10.0.0.9 through eth1 (10.0.0.0/24)"},
		{"veth, listening on every address", []hosttest.NsLink{lo, veth}, "eth0", listen, AttributionSockets, []string{"ens1f0"},
			"bound to every address, taken as reached through its netns's default route: default route 0.0.0.0/0 via 172.16.0.1 dev eth0 → eth0 → host peer vethab12 → default route 0.0.0.0/0 via 10.1.0.1 dev ens1f0"},
		{"macvlan on the host's ens2f0", []hosttest.NsLink{lo, {Index: 4, Name: "net1", Kind: "macvlan", Link: 3, HasNetNSID: true}}, "net1", conn,
			AttributionSockets, []string{"ens2f0"}, "macvlan net1 on the host's ens2f0"},
		{"ipvlan on the host's eth1", []hosttest.NsLink{lo, {Index: 4, Name: "ipv0", Kind: "ipvlan", Link: 4, HasNetNSID: true}}, "ipv0", conn,
			AttributionSockets, []string{"eth1"}, "ipvlan ipv0 on the host's eth1"},
		{"VLAN on a macvlan in the namespace", []hosttest.NsLink{lo, {Index: 4, Name: "net1", Kind: "macvlan", Link: 3, HasNetNSID: true},
			{Index: 5, Name: "net1.7", Kind: "vlan", Link: 4}}, "net1.7", conn,
			AttributionSockets, []string{"ens2f0"}, "vlan net1.7 on net1 → macvlan net1 on the host's ens2f0"},
		{"SR-IOV VF", []hosttest.NsLink{lo, {Index: 6, Name: "net1", ParentDev: "0000:3b:02.1", ParentBus: "pci"}}, "net1", conn,
			AttributionSockets, []string{"ens1f0"}, "net1 is VF 0000:3b:02.1 (its own numa_node 1) of PF 0000:3b:00.0 (ens1f0)"},
		{"veth whose peer is in a third namespace", []hosttest.NsLink{lo, {Index: 2, Name: "eth0", Kind: "veth", Link: 9, HasNetNSID: true, NetNSID: 3}}, "eth0", conn,
			"", nil, "eth0's link 9 is in netns id 3, not the host's (id 0)"},
		{"veth whose peer is gone from the host", []hosttest.NsLink{lo, {Index: 2, Name: "eth0", Kind: "veth", Link: 99, HasNetNSID: true}}, "eth0", conn,
			"", nil, "eth0's link on the host: interface index 99: no interface has that index"},
		{"PCI device that is no VF", []hosttest.NsLink{lo, {Index: 6, Name: "net1", ParentDev: "0000:3b:00.0", ParentBus: "pci"}}, "net1", conn,
			"", nil, "net1 is PCI function 0000:3b:00.0 (numa_node 1), no VF (no physfn)"},
		{"device without a parent named", []hosttest.NsLink{lo, {Index: 6, Name: "net1"}}, "net1", conn, "", nil,
			"net1 (a device with no parent device named (IFLA_PARENT_DEV_NAME, Linux 5.17 and later)) leads to no interface"},
		{"interface the dump lacks", []hosttest.NsLink{lo}, "eth0", conn, "", nil, "eth0 is not among the links of netns 4026532201"},
		{"dummy device", []hosttest.NsLink{lo, {Index: 2, Name: "eth0", Kind: "dummy"}}, "eth0", conn, "", nil,
			"eth0 (dummy) leads to no interface of the host that can be followed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := netnsHost(t, tt.links, podRoutes(tt.dev), tt.socks)
			fsys := hosttest.Open(t, root)
			h, err := topology.Read(fsys)
			if err != nil {
				t.Fatal(err)
			}
			n, err := proc.ReadNet(fsys, 4242)
			if err != nil {
				t.Fatal(err)
			}
			u := Of(h, &proc.Process{PID: 4242, Comm: "iperf3", Net: n})
			if u.Attribution.Or("") != tt.want || tt.want == "" && u.Attribution.Why().Detail != u.How[0] || !slices.Equal(u.NICs, append([]string{}, tt.nics...)) || u.Netns != "net:[4026532201]" {
				t.Errorf("Of = %s %v (netns %q), want %s %v; how %q", u.Attribution, u.NICs, u.Netns, tt.want, tt.nics, u.How)
			}
			if len(u.How) != 1 || !strings.Contains(u.How[0], tt.how) {
				t.Errorf("how %q, want one line holding %q", u.How, tt.how)
			}
		})
	}
}
