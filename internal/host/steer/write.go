package steer

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// The write side: ethtool netlink's set messages and the ethtool ioctl's
// set commands (include/uapi/linux/ethtool_netlink_generated.h,
// include/uapi/linux/ethtool.h), each read back after it is written.
const (
	ethnlMsgRingsSet    = 16
	ethnlMsgChannelsSet = 18
	// ETHTOOL_MSG_RSS_SET (6.17 and later); before it the table is set
	// with ETHTOOL_SRSSH, as ethtool -X does.
	ethnlMsgRSSSet = 48

	ethnlChannelsRXCount       = 6
	ethnlChannelsTXCount       = 7
	ethnlChannelsOtherCount    = 8
	ethnlChannelsCombinedCount = 9
	ethnlRingsTCPDataSplit     = 11
	ethnlRingsHDSThresh        = 17

	ethtoolSRSSH       = 0x47
	ethtoolSRXClsRlDel = 0x31
	ethtoolSRXClsRlIns = 0x32

	// RX_CLS_LOC_ANY: the driver picks the rule's location (only when
	// GRXCLSRLCNT's data has RX_CLS_LOC_SPECIAL).
	rxClsLocAny = 0xffffffff
	// RXH_XFRM_NO_CHANGE in struct ethtool_rxfh's input_xfrm byte
	// (6.8 and later; before, the byte is reserved and must be 0).
	rxhXfrmNoChange = 0xff
	flowTCP4        = 1
	flowTCP6        = 5
	fsSize          = 168
)

// ErrNotLive is returned by OpenSetter for a root that is not the
// running kernel: a captured root's steering cannot be changed.
var ErrNotLive = errors.New("steering is changed only on the live root")

// ErrReadBack is wrapped when a write was accepted but reading the part
// again does not show the value written.
var ErrReadBack = errors.New("read back differs from the value written")

// SetError is the kernel's refusal of a change: its errno, and for a
// netlink request the extended ack's message when it gave one.
type SetError struct {
	Op      string // "channels-set", "ETHTOOL_SRSSH", ...
	NIC     string
	Errno   unix.Errno
	Message string // the netlink extack message; "" when none
}

