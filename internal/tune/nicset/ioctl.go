package nicset

import (
	"fmt"
	"slices"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/host/steer"
)

// The ethtool ioctl's set commands (include/uapi/linux/ethtool.h), and
// the one get InsertRule asks for itself. Layouts are the kernel's:
// struct ethtool_rxnfc is 192 bytes (data at 8, its flow spec at 16),
// struct ethtool_rx_flow_spec 168 (h_u at 4, m_u at 76, ring_cookie at
// 152, location at 160), struct ethtool_rxfh 24 before its table and
// key. Fields are in the host's byte order but for the flow spec's
// ports, which are big-endian.
const (
	ethtoolGRXClsRlCnt = 0x2e
	ethtoolSRXClsRlDel = 0x31
	ethtoolSRXClsRlIns = 0x32
	ethtoolSRSSH       = 0x47

	rxfhSize     = 24
	rxnfcSize    = 192
	rxnfcData    = 8
	rxnfcFS      = 16
	fsSize       = 168
	fsHU         = 4
	fsMU         = 76
	fsRingCookie = 152
	fsLocation   = 160

	// RX_CLS_LOC_SPECIAL in GRXCLSRLCNT's data: the driver picks
	// locations itself when asked for RX_CLS_LOC_ANY.
	rxClsLocSpecial = 0x80000000
	rxClsLocAny     = 0xffffffff
	// RXH_XFRM_NO_CHANGE in struct ethtool_rxfh's input_xfrm byte
	// (6.8 and later; before, the byte is reserved and must be 0).
	rxhXfrmNoChange = 0xff
	flowTCP4        = 1
	flowTCP6        = 5
)

// newRxnfc is a struct ethtool_rxnfc (or another ethtool structure) of
// size bytes for cmd.
func newRxnfc(cmd uint32, size int) []byte {
	b := make([]byte, size)
	native.PutUint32(b, cmd)
	return b
}

// encodeSRSSH is struct ethtool_rxfh for ETHTOOL_SRSSH: indir_size 0
// resets the table to the default, ETH_RXFH_INDIR_NO_CHANGE leaves it;
// key_size 0 leaves the key. xfrm is the input_xfrm byte: NO_CHANGE
// where the kernel has the field, 0 where it is still reserved.
func encodeSRSSH(r RSSSetting, xfrm byte) []byte {
	var table []uint32
	indir := uint32(0xffffffff) // ETH_RXFH_INDIR_NO_CHANGE
	switch {
	case r.Default:
		indir = 0
	case r.Table != nil:
		table, indir = r.Table, uint32(len(r.Table))
	}
	b := newRxnfc(ethtoolSRSSH, rxfhSize+4*len(table)+len(r.Key))
	native.PutUint32(b[8:], indir)
	native.PutUint32(b[12:], uint32(len(r.Key)))
	b[17] = xfrm
	copy(b[rxfhSize:], encodeTable(table))
	copy(b[rxfhSize+4*len(table):], r.Key)
	return b
}

func (s *liveSetter) setRSSIoctl(nic string, r RSSSetting) error {
	// The kernel has the input_xfrm field when it reports it: 6.8 and
	// later put ETHTOOL_A_RSS_INPUT_XFRM in every RSS_GET reply.
	n, err := s.Read(nic)
	if err != nil {
		return err
	}
	xfrm := byte(0)
	if n.RSS != nil && n.RSS.InputXfrm != nil {
		xfrm = rxhXfrmNoChange
	}
	if _, err := s.ask.Ioctl(ethnl.IoctlRequest{IfName: nic, Buf: encodeSRSSH(r, xfrm)}); err != nil {
		return setError(nic, "ETHTOOL_SRSSH", err)
	}
	return nil
}

