package proc

import (
	"bytes"
	"fmt"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"
)

// Route is one route of a network namespace: traffic to Dst leaves
// through Iface, to Gateway when it has one.
type Route struct {
	Iface   string // "" when the route has no device (a blackhole)
	Dst     netip.Prefix
	Gateway netip.Addr // invalid when the destination is on the link
	Metric  uint32
	// Reject is an unreachable, prohibit or blackhole route: no traffic
	// leaves by it.
	Reject bool
	// Local is an IPv6 route to one of the host's own addresses (or an
	// anycast one): traffic to it stays on the host.
	Local bool
}

// Route flags of /proc/net/route and /proc/net/ipv6_route (the kernel's
// RTF_* of include/uapi/linux/route.h and ipv6_route.h).
const (
	rtfUp      = 0x0001
	rtfGateway = 0x0002
	rtfReject  = 0x0200
	rtfAnycast = 0x00100000
	rtfLocal   = 0x80000000
)

// parseRoute parses /proc/net/route, the IPv4 main table: a header, then
// "Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window
// IRTT", tab-separated, addresses and the mask in the kernel's hex (see
// parseHexAddr), flags in hex. A route with no device is shown as "*".
func parseRoute(path string, b []byte) ([]Route, error) {
	var out []Route
	lineNo := 0
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		lineNo++
		if lineNo == 1 || len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r, err := parseRouteLine(line)
		if err != nil {
			return nil, fmt.Errorf("read %s: line %d: %w", path, lineNo, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func parseRouteLine(line []byte) (Route, error) {
	f := strings.Fields(string(line))
	if len(f) != 11 {
		return Route{}, fmt.Errorf("%q: want 11 fields (Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window IRTT)", clip(line))
	}
	dst, err := parseHexAddr(f[1], false)
	if err != nil {
		return Route{}, fmt.Errorf("destination: %w", err)
	}
	gw, err := parseHexAddr(f[2], false)
	if err != nil {
		return Route{}, fmt.Errorf("gateway: %w", err)
	}
	flags, err := strconv.ParseUint(f[3], 16, 32)
	if err != nil {
		return Route{}, fmt.Errorf("flags %q are not hex", clip([]byte(f[3])))
	}
	metric, err := strconv.ParseUint(f[6], 10, 32)
	if err != nil {
		return Route{}, fmt.Errorf("metric %q is not a number", clip([]byte(f[6])))
	}
	mask, err := parseHexAddr(f[7], false)
	if err != nil {
		return Route{}, fmt.Errorf("mask: %w", err)
	}
	m := mask.As4()
	v := uint32(m[0])<<24 | uint32(m[1])<<16 | uint32(m[2])<<8 | uint32(m[3])
	plen := bits.LeadingZeros32(^v)
	if plen < 32 && v<<plen != 0 {
		return Route{}, fmt.Errorf("mask %s is not a prefix", mask)
	}
	pfx := netip.PrefixFrom(dst, plen)
	if pfx.Masked() != pfx {
		return Route{}, fmt.Errorf("destination %s has bits outside its mask %s", dst, mask)
	}
	r := Route{Iface: f[0], Dst: pfx, Metric: uint32(metric), Reject: flags&rtfReject != 0 || flags&rtfUp == 0}
	if r.Iface == "*" {
		r.Iface = ""
	}
	if flags&rtfGateway != 0 {
		r.Gateway = gw
	}
	return r, nil
}

// parseIPv6Route parses /proc/net/ipv6_route, every IPv6 table: "dst
// dst_len src src_len next_hop metric refcnt use flags [dev]", addresses
// as 32 hex digits in network order, lengths and numbers in hex. The
// device is missing when the route has none.
func parseIPv6Route(path string, b []byte) ([]Route, error) {
	var out []Route
	lineNo := 0
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		lineNo++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r, err := parseIPv6RouteLine(line)
		if err != nil {
			return nil, fmt.Errorf("read %s: line %d: %w", path, lineNo, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func parseIPv6RouteLine(line []byte) (Route, error) {
	f := strings.Fields(string(line))
	if len(f) != 9 && len(f) != 10 {
		return Route{}, fmt.Errorf("%q: want 10 fields (dst dst_len src src_len next_hop metric refcnt use flags dev)", clip(line))
	}
	dst, err := parseIPv6Hex(f[0])
	if err != nil {
		return Route{}, fmt.Errorf("destination: %w", err)
	}
	plen, err := strconv.ParseUint(f[1], 16, 8)
	if err != nil || plen > 128 {
		return Route{}, fmt.Errorf("prefix length %q: want 00 to 80 (hex)", clip([]byte(f[1])))
	}
	gw, err := parseIPv6Hex(f[4])
	if err != nil {
		return Route{}, fmt.Errorf("next hop: %w", err)
	}
	metric, err := strconv.ParseUint(f[5], 16, 32)
	if err != nil {
		return Route{}, fmt.Errorf("metric %q is not hex", clip([]byte(f[5])))
	}
	flags, err := strconv.ParseUint(f[8], 16, 32)
	if err != nil {
		return Route{}, fmt.Errorf("flags %q are not hex", clip([]byte(f[8])))
	}
	pfx := netip.PrefixFrom(dst, int(plen))
	if pfx.Masked() != pfx {
		return Route{}, fmt.Errorf("destination %s has bits outside /%d", dst, plen)
	}
	r := Route{Dst: pfx, Metric: uint32(metric), Reject: flags&rtfReject != 0 || flags&rtfUp == 0,
		Local: flags&(rtfLocal|rtfAnycast) != 0}
	if len(f) == 10 {
		r.Iface = f[9]
	}
	if flags&rtfGateway != 0 {
		r.Gateway = gw
	}
	return r, nil
}

// IfAddr is an address of an interface, with its prefix length.
type IfAddr struct {
	Iface  string
	Prefix netip.Prefix // the address (not masked) and its length
}

// parseIfInet6 parses /proc/net/if_inet6: "address ifindex plen scope
// flags name", the address as 32 hex digits in network order, the
// numbers in hex.
func parseIfInet6(path string, b []byte) ([]IfAddr, error) {
	var out []IfAddr
	lineNo := 0
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		lineNo++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		f := strings.Fields(string(line))
		if len(f) != 6 {
			return nil, fmt.Errorf("read %s: line %d: %q: want 6 fields (address ifindex plen scope flags name)", path, lineNo, clip(line))
		}
		a, err := parseIPv6Hex(f[0])
		if err != nil {
			return nil, fmt.Errorf("read %s: line %d: %w", path, lineNo, err)
		}
		plen, err := strconv.ParseUint(f[2], 16, 8)
		if err != nil || plen > 128 {
			return nil, fmt.Errorf("read %s: line %d: prefix length %q: want 00 to 80 (hex)", path, lineNo, clip([]byte(f[2])))
		}
		out = append(out, IfAddr{Iface: f[5], Prefix: netip.PrefixFrom(a, int(plen))})
	}
	return out, nil
}

// parseIPv6Hex parses 32 hex digits in network order (%pi6).
func parseIPv6Hex(s string) (netip.Addr, error) {
	var b [16]byte
	if len(s) != 32 {
		return netip.Addr{}, fmt.Errorf("address %q: want 32 hex digits", clip([]byte(s)))
	}
	for i := range b {
		v, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("address %q is not hex", clip([]byte(s)))
		}
		b[i] = byte(v)
	}
	return netip.AddrFrom16(b), nil
}
