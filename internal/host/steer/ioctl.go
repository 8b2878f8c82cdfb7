package steer

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
)

// The ethtool ioctl (include/uapi/linux/ethtool.h), for what netlink has
// no message for. Layouts are the kernel's: struct ethtool_drvinfo is
// 196 bytes, struct ethtool_rxnfc 192 (its flow spec at 16, rule_cnt
// and rss_context at 184, rule_locs at 188), struct ethtool_rx_flow_spec
// 168 (h_u at 4, h_ext at 56, m_u at 76, m_ext at 128, ring_cookie at
// 152, location at 160). Fields are in the host's byte order but for
// the flow spec's addresses and ports, which are big-endian.
const (
	ethtoolGDrvinfo    = 0x03
	ethtoolGRXFH       = 0x29
	ethtoolGRXRings    = 0x2d
	ethtoolGRXClsRlCnt = 0x2e
	ethtoolGRXClsRule  = 0x2f
	ethtoolGRXClsRlAll = 0x30
	ethtoolGRSSH       = 0x46

	// struct ethtool_rxfh: cmd, rss_context, indir_size, key_size
	// (u32s), hfunc (u8), reserved bytes to 24, then the table's u32s
	// and the key's bytes.
	rxfhSize = 24
	// maxIndir and maxKey bound the sizes GRSSH may claim: the largest
	// tables drivers have are 2,048 entries (ice), keys 52 bytes.
	maxIndir = 1 << 16
	maxKey   = 1 << 10

	drvinfoSize   = 196
	rxnfcSize     = 192
	rxnfcData     = 8
	rxnfcFS       = 16
	rxnfcRuleCnt  = 184
	rxnfcRuleLocs = 188
	fsHU          = 4
	fsMU          = 76
	fsRingCookie  = 152
	fsLocation    = 160

	flowExt    = 0x80000000
	flowMACExt = 0x40000000
	flowRSS    = 0x20000000

	rxClsFlowDisc   = 0xffffffffffffffff
	rxClsFlowWake   = 0xfffffffffffffffe
	rxClsLocSpecial = 0x80000000
	ringMask        = 0x00000000ffffffff
	ringVFMask      = 0x000000ff00000000

	// maxRules bounds the rules read: a driver claiming more is not
	// believed (no NIC has a table near it) and its rules stay unknown.
	maxRules = 1 << 16
)

// hashFlowTypes are the flow types whose hash fields are read, in
// ethtool's names, with their ETHTOOL_GRXFH flow type.
var hashFlowTypes = []struct {
	name FlowType
	code uint32
}{
	{"tcp4", 1}, {"udp4", 2}, {"sctp4", 3}, {"ah4", 9}, {"esp4", 10},
	{"tcp6", 5}, {"udp6", 6}, {"sctp6", 7}, {"ah6", 11}, {"esp6", 12},
}

// hashLetters are ethtool's letters of the RXH_* bits, in its order.
var hashLetters = []struct {
	bit    uint64
	letter byte
}{
	{1 << 1, 'm'}, {1 << 2, 'v'}, {1 << 3, 't'}, {1 << 4, 's'}, {1 << 5, 'd'},
	{1 << 6, 'f'}, {1 << 7, 'n'}, {1 << 31, 'r'},
}

// newRxnfc is a struct ethtool_rxnfc of size bytes for cmd.
func newRxnfc(cmd uint32, size int) []byte {
	b := make([]byte, size)
	native.PutUint32(b, cmd)
	return b
}

// rxfhSizes is GRSSH's first answer: the table's entries and the key's
// bytes, and the hash function's mask.
type rxfhSizes struct {
	indir, key uint32
	hfunc      uint32
}

func decodeRxfhSizes(b []byte) (rxfhSizes, error) {
	if len(b) != rxfhSize {
		return rxfhSizes{}, fmt.Errorf("ethtool_rxfh of %d bytes, want %d", len(b), rxfhSize)
	}
	s := rxfhSizes{indir: native.Uint32(b[8:]), key: native.Uint32(b[12:]), hfunc: uint32(b[16])}
	if s.indir > maxIndir || s.key > maxKey {
		return rxfhSizes{}, fmt.Errorf("an indirection table of %d entries and a key of %d bytes, more than %d and %d", s.indir, s.key, maxIndir, maxKey)
	}
	return s, nil
}