func (e *SetError) Error() string {
	s := fmt.Sprintf("%s %s: %s", e.NIC, e.Op, kfile.ErrnoName(e.Errno))
	switch e.Errno {
	case unix.EOPNOTSUPP:
		s += " (the driver cannot)"
	case unix.EPERM, unix.EACCES:
		s += " (needs CAP_NET_ADMIN)"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *SetError) Unwrap() error { return e.Errno }

// Reason is the refusal as a Reason: WhyDriver for EOPNOTSUPP.
func (e *SetError) Reason() Reason {
	r := reasonOf(e.Errno)
	if e.Message != "" {
		r.Detail += ": " + e.Message
	}
	return r
}

// ChannelCounts are the channel counts a set changes; a nil field is
// left as it is.
type ChannelCounts struct {
	RX, TX, Other, Combined *uint32
}

// RSSSetting is what a set of RSS context 0 changes. Default puts the
// driver's default table back (ethtool -X IF default: the table is no
// longer the user's, so the driver spreads it again when channels
// change); otherwise a non-nil Table is written as it is. A nil Key is
// left as it is.
type RSSSetting struct {
	Default bool
	Table   []uint32
	Key     []byte
}

// RingSetting is what a set of the rings changes; a nil field is left.
type RingSetting struct {
	TCPDataSplit *TCPDataSplit
	HDSThresh    *uint32
}

// RuleSpec is the one kind of ntuple rule irqnuma adds: a TCP flow type
// (tcp4 or tcp6) and destination port, steered to Queue.
type RuleSpec struct {
	FlowType FlowType `json:"flow_type"`
	DstPort  uint16   `json:"dst_port"`
	Queue    uint32   `json:"queue"`
}

// Matches reports whether a rule read back is exactly the spec: its flow
// type, the exact destination port, to its queue, matching nothing else.
func (s RuleSpec) Matches(r Rule) bool {
	return r.FlowType == s.FlowType && r.DstPort != nil && *r.DstPort == s.DstPort && r.DstPortMask == 0xffff &&
		r.SrcPort == nil && r.SrcIP == "" && r.DstIP == "" && r.Action == RuleActionQueue &&
		r.Queue == uint64(s.Queue) && r.VF == 0 && r.Context == nil
}

// Setter changes a NIC's steering and reads it again. Every set reads
// the part back and fails wrapping ErrReadBack when it differs; a
// refusal is a *SetError.
type Setter interface {
	Read(nic string) (*NIC, error)
	SetChannels(nic string, c ChannelCounts) error
	SetRSS(nic string, r RSSSetting) error
	SetRings(nic string, r RingSetting) error
	// InsertRule adds a rule and returns its location.
	InsertRule(nic string, r RuleSpec) (uint32, error)
	DeleteRule(nic string, loc uint32) error
	Close() error
}

// OpenSetter returns the live kernel's Setter; any other root is
// refused with ErrNotLive.
func OpenSetter(fsys kfile.FS) (Setter, error) {
	if !fsys.Live() {
		return nil, fmt.Errorf("%s: %w", fsys.Root(), ErrNotLive)
	}
	return &liveSetter{fsys: fsys, ask: ethnl.NewLive()}, nil
}

type liveSetter struct {
	fsys kfile.FS
	ask  *ethnl.Live
}

func (s *liveSetter) Close() error { return s.ask.Close() }

// Read reads the NIC's steering afresh.
func (s *liveSetter) Read(nic string) (*NIC, error) {
	src := newNLSource(s.ask, "netlink")
	h, err := readWith(s.fsys, []string{nic}, src)
	if err != nil {
		return nil, err
	}
	return h.NICs[0], nil
}

// set sends one ethtool set request and returns the kernel's refusal.
func (s *liveSetter) set(nic string, cmd uint8, op string, body func(ae *netlink.AttributeEncoder)) error {
	src := newNLSource(s.ask, "netlink")
	f, err := src.command("ethtool", cmd, op)
	if err != nil {
		return err
	}
	attrs := ethnl.Encode(func(ae *netlink.AttributeEncoder) {
		ae.Nested(ethnlAttrHeader, func(h *netlink.AttributeEncoder) error {
			h.String(ethnlHeaderDevName, nic)
			return nil
		})
		body(ae)
	})
	if _, err := s.ask.GenlRaw(ethnl.Request{Family: f.ID, Cmd: cmd, Version: ethnlVersion, Ack: true, Attrs: attrs}); err != nil {
		return setError(nic, op, err)
	}
	return nil
}

// setError turns a request's error into a *SetError, keeping the
// extended ack's message.
func setError(nic, op string, err error) error {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return fmt.Errorf("%s %s: %w", nic, op, err)
	}
	se := &SetError{Op: op, NIC: nic, Errno: errno}
	var oe *netlink.OpError
	if errors.As(err, &oe) {
		se.Message = oe.Message
	}
	return se
}

func (s *liveSetter) SetChannels(nic string, c ChannelCounts) error {
	err := s.set(nic, ethnlMsgChannelsSet, "channels-set", func(ae *netlink.AttributeEncoder) { encodeChannels(ae, c) })
	if err != nil {
		return err
	}
	n, err := s.Read(nic)
	if err != nil {
		return err
	}
	return checkChannels(n, c)
}

func encodeChannels(ae *netlink.AttributeEncoder, c ChannelCounts) {
	for _, f := range []struct {
		typ uint16
		v   *uint32
	}{{ethnlChannelsRXCount, c.RX}, {ethnlChannelsTXCount, c.TX}, {ethnlChannelsOtherCount, c.Other}, {ethnlChannelsCombinedCount, c.Combined}} {
		if f.v != nil {
			ae.Uint32(f.typ, *f.v)
		}
	}
}

