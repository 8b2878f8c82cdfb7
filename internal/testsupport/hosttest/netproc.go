package hosttest

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Socket is a TCP or UDP socket a test gives a process (WriteSockets).
type Socket struct {
	Proto  string // "tcp" or "udp"
	Local  string // "192.0.2.2:5201", "[::]:5201", "0.0.0.0:5201"
	Remote string // the peer; "" when not connected
	// State is the st column; 0 means 10 (listen) for an unconnected TCP
	// socket, 1 (established) for a connected one, 7 for an unconnected
	// UDP socket.
	State int
	Inode uint64
}

// Route is a route a test gives a network namespace (WriteRoutes).
type Route struct {
	Iface   string // "" for a route without a device ("*" in route)
	Dst     string // "192.0.2.0/24", "2001:db8::/64"
	Gateway string // "" for a route on the link
	Metric  uint32
	Flags   uint32 // extra RTF_* flags (RTF_UP and RTF_GATEWAY are set from the fields)
}

// Headers of the socket tables, as Linux 6.x prints them.
const (
	tcpHeader  = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"
	tcp6Header = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"
	udpHeader  = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops"
	udp6Header = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops"
)

// hexAddr is an address as the socket tables and /proc/net/route print
// it on a little-endian host: each 32-bit word of the network-order
// address printed as a number, so its bytes come out reversed.
func hexAddr(a netip.Addr, v6 bool) string {
	if v6 && a.Is4() {
		a = netip.AddrFrom16(a.As16())
	}
	b := a.AsSlice()
	var s strings.Builder
	for w := 0; w < len(b)/4; w++ {
		fmt.Fprintf(&s, "%02X%02X%02X%02X", b[4*w+3], b[4*w+2], b[4*w+1], b[4*w])
	}
	return s.String()
}

// SocketLine is the line of a socket table for s, at slot sl, as the
// kernel prints it (tcp4_seq_show, tcp6_seq_show, udp4_format_sock,
// udp6_sock_seq_show), padded as it pads the IPv4 tables; v6 says
// which table.
func SocketLine(t testing.TB, sl int, s Socket, v6 bool) string {
	t.Helper()
	local, err := netip.ParseAddrPort(s.Local)
	if err != nil {
		t.Fatalf("socket %+v: %v", s, err)
	}
	remote := netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	if v6 {
		remote = netip.AddrPortFrom(netip.IPv6Unspecified(), 0)
	}
	if s.Remote != "" {
		if remote, err = netip.ParseAddrPort(s.Remote); err != nil {
			t.Fatalf("socket %+v: %v", s, err)
		}
	}
	st := s.State
	switch {
	case st != 0:
	case s.Proto == "tcp" && s.Remote == "":
		st = 10
	case s.Remote != "":
		st = 1
	default:
		st = 7
	}
	addrs := fmt.Sprintf("%s:%04X %s:%04X %02X", hexAddr(local.Addr(), v6), local.Port(), hexAddr(remote.Addr(), v6), remote.Port(), st)
	switch {
	case s.Proto == "tcp" && !v6:
		return fmt.Sprintf("%-149s", fmt.Sprintf("%4d: %s 00000000:00000000 00:00000000 00000000     0        0 %d 1 0000000000000000 100 0 0 10 0", sl, addrs, s.Inode))
	case s.Proto == "tcp":
		return fmt.Sprintf("%4d: %s 00000000:00000000 00:00000000 00000000     0        0 %d 1 0000000000000000 100 0 0 10 0", sl, addrs, s.Inode)
	case !v6:
		return fmt.Sprintf("%-127s", fmt.Sprintf("%5d: %s 00000000:00000000 00:00000000 00000000     0        0 %d 2 0000000000000000 0", sl, addrs, s.Inode))
	}
	return fmt.Sprintf("%5d: %s 00000000:00000000 00:00000000 00000000     0        0 %d 2 0000000000000000 0", sl, addrs, s.Inode)
}