// decodeRxfh reads GRSSH's second answer, asked with sizes.
func decodeRxfh(b []byte, sizes rxfhSizes, hfuncs []string) (rssReply, error) {
	want := rxfhSize + 4*int(sizes.indir) + int(sizes.key)
	if len(b) != want {
		return rssReply{}, fmt.Errorf("ethtool_rxfh of %d bytes, want %d", len(b), want)
	}
	if native.Uint32(b[8:]) != sizes.indir || native.Uint32(b[12:]) != sizes.key {
		return rssReply{}, fmt.Errorf("the sizes changed between the two requests")
	}
	r := rssReply{hasTable: sizes.indir > 0, hasKey: sizes.key > 0}
	var err error
	end := rxfhSize + 4*int(sizes.indir)
	if r.rss.Table, err = decodeTable(b[rxfhSize:end]); err != nil {
		return rssReply{}, err
	}
	if len(r.rss.Table) == 0 {
		r.rss.Table = nil
	}
	if sizes.key > 0 {
		r.rss.Key = append([]byte(nil), b[end:]...)
	}
	if r.hfunc = uint32(b[16]); r.hfunc != 0 {
		r.rss.HashFunc, err = hashFuncName(r.hfunc, hfuncs)
	}
	return r, err
}

// decodeDrvinfo reads struct ethtool_drvinfo.
func decodeDrvinfo(b []byte) (*DriverInfo, error) {
	if len(b) != drvinfoSize {
		return nil, fmt.Errorf("ethtool_drvinfo of %d bytes, want %d", len(b), drvinfoSize)
	}
	return &DriverInfo{
		Driver:   cString(b[4:36]),
		Version:  cString(b[36:68]),
		Firmware: cString(b[68:100]),
		BusInfo:  cString(b[100:132]),
	}, nil
}

