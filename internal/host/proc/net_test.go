package proc

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// Lines of a Linux 6.18 VM's tables (trailing padding kept): a wildcard
// listener, a loopback connection in TIME_WAIT (inode 0), its routes
// and IPv6 addresses.
const (
	vmTCP = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode                                                     \n" +
		"   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 640 1 000000009d891a47 100 0 0 10 0                       \n" +
		"   1: 0100007F:94C7 0100007F:E4AE 06 00000000:00000000 03:000016AA 00000000     0        0 0 3 000000008e868442                                      \n"
	vmRoute = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT                                                       \n" +
		"eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0                                                                               \n" +
		"eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0                                                                               \n"
	vmIPv6Route = "fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n" +
		"00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000003 00000000 00000003     eth0\n" +
		"00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo\n" +
		"fd000000000000000000000000000002 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000003 00000000 80200001     eth0\n"
	vmIfInet6 = "00000000000000000000000000000001 01 80 10 80       lo\n" +
		"fe8000000000000000fc00fffe000001 04 40 20 80     eth0\n" +
		"fd000000000000000000000000000002 04 40 00 82     eth0\n"
)

func TestParseSocketsVM(t *testing.T) {
	got, err := parseSockets("proc/net/tcp", "tcp", false, []byte(vmTCP))
	if err != nil {
		t.Fatal(err)
	}
	want := []Socket{
		{Proto: "tcp", Local: netip.MustParseAddrPort("0.0.0.0:2024"), Remote: netip.MustParseAddrPort("0.0.0.0:0"), State: StateListen, Inode: 640},
		{Proto: "tcp", Local: netip.MustParseAddrPort("127.0.0.1:38087"), Remote: netip.MustParseAddrPort("127.0.0.1:58542"), State: 6},
	}
	if diff := cmpDiff(want, got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
		t.Errorf("parseSockets (-want +got):\n%s", diff)
	}
	if got[0].Connected() || !got[1].Connected() {
		t.Errorf("Connected: listener %v, connection %v", got[0].Connected(), got[1].Connected())
	}
	if s := got[0].String(); s != "tcp *:2024 (listening)" {
		t.Errorf("String() = %q", s)
	}
}

// TestSocketLinesRoundTrip: every table's lines as hosttest writes them
// (the kernel's formats) parse back to what was written, IPv4-mapped
// addresses as IPv4.
func TestSocketLinesRoundTrip(t *testing.T) {
	tests := []struct {
		give     hosttest.Socket
		v6       bool
		wantLoc  string
		wantRem  string
		wantStat int
	}{
		{hosttest.Socket{Proto: "tcp", Local: "192.0.2.2:5201", Inode: 7}, false, "192.0.2.2:5201", "0.0.0.0:0", 10},
		{hosttest.Socket{Proto: "tcp", Local: "[2001:db8::2]:5201", Remote: "[2001:db8::9]:40712", Inode: 8}, true, "[2001:db8::2]:5201", "[2001:db8::9]:40712", 1},
		{hosttest.Socket{Proto: "tcp", Local: "[::ffff:192.0.2.2]:5201", Remote: "[::ffff:198.51.100.9]:1", Inode: 9}, true, "192.0.2.2:5201", "198.51.100.9:1", 1},
		{hosttest.Socket{Proto: "udp", Local: "0.0.0.0:5353", Inode: 10}, false, "0.0.0.0:5353", "0.0.0.0:0", 7},
		{hosttest.Socket{Proto: "udp", Local: "[fe80::1]:546", Remote: "[fe80::2]:547", Inode: 11}, true, "[fe80::1]:546", "[fe80::2]:547", 1},
	}
	for _, tt := range tests {
		line := hosttest.SocketLine(t, 0, tt.give, tt.v6)
		got, err := parseSocketLine(Proto(tt.give.Proto), tt.v6, []byte(line))
		if err != nil {
			t.Fatalf("parseSocketLine(%q): %v", line, err)
		}
		if got.Local.String() != tt.wantLoc || got.Remote.String() != tt.wantRem || got.State != tt.wantStat || got.Inode != tt.give.Inode {
			t.Errorf("parseSocketLine(%q) = %+v, want %s -> %s st %d inode %d", line, got, tt.wantLoc, tt.wantRem, tt.wantStat, tt.give.Inode)
		}
	}
}