// WriteSockets gives process pid of the tree at root its sockets: a
// /proc/PID/fd/N link to socket:[inode] each (from fd 3 on, after any
// already there), and a line each in /proc/PID/net/{tcp,tcp6,udp,udp6},
// which are written whole, with their headers, every table present: call
// it once per process. A socket whose local address is IPv6 goes in the
// "6" table.
func WriteSockets(t testing.TB, root string, pid int, socks []Socket) {
	t.Helper()
	base := filepath.Join(root, "proc", fmt.Sprint(pid))
	fdDir := filepath.Join(base, "fd")
	if err := os.MkdirAll(fdDir, 0o755); err != nil {
		t.Fatal(err)
	}
	tables := map[string][]string{"tcp": {tcpHeader}, "tcp6": {tcp6Header}, "udp": {udpHeader}, "udp6": {udp6Header}}
	ents, _ := os.ReadDir(fdDir)
	fd := 3 + len(ents)
	for _, s := range socks {
		local, err := netip.ParseAddrPort(s.Local)
		if err != nil {
			t.Fatalf("socket %+v: %v", s, err)
		}
		v6 := local.Addr().Is6()
		name := s.Proto
		if v6 {
			name += "6"
		}
		tables[name] = append(tables[name], SocketLine(t, len(tables[name])-1, s, v6))
		if err := os.Symlink(fmt.Sprintf("socket:[%d]", s.Inode), filepath.Join(fdDir, fmt.Sprint(fd))); err != nil {
			t.Fatal(err)
		}
		fd++
	}
	for name, lines := range tables {
		putFile(t, filepath.Join(base, "net", name), strings.Join(lines, "\n")+"\n")
	}
}

// WriteRoutes writes the route, ipv6_route and if_inet6 files of a
// network namespace into dir ("proc/4242/net" or "proc/net" under the
// root): the IPv4 routes to route, the IPv6 ones to ipv6_route, and
// addrs ("eth0 2001:db8::2/64") to if_inet6, in the kernel's formats
// (fib_route_seq_show, ipv6_route_native_seq_show, if6_seq_show).
func WriteRoutes(t testing.TB, dir string, routes []Route, addrs []string) {
	t.Helper()
	v4 := []string{fmt.Sprintf("%-127s", "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT")}
	var v6 []string
	for _, r := range routes {
		dst, err := netip.ParsePrefix(r.Dst)
		if err != nil {
			t.Fatalf("route %+v: %v", r, err)
		}
		flags := r.Flags | 0x1
		gw := netip.IPv4Unspecified()
		if dst.Addr().Is6() {
			gw = netip.IPv6Unspecified()
		}
		if r.Gateway != "" {
			flags |= 0x2
			gw = netip.MustParseAddr(r.Gateway)
		}
		if dst.Addr().Is4() {
			iface := r.Iface
			if iface == "" {
				iface = "*"
			}
			mask := netip.AddrFrom4([4]byte(net4Mask(dst.Bits())))
			if dst.Bits() == 32 {
				flags |= 0x4
			}
			v4 = append(v4, fmt.Sprintf("%-127s", fmt.Sprintf("%s\t%s\t%s\t%04X\t0\t0\t%d\t%s\t0\t0\t0",
				iface, hexAddr(dst.Addr(), false), hexAddr(gw, false), flags, r.Metric, hexAddr(mask, false))))
			continue
		}
		v6 = append(v6, fmt.Sprintf("%x %02x %x %02x %x %08x %08x %08x %08x %8s",
			dst.Addr().As16(), dst.Bits(), [16]byte{}, 0, gw.As16(), r.Metric, 1, 0, flags, r.Iface))
	}
	var a6 []string
	for i, a := range addrs {
		iface, p, _ := strings.Cut(a, " ")
		pfx := netip.MustParsePrefix(p)
		a6 = append(a6, fmt.Sprintf("%x %02x %02x %02x %02x %8s", pfx.Addr().As16(), i+2, pfx.Bits(), 0, 0x80, iface))
	}
	putFile(t, filepath.Join(dir, "route"), strings.Join(v4, "\n")+"\n")
	putFile(t, filepath.Join(dir, "ipv6_route"), joinLines(v6))
	putFile(t, filepath.Join(dir, "if_inet6"), joinLines(a6))
}

func net4Mask(bits int) []byte {
	var m [4]byte
	for i := range bits {
		m[i/8] |= 0x80 >> (i % 8)
	}
	return m[:]
}

func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

func putFile(t testing.TB, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o444); err != nil {
		t.Fatal(err)
	}
}