func cString(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// decodeRxnfcData reads ethtool_rxnfc's data (GRXRINGS, GRXFH).
func decodeRxnfcData(b []byte) (uint64, error) {
	if len(b) != rxnfcSize {
		return 0, fmt.Errorf("ethtool_rxnfc of %d bytes, want %d", len(b), rxnfcSize)
	}
	return native.Uint64(b[rxnfcData:]), nil
}

// hashFields turns GRXFH's RXH_* bits into ethtool's letters.
func hashFields(v uint64) (HashFields, error) {
	var out []byte
	rest := v
	for _, h := range hashLetters {
		if v&h.bit != 0 {
			out = append(out, h.letter)
			rest &^= h.bit
		}
	}
	if rest != 0 {
		return "", fmt.Errorf("hash field bits %#x that ethtool has no letter for", rest)
	}
	return HashFields(out), nil
}

// decodeRuleCount reads GRXCLSRLCNT: the table size (data, without the
// special-locations flag) and the rule count.
func decodeRuleCount(b []byte) (size, count uint32, err error) {
	if len(b) != rxnfcSize {
		return 0, 0, fmt.Errorf("ethtool_rxnfc of %d bytes, want %d", len(b), rxnfcSize)
	}
	return uint32(native.Uint64(b[rxnfcData:]) &^ rxClsLocSpecial), native.Uint32(b[rxnfcRuleCnt:]), nil
}

// ruleLocsSize is the buffer GRXCLSRLALL needs for count rules: the
// struct, its rule_locs array overlaying the tail padding.
func ruleLocsSize(count uint32) int { return max(rxnfcSize, rxnfcRuleLocs+4*int(count)) }

// decodeRuleLocs reads GRXCLSRLALL: the rule_cnt locations it filled,
// at most want.
func decodeRuleLocs(b []byte, want uint32) ([]uint32, error) {
	if want > maxRules || len(b) != ruleLocsSize(want) {
		return nil, fmt.Errorf("ethtool_rxnfc of %d bytes for %d rules, want %d", len(b), want, ruleLocsSize(want))
	}
	n := native.Uint32(b[rxnfcRuleCnt:])
	if n > want {
		return nil, fmt.Errorf("%d rule locations, more than the %d asked for", n, want)
	}
	locs := make([]uint32, n)
	for i := range locs {
		locs[i] = native.Uint32(b[rxnfcRuleLocs+4*i:])
	}
	return locs, nil
}

// decodeRule reads GRXCLSRULE's struct ethtool_rxnfc: the flow spec, and
// rss_context when FLOW_RSS.
func decodeRule(b []byte) (Rule, error) {
	if len(b) != rxnfcSize {
		return Rule{}, fmt.Errorf("ethtool_rxnfc of %d bytes, want %d", len(b), rxnfcSize)
	}
	fs := b[rxnfcFS : rxnfcFS+168]
	ft := native.Uint32(fs)
	r := Rule{Location: native.Uint32(fs[fsLocation:])}
	if err := r.match(ft&^(flowExt|flowMACExt|flowRSS), fs[fsHU:fsHU+52], fs[fsMU:fsMU+52]); err != nil {
		return Rule{}, err
	}
	cookie := native.Uint64(fs[fsRingCookie:])
	switch cookie {
	case rxClsFlowDisc:
		r.Action = RuleActionDrop
	case rxClsFlowWake:
		r.Action = RuleActionWake
	default:
		r.Action = RuleActionQueue
		r.Queue = cookie & ringMask
		r.VF = uint32((cookie & ringVFMask) >> 32)
	}
	if ft&flowRSS != 0 {
		ctx := native.Uint32(b[rxnfcRuleCnt:])
		r.Context = &ctx
	}
	return r, nil
}

// ruleFlowTypes are the flow spec's flow types by ethtool's names.
var ruleFlowTypes = map[uint32]FlowType{
	1: "tcp4", 2: "udp4", 3: "sctp4", 9: "ah4", 10: "esp4", 13: "ip4",
	5: "tcp6", 6: "udp6", 7: "sctp6", 11: "ah6", 12: "esp6", 14: "ip6",
	18: "ether",
}

// match fills the rule's flow type and match fields from the flow
// union h (the values) and m (the masks: a set bit must match).
func (r *Rule) match(ft uint32, h, m []byte) error {
	name, ok := ruleFlowTypes[ft]
	if !ok {
		return fmt.Errorf("flow type %#x is not one ethtool knows", ft)
	}
	r.FlowType = name
	switch ft {
	case 1, 2, 3: // ethtool_tcpip4_spec: ip4src, ip4dst, psrc, pdst, tos
		r.ips(h, m, 4)
		r.ports(h[8:], m[8:])
	case 9, 10, 13: // ah_espip4 / usrip4: addresses first
		r.ips(h, m, 4)
	case 5, 6, 7: // ethtool_tcpip6_spec: ip6src, ip6dst, psrc, pdst, tclass
		r.ips(h, m, 16)
		r.ports(h[32:], m[32:])
	case 11, 12, 14:
		r.ips(h, m, 16)
	}
	return nil
}

func (r *Rule) ips(h, m []byte, size int) {
	addr := func(b []byte) string {
		if size == 4 {
			return netip.AddrFrom4([4]byte(b[:4])).String()
		}
		return netip.AddrFrom16([16]byte(b[:16])).String()
	}
	if !zero(m[:size]) {
		r.SrcIP, r.SrcMask = addr(h), addr(m)
	}
	if !zero(m[size : 2*size]) {
		r.DstIP, r.DstMask = addr(h[size:]), addr(m[size:])
	}
}

func (r *Rule) ports(h, m []byte) {
	if sm := binary.BigEndian.Uint16(m); sm != 0 {
		p := binary.BigEndian.Uint16(h)
		r.SrcPort, r.SrcPortMask = &p, sm
	}
	if dm := binary.BigEndian.Uint16(m[2:]); dm != 0 {
		p := binary.BigEndian.Uint16(h[2:])
		r.DstPort, r.DstPortMask = &p, dm
	}
}

func zero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