func TestParseSocketsRefuses(t *testing.T) {
	tests := []struct{ give, want string }{
		{"h\n   0: 0100007F:94C7 0100007F:E4AE 06 0:0 0:0 0 0 0\n", "not a socket line"},
		{"h\n   0: 0100007:94C7 0100007F:E4AE 06 0:0 0:0 0 0 0 5\n", "8 hex digits"},
		{"h\n   0: 0100007F:94C 0100007F:E4AE 06 0:0 0:0 0 0 0 5\n", "4 hex digits"},
		{"h\n   0: 0100007F:94C7 0100007F-E4AE 06 0:0 0:0 0 0 0 5\n", "ADDRESS:PORT"},
		{"h\n   0: 0100007F:94C7 0100007F:E4AE 6G 0:0 0:0 0 0 0 5\n", "state"},
		{"h\n   0: 0100007F:94C7 0100007F:E4AE 06 0:0 0:0 0 0 0 x\n", "inode"},
		{"h\nok\n   0: 0100007F:94C7 0100007F:E4AE 06 0:0 0:0 0 0 0 5\n", "line 2"},
	}
	for _, tt := range tests {
		_, err := parseSockets("proc/42/net/tcp", "tcp", false, []byte(tt.give))
		if err == nil || !strings.Contains(err.Error(), "proc/42/net/tcp") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseSockets(%q) = %v, want an error naming the file and %q", tt.give, err, tt.want)
		}
	}
}

func TestParseRoutesVM(t *testing.T) {
	r4, err := parseRoute("route", []byte(vmRoute))
	if err != nil {
		t.Fatal(err)
	}
	r6, err := parseIPv6Route("ipv6_route", []byte(vmIPv6Route))
	if err != nil {
		t.Fatal(err)
	}
	a6, err := parseIfInet6("if_inet6", []byte(vmIfInet6))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range append(r4, r6...) {
		got = append(got, routeString(r))
	}
	want := []string{
		"0.0.0.0/0 via 192.0.2.1 dev eth0 metric 0",
		"192.0.2.0/24 dev eth0 metric 0",
		"fd00::/64 dev eth0 metric 256",
		"::/0 via fd00::1 dev eth0 metric 1024",
		"::1/128 dev lo metric 0 local",
		"fd00::2/128 dev eth0 metric 0 local",
	}
	if diff := cmpDiff(want, got); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
	var addrs []string
	for _, a := range a6 {
		addrs = append(addrs, a.Iface+" "+a.Prefix.String())
	}
	if diff := cmpDiff([]string{"lo ::1/128", "eth0 fe80::fc:ff:fe00:1/64", "eth0 fd00::2/64"}, addrs); diff != "" {
		t.Errorf("if_inet6 (-want +got):\n%s", diff)
	}
}

func routeString(r Route) string {
	s := r.Dst.String()
	if r.Gateway.IsValid() {
		s += " via " + r.Gateway.String()
	}
	s += " dev " + r.Iface + " metric " + strconv.Itoa(int(r.Metric))
	if r.Local {
		s += " local"
	}
	if r.Reject {
		s += " reject"
	}
	return s
}

