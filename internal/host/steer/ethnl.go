package steer

import (
	"fmt"
	"math/bits"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/mdlayher/netlink"
)

// ethtool generic netlink (include/uapi/linux/ethtool_netlink*.h,
// Documentation/netlink/specs/ethtool.yaml).
const (
	ethnlVersion = 1

	ethnlMsgStrsetGet   = 1
	ethnlMsgFeaturesGet = 11
	ethnlMsgRingsGet    = 15
	ethnlMsgChannelsGet = 17
	ethnlMsgCoalesceGet = 19
	ethnlMsgRSSGet      = 38

	// Every request's header is attribute 1; in it:
	ethnlAttrHeader        = 1
	ethnlHeaderDevName     = 2
	ethnlStrsetStringsets  = 2
	ethnlStringsetsSet     = 1
	ethnlStringsetID       = 1
	ethnlStringsetCount    = 2
	ethnlStringsetStrings  = 3
	ethnlStringsString     = 1
	ethnlStringIndex       = 1
	ethnlStringValue       = 2
	ethnlBitsetNomask      = 1
	ethnlBitsetSize        = 2
	ethnlBitsetBits        = 3
	ethnlBitsetBitsBit     = 1
	ethnlBitsetBitIndex    = 1
	ethnlBitsetBitValue    = 3
	ethnlFeaturesHW        = 2
	ethnlFeaturesActive    = 4
	ethnlFeaturesNochange  = 5
	ethnlRSSContext        = 2
	ethnlRSSHfunc          = 3
	ethnlRSSIndir          = 4
	ethnlRSSHkey           = 5
	ethnlRSSInputXfrm      = 6
	ethSSFeatures          = 4 // ETH_SS_FEATURES
	ethSSRSSHashFuncs      = 5 // ETH_SS_RSS_HASH_FUNCS
	maxStringsetStrings    = 1 << 12
	ethnlTCPDataSplitOff   = 1
	ethnlTCPDataSplitOn    = 2
	ethnlTCPDataSplitUnset = 0
)