// encodeRuleIns is struct ethtool_rxnfc for ETHTOOL_SRXCLSRLINS.
func encodeRuleIns(r RuleSpec, loc uint32) ([]byte, error) {
	b := newRxnfc(ethtoolSRXClsRlIns, rxnfcSize)
	fs := b[rxnfcFS : rxnfcFS+fsSize]
	var portAt int
	switch r.FlowType {
	case "tcp4":
		native.PutUint32(fs, flowTCP4)
		portAt = 8 + 2 // ethtool_tcpip4_spec: ip4src, ip4dst, psrc, pdst
	case "tcp6":
		native.PutUint32(fs, flowTCP6)
		portAt = 32 + 2 // ethtool_tcpip6_spec: ip6src, ip6dst, psrc, pdst
	default:
		return nil, fmt.Errorf("rule flow type %q: want tcp4 or tcp6", r.FlowType)
	}
	fs[fsHU+portAt], fs[fsHU+portAt+1] = byte(r.DstPort>>8), byte(r.DstPort)
	fs[fsMU+portAt], fs[fsMU+portAt+1] = 0xff, 0xff
	native.PutUint64(fs[fsRingCookie:], uint64(r.Queue))
	native.PutUint32(fs[fsLocation:], loc)
	return b, nil
}

// InsertRule adds r at the location the driver picks (RX_CLS_LOC_ANY)
// when it can, else at the lowest free one, and reads it back there.
func (s *liveSetter) InsertRule(nic string, r RuleSpec) (uint32, error) {
	n, err := s.Read(nic)
	if err != nil {
		return 0, err
	}
	cnt, err := s.ask.Ioctl(ethnl.IoctlRequest{IfName: nic, Buf: newRxnfc(ethtoolGRXClsRlCnt, rxnfcSize)})
	if err != nil {
		return 0, setError(nic, "ETHTOOL_GRXCLSRLCNT", err)
	}
	loc, err := ruleLocation(n, native.Uint64(cnt[rxnfcData:]))
	if err != nil {
		return 0, err
	}
	buf, err := encodeRuleIns(r, loc)
	if err != nil {
		return 0, err
	}
	out, err := s.ask.Ioctl(ethnl.IoctlRequest{IfName: nic, Buf: buf})
	if err != nil {
		return 0, setError(nic, "ETHTOOL_SRXCLSRLINS", err)
	}
	loc = native.Uint32(out[rxnfcFS+fsLocation:])
	if n, err = s.Read(nic); err != nil {
		return loc, err
	}
	if n.Rules == nil || !slices.ContainsFunc(n.Rules.Rules, func(got steer.Rule) bool { return got.Location == loc && r.Matches(got) }) {
		return loc, fmt.Errorf("%s ntuple: %w: no rule %s port %d to queue %d at location %d", nic, ErrReadBack, r.FlowType, r.DstPort, r.Queue, loc)
	}
	return loc, nil
}

// ruleLocation picks where a new rule goes: RX_CLS_LOC_ANY when the
// driver says it takes special locations (data has RX_CLS_LOC_SPECIAL),
// else the lowest location of the table no rule holds.
func ruleLocation(n *steer.NIC, data uint64) (uint32, error) {
	if data&rxClsLocSpecial != 0 {
		return rxClsLocAny, nil
	}
	if n.Rules == nil {
		return 0, fmt.Errorf("%s ntuple: the rules are unknown (%s): no free location can be chosen", n.Name, n.Unknown[steer.PartRules])
	}
	used := map[uint32]bool{}
	for _, r := range n.Rules.Rules {
		used[r.Location] = true
	}
	for loc := uint32(0); loc < uint32(data); loc++ {
		if !used[loc] {
			return loc, nil
		}
	}
	return 0, fmt.Errorf("%s ntuple: all %d rule locations are taken", n.Name, uint32(data))
}

// DeleteRule deletes the rule at loc (ETHTOOL_SRXCLSRLDEL) and reads the
// rules back without it.
func (s *liveSetter) DeleteRule(nic string, loc uint32) error {
	buf := newRxnfc(ethtoolSRXClsRlDel, rxnfcSize)
	native.PutUint32(buf[rxnfcFS+fsLocation:], loc)
	if _, err := s.ask.Ioctl(ethnl.IoctlRequest{IfName: nic, Buf: buf}); err != nil {
		return setError(nic, "ETHTOOL_SRXCLSRLDEL", err)
	}
	n, err := s.Read(nic)
	if err != nil {
		return err
	}
	if n.Rules == nil {
		return fmt.Errorf("%s ntuple: %w: %s", nic, ErrReadBack, n.Unknown[steer.PartRules])
	}
	if slices.ContainsFunc(n.Rules.Rules, func(r steer.Rule) bool { return r.Location == loc }) {
		return fmt.Errorf("%s ntuple: %w: a rule is still at location %d", nic, ErrReadBack, loc)
	}
	return nil
}