// TestRouteLinesRoundTrip: routes as hosttest writes them (the kernel's
// formats) parse back, blackholes and reject routes included.
func TestRouteLinesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	hosttest.WriteRoutes(t, dir, []hosttest.Route{
		{Iface: "eth1", Dst: "198.51.100.0/24", Metric: 100},
		{Iface: "eth0", Dst: "0.0.0.0/0", Gateway: "192.0.2.1", Metric: 50},
		{Dst: "203.0.113.0/24", Flags: rtfReject},
		{Iface: "eth0", Dst: "2001:db8::/64", Metric: 256},
		{Iface: "eth1", Dst: "::/0", Gateway: "fe80::1", Metric: 1024},
		{Dst: "2001:db8:9::/48", Flags: rtfReject},
	}, []string{"eth0 2001:db8::2/64"})
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	r4, err := parseRoute("route", read("route"))
	if err != nil {
		t.Fatal(err)
	}
	r6, err := parseIPv6Route("ipv6_route", read("ipv6_route"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range append(r4, r6...) {
		got = append(got, routeString(r))
	}
	want := []string{
		"198.51.100.0/24 dev eth1 metric 100",
		"0.0.0.0/0 via 192.0.2.1 dev eth0 metric 50",
		"203.0.113.0/24 dev  metric 0 reject",
		"2001:db8::/64 dev eth0 metric 256",
		"::/0 via fe80::1 dev eth1 metric 1024",
		"2001:db8:9::/48 dev  metric 0 reject",
	}
	if diff := cmpDiff(want, got); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
	a6, err := parseIfInet6("if_inet6", read("if_inet6"))
	if err != nil || len(a6) != 1 || a6[0].Iface != "eth0" || a6[0].Prefix != netip.MustParsePrefix("2001:db8::2/64") {
		t.Errorf("if_inet6 = %+v, %v", a6, err)
	}
}

func TestParseRoutesRefuse(t *testing.T) {
	tests := []struct {
		parse      func(string, []byte) ([]Route, error)
		give, want string
	}{
		{parseRoute, "h\neth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\n", "11 fields"},
		{parseRoute, "h\neth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FF00FF\t0\t0\t0\n", "not a prefix"},
		{parseRoute, "h\neth0\t010200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n", "outside its mask"},
		{parseRoute, "h\neth0\t000200C0\t00000000\t000G\t0\t0\t0\t00FFFFFF\t0\t0\t0\n", "flags"},
		{parseIPv6Route, "fd00 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001 eth0\n", "32 hex digits"},
		{parseIPv6Route, "fd000000000000000000000000000000 81 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001 eth0\n", "prefix length"},
		{parseIPv6Route, "fd000000000000000000000000000001 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001 eth0\n", "outside /64"},
	}
	for _, tt := range tests {
		_, err := tt.parse("proc/net/x", []byte(tt.give))
		if err == nil || !strings.Contains(err.Error(), "proc/net/x") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parse(%q) = %v, want an error naming the file and %q", tt.give, err, tt.want)
		}
	}
	if _, err := parseIfInet6("if_inet6", []byte("fe80 04 40 20 80 eth0\n")); err == nil {
		t.Error("parseIfInet6 accepted a short address")
	}
}