// The ETHTOOL_A_CHANNELS_* attributes, in order from 2.
func decodeChannels(b []byte) (*Channels, error) {
	c := &Channels{}
	fields := []*uint32{&c.MaxRX, &c.MaxTX, &c.MaxOther, &c.MaxCombined, &c.RX, &c.TX, &c.Other, &c.Combined}
	err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		if typ < 2 || int(typ) >= 2+len(fields) {
			return nil
		}
		v, err := ethnl.U32(ad, fmt.Sprintf("channels attribute %d", typ))
		*fields[typ-2] = v
		return err
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// decodeRings reads ETHTOOL_MSG_RINGS_GET's reply.
func decodeRings(b []byte) (*Rings, error) {
	r := &Rings{TCPDataSplit: unknown.Not[TCPDataSplit](DataSplitNotReported)}
	counts := []*uint32{&r.MaxRX, &r.MaxRXMini, &r.MaxRXJumbo, &r.MaxTX, &r.RX, &r.RXMini, &r.RXJumbo, &r.TX}
	err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		switch {
		case typ >= 2 && typ <= 9:
			v, err := ethnl.U32(ad, fmt.Sprintf("rings attribute %d", typ))
			*counts[typ-2] = v
			return err
		case typ == 10: // ETHTOOL_A_RINGS_RX_BUF_LEN
			return setU32(&r.RXBufLen, ad, "rx-buf-len")
		case typ == 11: // TCP_DATA_SPLIT
			return r.setDataSplit(ad)
		case typ == 12: // CQE_SIZE
			return setU32(&r.CQESize, ad, "cqe-size")
		case typ == 13: // TX_PUSH
			return setBool(&r.TxPush, ad, "tx-push")
		case typ == 14: // RX_PUSH
			return setBool(&r.RxPush, ad, "rx-push")
		case typ == 17: // HDS_THRESH
			return setU32(&r.HDSThresh, ad, "hds-thresh")
		case typ == 18: // HDS_THRESH_MAX
			return setU32(&r.HDSThreshMax, ad, "hds-thresh-max")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Rings) setDataSplit(ad *netlink.AttributeDecoder) error {
	v, err := ethnl.U8(ad, "tcp-data-split")
	if err != nil {
		return err
	}
	switch v {
	case ethnlTCPDataSplitUnset:
		r.TCPDataSplit = unknown.Not[TCPDataSplit](DataSplitNA)
	case ethnlTCPDataSplitOff:
		r.TCPDataSplit = unknown.Of(TCPDataSplitDisabled)
	case ethnlTCPDataSplitOn:
		r.TCPDataSplit = unknown.Of(TCPDataSplitEnabled)
	default:
		return fmt.Errorf("tcp-data-split: value %d is none of ETHTOOL_TCP_DATA_SPLIT_*", v)
	}
	return nil
}

func setU32(p **uint32, ad *netlink.AttributeDecoder, name string) error {
	v, err := ethnl.U32(ad, name)
	if err == nil {
		*p = &v
	}
	return err
}

func setBool(p **bool, ad *netlink.AttributeDecoder, name string) error {
	v, err := ethnl.U8(ad, name)
	if err != nil {
		return err
	}
	if v > 1 {
		return fmt.Errorf("%s: value %d is not 0 or 1", name, v)
	}
	on := v == 1
	*p = &on
	return nil
}

// coalesceNames are ethtool -c's names of the ETHTOOL_A_COALESCE_*
// attributes that hold a number (u32) or a switch (u8, marked).
var coalesceNames = map[uint16]struct {
	name string
	u8   bool
}{
	2: {"rx-usecs", false}, 3: {"rx-frames", false}, 4: {"rx-usecs-irq", false}, 5: {"rx-frames-irq", false},
	6: {"tx-usecs", false}, 7: {"tx-frames", false}, 8: {"tx-usecs-irq", false}, 9: {"tx-frames-irq", false},
	10: {"stats-block-usecs", false}, 11: {"adaptive-rx", true}, 12: {"adaptive-tx", true},
	13: {"pkt-rate-low", false}, 14: {"rx-usecs-low", false}, 15: {"rx-frame-low", false},
	16: {"tx-usecs-low", false}, 17: {"tx-frame-low", false}, 18: {"pkt-rate-high", false},
	19: {"rx-usecs-high", false}, 20: {"rx-frame-high", false}, 21: {"tx-usecs-high", false},
	22: {"tx-frame-high", false}, 23: {"sample-interval", false}, 24: {"cqe-mode-tx", true},
	25: {"cqe-mode-rx", true}, 26: {"tx-aggr-max-bytes", false}, 27: {"tx-aggr-max-frames", false},
	28: {"tx-aggr-time-usecs", false},
}

// decodeCoalesce reads ETHTOOL_MSG_COALESCE_GET's reply: the attributes
// the kernel put, by ethtool's names (the kernel leaves out what the
// driver does not support).
func decodeCoalesce(b []byte) (map[string]uint32, error) {
	out := map[string]uint32{}
	err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		c, ok := coalesceNames[typ]
		if !ok {
			return nil
		}
		if c.u8 {
			v, err := ethnl.U8(ad, c.name)
			out[c.name] = uint32(v)
			return err
		}
		v, err := ethnl.U32(ad, c.name)
		out[c.name] = v
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// stringSets are the kernel's string sets by id.
type stringSets map[uint32][]string

// decodeStrset reads ETHTOOL_MSG_STRSET_GET's reply. A set's strings
// are placed at their index; the count bounds them.
func decodeStrset(b []byte) (stringSets, error) {
	out := stringSets{}
	err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		if typ != ethnlStrsetStringsets {
			return nil
		}
		return ethnl.Attrs(ad.Bytes(), func(typ uint16, set *netlink.AttributeDecoder) error {
			if typ != ethnlStringsetsSet {
				return nil
			}
			id, strs, err := decodeStringset(set.Bytes())
			if err != nil {
				return err
			}
			out[id] = strs
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func decodeStringset(b []byte) (uint32, []string, error) {
	var id, count uint32
	var haveID, haveCount bool
	var raw []byte
	err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		var err error
		switch typ {
		case ethnlStringsetID:
			id, err = ethnl.U32(ad, "string set id")
			haveID = true
		case ethnlStringsetCount:
			count, err = ethnl.U32(ad, "string set count")
			haveCount = true
		case ethnlStringsetStrings:
			raw = ad.Bytes()
		}
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	if !haveID || !haveCount {
		return 0, nil, fmt.Errorf("a string set without its id or count")
	}
	if count > maxStringsetStrings {
		return 0, nil, fmt.Errorf("string set %d: %d strings, more than %d", id, count, maxStringsetStrings)
	}
	strs := make([]string, count)
	seen := make([]bool, count)
	err = ethnl.Attrs(raw, func(typ uint16, ad *netlink.AttributeDecoder) error {
		if typ != ethnlStringsString {
			return nil
		}
		idx, s, err := decodeString(ad.Bytes())
		if err != nil {
			return err
		}
		if idx >= count || seen[idx] {
			return fmt.Errorf("string set %d: string index %d out of range or repeated", id, idx)
		}
		strs[idx], seen[idx] = s, true
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	for i, ok := range seen {
		if !ok {
			return 0, nil, fmt.Errorf("string set %d: no string %d of %d", id, i, count)
		}
	}
	return id, strs, nil
}

func decodeString(b []byte) (uint32, string, error) {
	var idx uint32
	var s string
	var haveIdx, haveVal bool
	err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		var err error
		switch typ {
		case ethnlStringIndex:
			idx, err = ethnl.U32(ad, "string index")
			haveIdx = true
		case ethnlStringValue:
			s, err = ethnl.Str(ad, "string value")
			haveVal = true
		}
		return err
	})
	if err == nil && (!haveIdx || !haveVal) {
		err = fmt.Errorf("a string without its index or value")
	}
	return idx, s, err
}

// bitset is a verbose ethtool bitset: its size and the bits set.
type bitset struct {
	size uint32
	on   map[uint32]bool
}

// decodeBitset reads a verbose bitset (ETHTOOL_A_BITSET_*): without a
// mask (NOMASK) the bits listed are those set; with one, a bit is set
// when it carries the VALUE flag.
func decodeBitset(b []byte) (bitset, error) {
	bs := bitset{on: map[uint32]bool{}}
	var nomask, haveSize bool
	var list []byte
	err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		var err error
		switch typ {
		case ethnlBitsetNomask:
			nomask = true
		case ethnlBitsetSize:
			bs.size, err = ethnl.U32(ad, "bitset size")
			haveSize = true
		case ethnlBitsetBits:
			list = ad.Bytes()
		case 4, 5: // VALUE, MASK: a compact bitset
			err = fmt.Errorf("a compact bitset, asked for a verbose one")
		}
		return err
	})
	if err != nil {
		return bs, err
	}
	if !haveSize {
		return bs, fmt.Errorf("a bitset without its size")
	}
	err = ethnl.Attrs(list, func(typ uint16, ad *netlink.AttributeDecoder) error {
		if typ != ethnlBitsetBitsBit {
			return nil
		}
		idx, value, err := decodeBit(ad.Bytes())
		if err != nil {
			return err
		}
		if idx >= bs.size {
			return fmt.Errorf("bit %d past the bitset's size %d", idx, bs.size)
		}
		if nomask || value {
			bs.on[idx] = true
		}
		return nil
	})
	return bs, err
}

func decodeBit(b []byte) (uint32, bool, error) {
	var idx uint32
	var value, haveIdx bool
	err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		var err error
		switch typ {
		case ethnlBitsetBitIndex:
			idx, err = ethnl.U32(ad, "bit index")
			haveIdx = true
		case ethnlBitsetBitValue:
			value = true
		}
		return err
	})
	if err == nil && !haveIdx {
		err = fmt.Errorf("a bit without its index")
	}
	return idx, value, err
}

// decodeFeatures reads ETHTOOL_MSG_FEATURES_GET's reply against the
// feature names (ETH_SS_FEATURES): on is the active bit, fixed is what
// ethtool -k marks [fixed]: not changeable by hardware, or never
// changeable.
func decodeFeatures(b []byte, names []string) (map[string]Feature, error) {
	var hw, active, nochange bitset
	var got int
	err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		var err error
		switch typ {
		case ethnlFeaturesHW:
			hw, err = decodeBitset(ad.Bytes())
			got++
		case ethnlFeaturesActive:
			active, err = decodeBitset(ad.Bytes())
			got++
		case ethnlFeaturesNochange:
			nochange, err = decodeBitset(ad.Bytes())
			got++
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if got != 3 {
		return nil, fmt.Errorf("the reply lacks the hw, active or nochange bitset")
	}
	if int(active.size) != len(names) {
		return nil, fmt.Errorf("%d features, the kernel's string set names %d", active.size, len(names))
	}
	out := make(map[string]Feature, len(names))
	for i, name := range names {
		if name == "" {
			// A bit the kernel's netdev_features_strings leaves unnamed
			// (a retired feature): ethtool -k does not show it either.
			continue
		}
		idx := uint32(i)
		out[name] = Feature{On: active.on[idx], Fixed: !hw.on[idx] || nochange.on[idx]}
	}
	return out, nil
}

// rssReply is one RSS_GET reply decoded: the context, and whether the
// table and key were there.
type rssReply struct {
	rss      RSS
	hfunc    uint32
	hasTable bool
	hasKey   bool
}

// decodeRSS reads an RSS_GET reply; names are ETH_SS_RSS_HASH_FUNCS.
// The hash function is a mask whose set bit's index names it in the
// string set.
func decodeRSS(b []byte, names []string) (rssReply, error) {
	var r rssReply
	err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		var err error
		switch typ {
		case ethnlRSSContext:
			r.rss.Context, err = ethnl.U32(ad, "context")
		case ethnlRSSHfunc:
			r.hfunc, err = ethnl.U32(ad, "hfunc")
		case ethnlRSSIndir:
			r.rss.Table, err = decodeTable(ad.Bytes())
			r.hasTable = true
		case ethnlRSSHkey:
			r.rss.Key = append([]byte(nil), ad.Bytes()...)
			r.hasKey = true
		case ethnlRSSInputXfrm:
			err = setU32(&r.rss.InputXfrm, ad, "input_xfrm")
		}
		return err
	})
	if err != nil {
		return r, err
	}
	if r.hfunc != 0 {
		r.rss.HashFunc, err = hashFuncName(r.hfunc, names)
	}
	return r, err
}

func hashFuncName(mask uint32, names []string) (string, error) {
	if bits.OnesCount32(mask) != 1 {
		return "", fmt.Errorf("hash function mask %#x has not exactly one bit set", mask)
	}
	i := bits.TrailingZeros32(mask)
	if names == nil {
		return "", nil // the string set is unknown: so is the name
	}
	if i >= len(names) {
		return "", fmt.Errorf("hash function bit %d is not in the kernel's %d hash function names", i, len(names))
	}
	return names[i], nil
}

// decodeTable reads ETHTOOL_A_RSS_INDIR: u32 queue numbers.
func decodeTable(b []byte) ([]uint32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("indirection table of %d bytes, not whole u32s", len(b))
	}
	t := make([]uint32, len(b)/4)
	for i := range t {
		t[i] = native.Uint32(b[4*i:])
	}
	return t, nil
}
