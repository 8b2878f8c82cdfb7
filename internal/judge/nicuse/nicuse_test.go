package nicuse

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// netHost is a copy of offline-2node (eth1 on node 0, ens1f0 and ens2f0
// on node 1) with a bond0 over ens2f0, a docker0 bridge with no port, and
// the routes and IPv6 addresses of its namespace, as test input: the
// committed tree has none.
func netHost(t *testing.T) string {
	t.Helper()
	root := hosttest.Copy(t, "offline-2node")
	for _, l := range []struct{ dir, link, target string }{
		{"sys/devices/virtual/net/bond0", "lower_ens2f0", "../../../pci0000:5d/0000:5d:00.0/0000:5e:00.0/net/ens2f0"},
		{"sys/devices/virtual/net/docker0", "", ""},
	} {
		if err := os.MkdirAll(filepath.Join(root, l.dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if l.link != "" {
			if err := os.Symlink(l.target, filepath.Join(root, l.dir, l.link)); err != nil {
				t.Fatal(err)
			}
		}
		name := filepath.Base(l.dir)
		if err := os.Symlink("../../devices/virtual/net/"+name, filepath.Join(root, "sys/class/net", name)); err != nil {
			t.Fatal(err)
		}
	}
	hosttest.WriteRoutes(t, filepath.Join(root, "proc/net"), []hosttest.Route{
		{Iface: "ens1f0", Dst: "0.0.0.0/0", Gateway: "10.1.0.1", Metric: 100},
		{Iface: "eth1", Dst: "10.0.0.0/24", Metric: 100},
		{Iface: "ens1f0", Dst: "10.1.0.0/24", Metric: 100},
		{Iface: "bond0", Dst: "10.2.0.0/24"},
		{Iface: "docker0", Dst: "172.17.0.0/16"},
		{Iface: "ens1f0", Dst: "2001:db8:1::/64", Metric: 256},
		{Iface: "eth1", Dst: "::/0", Gateway: "fe80::1", Metric: 1024},
		{Iface: "lo", Dst: "2001:db8:1::2/128", Flags: 0x80000000},
	}, []string{"ens1f0 2001:db8:1::2/64", "lo ::1/128"})
	return root
}

func TestOf(t *testing.T) {
	t.Parallel()
	root := netHost(t)
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		give []hosttest.Socket
		want Attribution // "" for unknown
		nics []string
		how  []string // substrings, one per line of How, in order
	}{
		{"listener on a NIC's address", []hosttest.Socket{{Proto: "tcp", Local: "10.1.0.2:5201"}},
			AttributionSockets, []string{"ens1f0"}, []string{"tcp 10.1.0.2:5201 (listening): 10.1.0.2 is ens1f0's address (10.1.0.0/24 dev ens1f0)"}},
		{"wildcard listener", []hosttest.Socket{{Proto: "tcp", Local: "0.0.0.0:5201"}},
			AttributionAny, nil, []string{"tcp *:5201 (listening): bound to every address: any NIC"}},
		{"wildcard listener and its connections", []hosttest.Socket{
			{Proto: "tcp", Local: "0.0.0.0:5201"},
			{Proto: "tcp", Local: "10.1.0.2:5201", Remote: "10.9.9.9:40000"},
			{Proto: "tcp", Local: "10.1.0.2:5201", Remote: "10.9.9.8:40002"},
		}, AttributionSockets, []string{"ens1f0"}, []string{
			"tcp 10.1.0.2:5201 -> 10.9.9.9:40000: routed through ens1f0 (0.0.0.0/0 via 10.1.0.1) (and 1 more like it)",
			"tcp *:5201 (listening): bound to every address"}},
		{"bound to one NIC, routed through another", []hosttest.Socket{{Proto: "udp", Local: "10.0.0.2:9000", Remote: "10.1.0.9:9001"}},
			AttributionSockets, []string{"ens1f0", "eth1"}, []string{"routed through ens1f0 (10.1.0.0/24); 10.0.0.2 is eth1's address"}},
		{"loopback", []hosttest.Socket{{Proto: "tcp", Local: "127.0.0.1:5201"}, {Proto: "tcp", Local: "10.1.0.2:5201", Remote: "10.1.0.2:41000"}},
			AttributionLoopback, nil, []string{"stays on the host"}},
		// Its reason first: the wildcard listener, not the loopback
		// connection (a local client of a server).
		{"wildcard listener with a loopback client", []hosttest.Socket{
			{Proto: "tcp", Local: "0.0.0.0:5201"},
			{Proto: "tcp", Local: "127.0.0.1:5201", Remote: "127.0.0.1:41000"},
		}, AttributionAny, nil, []string{"tcp *:5201 (listening): bound to every address", "tcp 127.0.0.1:5201 -> 127.0.0.1:41000: stays on the host"}},
		{"a bond over a NIC", []hosttest.Socket{{Proto: "tcp", Local: "10.2.0.2:80"}},
			AttributionSockets, []string{"ens2f0"}, []string{"10.2.0.2 is bond0's address (10.2.0.0/24 dev bond0), which is on ens2f0"}},
		{"a bridge with no NIC", []hosttest.Socket{{Proto: "tcp", Local: "172.17.0.1:80"}},
			"", nil, []string{"docker0 has no NIC of this host below it"}},
		{"an address no route holds", []hosttest.Socket{{Proto: "tcp", Local: "192.168.7.7:80"}},
			"", nil, []string{"no on-link route holds 192.168.7.7"}},
		{"IPv6 listener", []hosttest.Socket{{Proto: "tcp", Local: "[2001:db8:1::2]:5201"}},
			AttributionSockets, []string{"ens1f0"}, []string{"2001:db8:1::2 is ens1f0's address (if_inet6)"}},
		{"IPv6 connection through the default route", []hosttest.Socket{{Proto: "tcp", Local: "[2001:db8:1::2]:5201", Remote: "[2001:db8:9::1]:40000"}},
			AttributionSockets, []string{"ens1f0", "eth1"}, []string{"routed through eth1 (::/0 via fe80::1); 2001:db8:1::2 is ens1f0's address"}},
		{"IPv4-mapped listener", []hosttest.Socket{{Proto: "tcp", Local: "[::ffff:10.1.0.2]:5201"}},
			AttributionSockets, []string{"ens1f0"}, []string{"10.1.0.2 is ens1f0's address"}},
		{"multicast receiver", []hosttest.Socket{{Proto: "udp", Local: "239.1.1.1:5000"}},
			AttributionAny, nil, []string{"multicast group"}},
		{"no sockets", nil, "", nil, []string{"no TCP or UDP sockets"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pid := 5000 + i
			if err := os.MkdirAll(filepath.Join(root, "proc", strconv.Itoa(pid), "fd"), 0o755); err != nil {
				t.Fatal(err)
			}
			for j := range tt.give {
				tt.give[j].Inode = uint64(100*pid + j)
			}
			if tt.give != nil {
				hosttest.WriteSockets(t, root, pid, tt.give)
			}
			n, err := proc.ReadNet(hosttest.Open(t, root), pid)
			if err != nil {
				t.Fatal(err)
			}
			u := Of(h, &proc.Process{PID: pid, Comm: "iperf3", Net: n})
			if u.Attribution.Or("") != tt.want || tt.want == "" && u.Attribution.Why().Detail != u.How[0] || !slices.Equal(u.NICs, append([]string{}, tt.nics...)) {
				t.Errorf("Of = %s %v, want %s %v; how %q", u.Attribution, u.NICs, tt.want, tt.nics, u.How)
			}
			if len(u.How) != len(tt.how) {
				t.Fatalf("how %q, want %d lines like %q", u.How, len(tt.how), tt.how)
			}
			for k, w := range tt.how {
				if !strings.Contains(u.How[k], w) {
					t.Errorf("how[%d] = %q, want it to hold %q", k, u.How[k], w)
				}
			}
		})
	}
}

// TestOfUnknown: what cannot be read is said, never guessed.
func TestOfUnknown(t *testing.T) {
	t.Parallel()
	root := netHost(t)
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	hosttest.WriteSockets(t, root, 4242, []hosttest.Socket{{Proto: "tcp", Local: "10.1.0.2:5201", Inode: 9}})
	read := func() Use {
		n, err := proc.ReadNet(hosttest.Open(t, root), 4242)
		if err != nil {
			t.Fatal(err)
		}
		return Of(h, &proc.Process{PID: 4242, Comm: "iperf3", Net: n})
	}
	if u := read(); !u.Known() || !u.Uses("ens1f0") || u.Uses("eth1") || u.Summary() != "ens1f0" {
		t.Fatalf("as written: %+v", u)
	}
	// Another network namespace than PID 1's.
	for pid, ns := range map[string]string{"4242": "net:[4026532201]", "1": "net:[4026531840]"} {
		if err := os.MkdirAll(filepath.Join(root, "proc", pid, "ns"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(ns, filepath.Join(root, "proc", pid, "ns", "net")); err != nil {
			t.Fatal(err)
		}
	}
	// Its links were not recorded: where its interfaces lead is unknown.
	if u := read(); u.Known() || len(u.How) != 1 || u.Netns != "net:[4026532201]" || !strings.Contains(u.How[0], "irqnuma/netns/4026532201/links not captured") {
		t.Errorf("other namespace: %+v", u)
	}
	if err := os.RemoveAll(filepath.Join(root, "proc", "1")); err != nil {
		t.Fatal(err)
	}
	// No route file: the owner of an IPv4 address is unknown.
	if err := os.Remove(filepath.Join(root, "proc/net/route")); err != nil {
		t.Fatal(err)
	}
	if u := read(); u.Attribution.Known() || !strings.Contains(u.How[0], "no /proc/net/route") {
		t.Errorf("no route file: %+v", u)
	}
	// No tables at all, then no fd folder.
	if err := os.RemoveAll(filepath.Join(root, "proc/4242/net")); err != nil {
		t.Fatal(err)
	}
	if u := read(); u.Attribution.Known() || !strings.Contains(u.How[0], "no tcp, tcp6, udp or udp6") {
		t.Errorf("no tables: %+v", u)
	}
	if err := os.RemoveAll(filepath.Join(root, "proc/4242/fd")); err != nil {
		t.Fatal(err)
	}
	if u := read(); u.Attribution.Known() || !strings.Contains(u.How[0], "fd") || u.Summary() != "unknown" {
		t.Errorf("no fd: %+v", u)
	}
	if u := Of(h, &proc.Process{PID: 1}); u.Attribution.Known() || len(u.How) != 1 {
		t.Errorf("Net not read: %+v", u)
	}
}

// TestHowBounded: a server with many kinds of sockets gets maxHow lines
// and a count of the rest.
func TestHowBounded(t *testing.T) {
	t.Parallel()
	root := netHost(t)
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	var socks []hosttest.Socket
	for i := range 20 {
		socks = append(socks, hosttest.Socket{Proto: "tcp", Local: "10.1.0." + strconv.Itoa(10+i) + ":80", Inode: uint64(i + 1)})
	}
	hosttest.WriteSockets(t, root, 4242, socks)
	n, err := proc.ReadNet(hosttest.Open(t, root), 4242)
	if err != nil {
		t.Fatal(err)
	}
	u := Of(h, &proc.Process{PID: 4242, Net: n})
	if len(u.How) != maxHow+1 || u.How[maxHow] != "and 14 more sockets" {
		t.Errorf("how %q", u.How)
	}
}
