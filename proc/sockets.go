package proc

import (
	"bytes"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Socket is one TCP or UDP socket, as a line of /proc/PID/net/tcp, tcp6,
// udp or udp6 shows it.
type Socket struct {
	Proto string // "tcp" or "udp", for IPv4 and IPv6 alike
	// Local is the address and port it is bound to: the unspecified
	// address (0.0.0.0 or ::) when bound to every address. An IPv4
	// address mapped into IPv6 (::ffff:192.0.2.2) is given as IPv4.
	Local netip.AddrPort
	// Remote is its peer; the unspecified address and port 0 when it is
	// not connected (a listener, an unconnected UDP socket).
	Remote netip.AddrPort
	// State is the st column: TCP's state (1 established, 10 listen);
	// for UDP 1 when connected, 7 when not.
	State int
	Inode uint64
}

// TCP states of the st column that irqnuma names.
const (
	StateEstablished = 1
	StateListen      = 10
)

// Connected reports whether the socket has a peer.
func (s Socket) Connected() bool {
	return s.Remote.Addr().IsValid() && !s.Remote.Addr().IsUnspecified()
}

// String is "tcp 192.0.2.2:5201 -> 198.51.100.9:40712" for a connected
// socket, "tcp 192.0.2.2:5201 (listening)" or "udp *:5353" otherwise.
func (s Socket) String() string {
	local := s.Local.String()
	if s.Local.Addr().IsUnspecified() {
		local = "*:" + strconv.Itoa(int(s.Local.Port()))
	}
	switch {
	case s.Connected():
		return fmt.Sprintf("%s %s -> %s", s.Proto, local, s.Remote)
	case s.Proto == "tcp" && s.State == StateListen:
		return fmt.Sprintf("%s %s (listening)", s.Proto, local)
	}
	return s.Proto + " " + local
}

// parseSockets parses a socket table: a header line, then one line per
// socket, "sl: local remote st tx:rx tr:when retrnsmt uid timeout inode
// ...", addresses in the kernel's hex (see parseHexAddr). proto is "tcp"
// or "udp"; v6 says whether the addresses are IPv6. Every line after the
// header must parse; an error names the file and the line.
func parseSockets(path, proto string, v6 bool, b []byte) ([]Socket, error) {
	var out []Socket
	lineNo := 0
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		lineNo++
		if lineNo == 1 || len(bytes.TrimSpace(line)) == 0 {
			continue // the header
		}
		s, err := parseSocketLine(proto, v6, line)
		if err != nil {
			return nil, fmt.Errorf("read %s: line %d: %w", path, lineNo, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func parseSocketLine(proto string, v6 bool, line []byte) (Socket, error) {
	f := strings.Fields(string(line))
	if len(f) < 10 || !strings.HasSuffix(f[0], ":") {
		return Socket{}, fmt.Errorf("%q is not a socket line (sl: local remote st ... inode)", clip(line))
	}
	s := Socket{Proto: proto}
	var err error
	if s.Local, err = parseHexAddrPort(f[1], v6); err != nil {
		return Socket{}, fmt.Errorf("local address: %w", err)
	}
	if s.Remote, err = parseHexAddrPort(f[2], v6); err != nil {
		return Socket{}, fmt.Errorf("remote address: %w", err)
	}
	st, err := strconv.ParseUint(f[3], 16, 8)
	if err != nil {
		return Socket{}, fmt.Errorf("state %q is not a hex byte", clip([]byte(f[3])))
	}
	s.State = int(st)
	if s.Inode, err = strconv.ParseUint(f[9], 10, 64); err != nil {
		return Socket{}, fmt.Errorf("inode %q is not a number", clip([]byte(f[9])))
	}
	return s, nil
}

// parseHexAddrPort parses "0100007F:1451" (IPv4) or 32 hex digits and a
// port (IPv6): the address as the kernel prints it in the socket tables
// (each 32-bit word in the host's byte order), the port in hex.
func parseHexAddrPort(s string, v6 bool) (netip.AddrPort, error) {
	a, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("%q: want ADDRESS:PORT in hex", clip([]byte(s)))
	}
	addr, err := parseHexAddr(a, v6)
	if err != nil {
		return netip.AddrPort{}, err
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil || len(p) != 4 {
		return netip.AddrPort{}, fmt.Errorf("port %q: want 4 hex digits", clip([]byte(p)))
	}
	return netip.AddrPortFrom(addr, uint16(port)), nil
}

// parseHexAddr parses an address as /proc/net/{tcp,udp}{,6} and
// /proc/net/route print it: the kernel prints each 32-bit word of the
// network-order address as a number (%08X), so on a little-endian host
// (x86, arm64, riscv, ppc64le: every host irqnuma is built for but
// s390x) each word's bytes come out reversed: 127.0.0.1 is "0100007F".
// 8 hex digits are IPv4, 32 IPv6 (with v6 set); an IPv4-mapped IPv6
// address is returned as IPv4.
func parseHexAddr(s string, v6 bool) (netip.Addr, error) {
	want := 8
	if v6 {
		want = 32
	}
	if len(s) != want {
		return netip.Addr{}, fmt.Errorf("address %q: want %d hex digits", clip([]byte(s)), want)
	}
	var b [16]byte
	for w := 0; w < want/8; w++ {
		v, err := strconv.ParseUint(s[8*w:8*w+8], 16, 32)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("address %q is not hex", clip([]byte(s)))
		}
		b[4*w], b[4*w+1], b[4*w+2], b[4*w+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	if !v6 {
		return netip.AddrFrom4([4]byte(b[:4])), nil
	}
	return netip.AddrFrom16(b).Unmap(), nil
}