// TestReadNet reads a process's sockets from its fd links and tables:
// only the sockets it holds, the routes and addresses of its namespace,
// and route files from /proc/net when the process folder lacks them.
func TestReadNet(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "proc", "4242")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	hosttest.WriteSockets(t, root, 4242, []hosttest.Socket{
		{Proto: "tcp", Local: "192.0.2.2:5201", Inode: 100},
		{Proto: "udp", Local: "[2001:db8::2]:9000", Remote: "[2001:db8::9]:9001", Inode: 101},
	})
	// Another process's socket in the same table, and a pipe fd.
	f, err := os.OpenFile(filepath.Join(base, "net", "tcp"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(hosttest.SocketLine(t, 1, hosttest.Socket{Proto: "tcp", Local: "192.0.2.2:22", Inode: 555}, false) + "\n")
		f.Close()
	}
	if err != nil {
		if err := os.Chmod(filepath.Join(base, "net", "tcp"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Fatal(err)
	}
	if err := os.Symlink("pipe:[77]", filepath.Join(base, "fd", "9")); err != nil {
		t.Fatal(err)
	}
	hosttest.WriteRoutes(t, filepath.Join(root, "proc", "net"), []hosttest.Route{{Iface: "eth0", Dst: "192.0.2.0/24"}}, []string{"eth0 2001:db8::2/64"})

	n, err := ReadNet(hosttest.Open(t, root), 4242)
	if err != nil {
		t.Fatal(err)
	}
	if socks := n.Sockets.Or(nil); !n.Sockets.Known() || len(socks) != 2 || socks[0].Inode != 100 || socks[1].Inode != 101 {
		t.Fatalf("sockets %+v (%s), want inodes 100 and 101", socks, n.Sockets.Why())
	}
	if !n.Routes4.Known() || len(n.Routes4.Or(nil)) != 1 || !n.Addrs6.Known() || len(n.Addrs6.Or(nil)) != 1 || !n.Routes6.Known() {
		t.Errorf("routes %+v %+v, addresses %+v", n.Routes4, n.Routes6, n.Addrs6)
	}
	if _, err := ReadNet(hosttest.Open(t, root), 4243); err == nil {
		t.Error("ReadNet of a process that does not exist: no error")
	}
	// No fd folder: unknown, and said.
	if err := os.RemoveAll(filepath.Join(base, "fd")); err != nil {
		t.Fatal(err)
	}
	if n, _ = ReadNet(hosttest.Open(t, root), 4242); n.Sockets.Known() || !strings.Contains(n.Sockets.Why().Detail, "fd") {
		t.Errorf("without fd: known %v, why %s", n.Sockets.Known(), n.Sockets.Why())
	}
}

// TestReadNetLive reads this test process, which holds a listening TCP
// socket on loopback.
func TestReadNetLive(t *testing.T) {
	if testing.Short() {
		t.Skip("live /proc (-short)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	defer ln.Close()
	n, err := ReadNet(hosttest.Open(t, "/"), os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	want := netip.MustParseAddrPort(ln.Addr().String())
	for _, s := range n.Sockets.Or(nil) {
		if s.Local == want && s.State == StateListen && s.Proto == ProtoTCP {
			return
		}
	}
	t.Errorf("this process's listener %s not among its sockets %+v (%s)", want, n.Sockets.Or(nil), n.Sockets.Why())
}

func FuzzParseSockets(f *testing.F) {
	f.Add([]byte(vmTCP), false)
	f.Add([]byte(tcp6Sample), true)
	f.Fuzz(func(t *testing.T, b []byte, v6 bool) {
		socks, err := parseSockets("tcp", "tcp", v6, b)
		if err != nil {
			return
		}
		for _, s := range socks {
			if !s.Local.IsValid() || !s.Remote.IsValid() || s.State > 255 {
				t.Fatalf("accepted %+v", s)
			}
			if v6 != s.Local.Addr().Is6() && !s.Local.Addr().Is4() {
				t.Fatalf("family of %+v", s)
			}
		}
	})
}

const tcp6Sample = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
	"   0: 00000000000000000000000000000000:1451 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 21356 1 0000000000000000 100 0 0 10 0\n" +
	"   1: 0000000000000000FFFF00000200C0C0:1451 0000000000000000FFFF0000096433C6:9F08 01 00000000:00000000 00:00000000 00000000     0        0 21357 1 0000000000000000 100 0 0 10 0\n"

func FuzzParseRoutes(f *testing.F) {
	f.Add([]byte(vmRoute), []byte(vmIPv6Route), []byte(vmIfInet6))
	f.Fuzz(func(t *testing.T, r4, r6, a6 []byte) {
		if rs, err := parseRoute("route", r4); err == nil {
			for _, r := range rs {
				if !r.Dst.IsValid() || !r.Dst.Addr().Is4() || r.Dst.Masked() != r.Dst {
					t.Fatalf("accepted %+v", r)
				}
			}
		}
		if rs, err := parseIPv6Route("ipv6_route", r6); err == nil {
			for _, r := range rs {
				if !r.Dst.IsValid() || !r.Dst.Addr().Is6() || r.Dst.Masked() != r.Dst {
					t.Fatalf("accepted %+v", r)
				}
			}
		}
		if as, err := parseIfInet6("if_inet6", a6); err == nil {
			for _, a := range as {
				if !a.Prefix.IsValid() || a.Iface == "" {
					t.Fatalf("accepted %+v", a)
				}
			}
		}
	})
}