// checkChannels says whether n's channels are c's.
func checkChannels(n *NIC, c ChannelCounts) error {
	if n.Channels == nil {
		return fmt.Errorf("%s channels: %w: %s", n.Name, ErrReadBack, n.Unknown[PartChannels])
	}
	got := n.Channels
	for _, f := range []struct {
		name string
		want *uint32
		got  uint32
	}{{"rx", c.RX, got.RX}, {"tx", c.TX, got.TX}, {"other", c.Other, got.Other}, {"combined", c.Combined, got.Combined}} {
		if f.want != nil && *f.want != f.got {
			return fmt.Errorf("%s channels: %w: %s %d, want %d", n.Name, ErrReadBack, f.name, f.got, *f.want)
		}
	}
	return nil
}

func (s *liveSetter) SetRings(nic string, r RingSetting) error {
	var split uint8
	if r.TCPDataSplit != nil {
		var ok bool
		if split, ok = dataSplitValue(*r.TCPDataSplit); !ok {
			return fmt.Errorf("%s rings-set: tcp-data-split %q is none of on, off, unknown", nic, *r.TCPDataSplit)
		}
	}
	err := s.set(nic, ethnlMsgRingsSet, "rings-set", func(ae *netlink.AttributeEncoder) {
		if r.TCPDataSplit != nil {
			ae.Uint8(ethnlRingsTCPDataSplit, split)
		}
		if r.HDSThresh != nil {
			ae.Uint32(ethnlRingsHDSThresh, *r.HDSThresh)
		}
	})
	if err != nil {
		return err
	}
	n, err := s.Read(nic)
	if err != nil {
		return err
	}
	return checkRings(n, r)
}

func dataSplitValue(v TCPDataSplit) (uint8, bool) {
	switch v {
	case TCPDataSplitUnknown:
		return ethnlTCPDataSplitUnset, true
	case TCPDataSplitDisabled:
		return ethnlTCPDataSplitOff, true
	case TCPDataSplitEnabled:
		return ethnlTCPDataSplitOn, true
	}
	return 0, false
}

// checkRings says whether n's rings are r's. tcp-data-split "unknown"
// asks for the driver's default, which reads back as on or off: any
// value is it.
func checkRings(n *NIC, r RingSetting) error {
	if n.Rings == nil {
		return fmt.Errorf("%s rings: %w: %s", n.Name, ErrReadBack, n.Unknown[PartRings])
	}
	if w := r.TCPDataSplit; w != nil && *w != TCPDataSplitUnknown {
		if g := n.Rings.TCPDataSplit; g == nil || *g != *w {
			return fmt.Errorf("%s rings: %w: tcp-data-split is not %s", n.Name, ErrReadBack, *w)
		}
	}
	if w := r.HDSThresh; w != nil {
		if g := n.Rings.HDSThresh; g == nil || *g != *w {
			return fmt.Errorf("%s rings: %w: hds-thresh is not %d", n.Name, ErrReadBack, *w)
		}
	}
	return nil
}

// SetRSS writes context 0's table and key: over netlink RSS_SET where
// the kernel has it, else ETHTOOL_SRSSH.
func (s *liveSetter) SetRSS(nic string, r RSSSetting) error {
	src := newNLSource(s.ask, "netlink")
	f, err := src.family("ethtool")
	if err != nil {
		return err
	}
	if f.Has(ethnlMsgRSSSet) {
		err = s.set(nic, ethnlMsgRSSSet, "rss-set", func(ae *netlink.AttributeEncoder) { encodeRSSSet(ae, r) })
	} else {
		err = s.setRSSIoctl(nic, r)
	}
	if err != nil {
		return err
	}
	n, err := s.Read(nic)
	if err != nil {
		return err
	}
	return checkRSS(n, r)
}

