package proc

import (
	"bytes"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Proto is a socket's transport protocol, for IPv4 and IPv6 alike.
type Proto string

// The protocols of the sockets read.
const (
	ProtoTCP Proto = "tcp"
	ProtoUDP Proto = "udp"
)

// Socket is one TCP or UDP socket, as a line of /proc/PID/net/tcp, tcp6,
// udp or udp6 shows it.
type Socket struct {
	Proto Proto
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
	case s.Proto == ProtoTCP && s.State == StateListen:
		return fmt.Sprintf("%s %s (listening)", s.Proto, local)
	}
	return string(s.Proto) + " " + local
}

// parseSockets parses a socket table: a header line, then one line per
// socket, "sl: local remote st tx:rx tr:when retrnsmt uid timeout inode
// ...", addresses in the kernel's hex (see parseHexAddr). proto is "tcp"
// or "udp"; v6 says whether the addresses are IPv6. Every line after the
// header must parse; an error names the file and the line.
func parseSockets(path string, proto Proto, v6 bool, b []byte) ([]Socket, error) {
	sc := newSocketScanner(path, proto, v6, nil)
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if err := sc.line(line); err != nil {
			return nil, err
		}
	}
	return sc.out, nil
}

// socketScanner parses a socket table a line at a time, in full only the
// sockets whose inode want holds (all when want is nil): a table holds
// every socket of the namespace, a process a few of them, and a busy
// host's table is read without holding it. Every line must still have
// the fields and an inode.
type socketScanner struct {
	path   string
	proto  Proto
	v6     bool
	want   map[uint64]bool
	lineNo int
	f      [][]byte
	out    []Socket
}

func newSocketScanner(path string, proto Proto, v6 bool, want map[uint64]bool) *socketScanner {
	return &socketScanner{path: path, proto: proto, v6: v6, want: want}
}

// line takes the next line of the table, without its newline.
func (sc *socketScanner) line(line []byte) error {
	sc.lineNo++
	if sc.lineNo == 1 {
		return nil // the header
	}
	sc.f = appendFields(sc.f[:0], line)
	f := sc.f
	if len(f) == 0 {
		return nil
	}
	if len(f) < 10 || f[0][len(f[0])-1] != ':' {
		return fmt.Errorf("read %s: line %d: %q is not a socket line (sl: local remote st ... inode)", sc.path, sc.lineNo, clip(line))
	}
	inode, err := strconv.ParseUint(string(f[9]), 10, 64)
	if err != nil {
		return fmt.Errorf("read %s: line %d: inode %q is not a number", sc.path, sc.lineNo, clip(f[9]))
	}
	if sc.want != nil && !sc.want[inode] {
		return nil
	}
	s, err := parseSocketFields(sc.proto, sc.v6, f)
	if err != nil {
		return fmt.Errorf("read %s: line %d: %w", sc.path, sc.lineNo, err)
	}
	s.Inode = inode
	sc.out = append(sc.out, s)
	return nil
}

// appendFields appends line's space-separated fields to f, without
// copying them.
func appendFields(f [][]byte, line []byte) [][]byte {
	for {
		i := 0
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
			i++
		}
		line = line[i:]
		if len(line) == 0 {
			return f
		}
		j := 0
		for j < len(line) && line[j] != ' ' && line[j] != '\t' && line[j] != '\r' {
			j++
		}
		f = append(f, line[:j])
		line = line[j:]
	}
}

func parseSocketLine(proto Proto, v6 bool, line []byte) (Socket, error) {
	socks, err := parseSockets("", proto, v6, append([]byte("header\n"), line...))
	if err != nil || len(socks) != 1 {
		return Socket{}, fmt.Errorf("%q: %v", clip(line), err)
	}
	return socks[0], nil
}

// parseSocketFields parses the fields of a socket line but its inode.
func parseSocketFields(proto Proto, v6 bool, f [][]byte) (Socket, error) {
	s := Socket{Proto: proto}
	var err error
	if s.Local, err = parseHexAddrPort(string(f[1]), v6); err != nil {
		return Socket{}, fmt.Errorf("local address: %w", err)
	}
	if s.Remote, err = parseHexAddrPort(string(f[2]), v6); err != nil {
		return Socket{}, fmt.Errorf("remote address: %w", err)
	}
	st, err := strconv.ParseUint(string(f[3]), 16, 8)
	if err != nil {
		return Socket{}, fmt.Errorf("state %q is not a hex byte", clip(f[3]))
	}
	s.State = int(st)
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
