package flow

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/usage"
	"github.com/irqnuma/irqnuma/rsshash"
)

// Proto is the flow's transport protocol: a socket's (proc.Proto).
type Proto = proc.Proto

// The protocols a flow can be.
const (
	ProtoUDP = proc.ProtoUDP
	ProtoTCP = proc.ProtoTCP
)

// Flow is one connection as the receiving host sees it: Src is the peer
// that sends, Dst this host. A port not given (Parse of an address
// alone) is 0, and HasSrcPort or HasDstPort says it was not given.
type Flow struct {
	Proto    Proto
	Src, Dst netip.AddrPort
	// srcPort and dstPort say the user gave the port.
	srcPort, dstPort bool
}

// HasSrcPort reports whether the flow's source port was given.
func (f Flow) HasSrcPort() bool { return f.srcPort }

// HasDstPort reports whether the flow's destination port was given.
func (f Flow) HasDstPort() bool { return f.dstPort }

// Parse reads a flow from the words of the command line: udp or tcp, then
// SRC[:PORT] and DST[:PORT] (an IPv6 address with a port in brackets:
// [fe80::1]:5201). Both addresses must be of one family.
func Parse(proto, src, dst string) (Flow, error) {
	f := Flow{Proto: Proto(proto)}
	if f.Proto != ProtoUDP && f.Proto != ProtoTCP {
		return Flow{}, usage.Errorf("flow protocol %q: want udp or tcp", clip(proto))
	}
	var err error
	if f.Src, f.srcPort, err = parseEndpoint(src); err != nil {
		return Flow{}, usage.Errorf("source %q: %v", clip(src), err)
	}
	if f.Dst, f.dstPort, err = parseEndpoint(dst); err != nil {
		return Flow{}, usage.Errorf("destination %q: %v", clip(dst), err)
	}
	if f.Src.Addr().Is4() != f.Dst.Addr().Is4() {
		return Flow{}, usage.Errorf("source %s and destination %s are not of one address family", f.Src.Addr(), f.Dst.Addr())
	}
	return f, nil
}

// parseEndpoint reads ADDR, ADDR:PORT, [ADDR6] or [ADDR6]:PORT. An
// IPv4-mapped IPv6 address is the IPv4 address it stands for.
func parseEndpoint(s string) (netip.AddrPort, bool, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port()), true, nil
	}
	a := s
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		a = s[1 : len(s)-1]
	}
	addr, err := netip.ParseAddr(a)
	if err != nil {
		if strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
			return netip.AddrPort{}, false, fmt.Errorf("not an address (an IPv6 address with a port goes in brackets: [fe80::1]:5201)")
		}
		return netip.AddrPort{}, false, fmt.Errorf("not ADDR or ADDR:PORT (IPv6 as [ADDR]:PORT)")
	}
	return netip.AddrPortFrom(addr.Unmap().WithZone(""), 0), false, nil
}

// FlowType is the ethtool flow type the flow's packets are: udp4, tcp6, ...
func (f Flow) FlowType() steer.FlowType {
	v := "4"
	if !f.Dst.Addr().Is4() {
		v = "6"
	}
	return steer.FlowType(string(f.Proto) + v)
}

// Tuple is the flow as the hash sees it.
func (f Flow) Tuple() rsshash.Tuple { return rsshash.Tuple{Src: f.Src, Dst: f.Dst} }

func (f Flow) String() string {
	return fmt.Sprintf("%s %s to %s", f.Proto, endpoint(f.Src, f.HasSrcPort()), endpoint(f.Dst, f.HasDstPort()))
}

func endpoint(ap netip.AddrPort, port bool) string {
	if port {
		return ap.String()
	}
	return ap.Addr().String()
}

// ParseKey reads an RSS key as ethtool -x prints it (colon-separated hex
// bytes, wrapped over lines or not) or as plain hex.
func ParseKey(s string) ([]byte, error) {
	t := strings.Join(strings.Fields(s), "")
	t = strings.ReplaceAll(t, ":", "")
	t = strings.TrimPrefix(strings.TrimPrefix(t, "0x"), "0X")
	if t == "" {
		return nil, usage.Errorf("--rss-key is empty")
	}
	k, err := hex.DecodeString(t)
	if err != nil {
		return nil, usage.Errorf("--rss-key %q: not hex bytes (ethtool -x's 6d:5a:56:... or plain 6d5a56...)", clip(s))
	}
	return k, nil
}

// parseTable reads an indirection table: ethtool -x output as pasted
// (the "RX flow hash indirection table" section; steer.ParseEthtoolX
// reads it), or queue numbers separated by spaces, commas or lines, entry
// 0 first.
func parseTable(name string, b []byte) ([]uint32, error) {
	if bytes.Contains(b, []byte("indirection table")) {
		x, err := steer.ParseEthtoolX(b)
		if err != nil {
			return nil, usage.Errorf("--rss-table %s: %v", name, err)
		}
		if len(x.RSS.Table) == 0 {
			return nil, usage.Errorf("--rss-table %s: ethtool -x output with no whole table (%v)", name, x.Unknown)
		}
		return x.RSS.Table, nil
	}
	words := strings.FieldsFunc(string(b), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
	if len(words) == 0 {
		return nil, usage.Errorf("--rss-table %s: no queue numbers", name)
	}
	out := make([]uint32, 0, len(words))
	for i, w := range words {
		q, err := strconv.ParseUint(w, 10, 32)
		if err != nil {
			return nil, usage.Errorf("--rss-table %s: entry %d, %q, is not a queue number", name, i, clip(w))
		}
		out = append(out, uint32(q))
	}
	return out, nil
}

// ParseFields reads --rss-fields: ethtool's letters (sd, sdfn, ...), in
// any order, each at most once.
func ParseFields(s string) (steer.HashFields, error) {
	const order = "mvtsdfnr"
	seen := map[rune]bool{}
	for _, c := range s {
		if !strings.ContainsRune(order, c) || seen[c] {
			return "", usage.Errorf("--rss-fields %q: want ethtool's letters m v t s d f n r, each once (sd, sdfn)", clip(s))
		}
		seen[c] = true
	}
	var out []byte
	for _, c := range order {
		if seen[c] {
			out = append(out, byte(c))
		}
	}
	return steer.HashFields(out), nil
}

// ParseFunc reads --rss-func: toeplitz or xor (crc32 too, said unknown).
func ParseFunc(s string) (rsshash.Func, error) {
	switch f := rsshash.Func(s); f {
	case rsshash.FuncToeplitz, rsshash.FuncXOR, rsshash.FuncCRC32:
		return f, nil
	}
	return "", usage.Errorf("--rss-func %q: want toeplitz, xor or crc32", clip(s))
}

// clip cuts user input for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// maxTableFile bounds --rss-table: ethtool -x of a 64k-entry table is
// about 700 KB.
const maxTableFile = 4 << 20

// ReadTable reads and parses the --rss-table file path, a file of this
// machine (not of --root).
func ReadTable(path string) ([]uint32, error) {
	live, err := kfile.Open("/")
	if err != nil {
		return nil, fmt.Errorf("--rss-table: %w", err)
	}
	b, err := live.ReadLimit(path, maxTableFile)
	if err != nil {
		return nil, usage.Errorf("--rss-table: %v", err)
	}
	return parseTable(path, b)
}