// encodeRSSSet is RSS_SET's body: an empty ETHTOOL_A_RSS_INDIR resets
// the table to the driver's default.
func encodeRSSSet(ae *netlink.AttributeEncoder, r RSSSetting) {
	switch {
	case r.Default:
		ae.Bytes(ethnlRSSIndir, []byte{})
	case r.Table != nil:
		ae.Bytes(ethnlRSSIndir, encodeTable(r.Table))
	}
	if r.Key != nil {
		ae.Bytes(ethnlRSSHkey, r.Key)
	}
}

func encodeTable(t []uint32) []byte {
	b := make([]byte, 4*len(t))
	for i, q := range t {
		native.PutUint32(b[4*i:], q)
	}
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

// checkRSS says whether n's table and key are r's. A default table is
// the kernel's ethtool_rxfh_indir_default over the rx rings.
func checkRSS(n *NIC, r RSSSetting) error {
	if n.RSS == nil {
		return fmt.Errorf("%s rss: %w: %s", n.Name, ErrReadBack, n.Unknown[PartRSS])
	}
	switch {
	case r.Default:
		if !IsDefaultTable(n.RSS.Table, n.RSS.Rings) {
			return fmt.Errorf("%s rss: %w: the table is not the default over %d rings", n.Name, ErrReadBack, n.RSS.Rings)
		}
	case r.Table != nil && !slices.Equal(n.RSS.Table, r.Table):
		return fmt.Errorf("%s rss: %w: the indirection table", n.Name, ErrReadBack)
	}
	if r.Key != nil && !bytes.Equal(n.RSS.Key, r.Key) {
		return fmt.Errorf("%s rss: %w: the hash key", n.Name, ErrReadBack)
	}
	return nil
}

// IsDefaultTable reports whether t is the table the kernel gives a NIC
// with rings rx rings that nobody configured (ethtool_rxfh_indir_default:
// entry i is i mod rings). A user's table equal to it cannot be told
// apart from it: the kernel keeps that flag (IFF_RXFH_CONFIGURED) to
// itself.
func IsDefaultTable(t []uint32, rings uint32) bool {
	if len(t) == 0 || rings == 0 {
		return false
	}
	for i, q := range t {
		if q != uint32(i)%rings {
			return false
		}
	}
	return true
}

// EqualTable is the table spread evenly over queues (ethtool -X IF
// equal N weight form: entry i is queues[i mod len(queues)]).
func EqualTable(size int, queues []uint32) []uint32 {
	if len(queues) == 0 {
		return nil
	}
	t := make([]uint32, size)
	for i := range t {
		t[i] = queues[i%len(queues)]
	}
	return t
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
	if n.Rules == nil || !slices.ContainsFunc(n.Rules.Rules, func(got Rule) bool { return got.Location == loc && r.Matches(got) }) {
		return loc, fmt.Errorf("%s ntuple: %w: no rule %s port %d to queue %d at location %d", nic, ErrReadBack, r.FlowType, r.DstPort, r.Queue, loc)
	}
	return loc, nil
}

// ruleLocation picks where a new rule goes: RX_CLS_LOC_ANY when the
// driver says it takes special locations (data has RX_CLS_LOC_SPECIAL),
// else the lowest location of the table no rule holds.
func ruleLocation(n *NIC, data uint64) (uint32, error) {
	if data&rxClsLocSpecial != 0 {
		return rxClsLocAny, nil
	}
	if n.Rules == nil {
		return 0, fmt.Errorf("%s ntuple: the rules are unknown (%s): no free location can be chosen", n.Name, n.Unknown[PartRules])
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
		return fmt.Errorf("%s ntuple: %w: %s", nic, ErrReadBack, n.Unknown[PartRules])
	}
	if slices.ContainsFunc(n.Rules.Rules, func(r Rule) bool { return r.Location == loc }) {
		return fmt.Errorf("%s ntuple: %w: a rule is still at location %d", nic, ErrReadBack, loc)
	}
	return nil
}
