package nicset

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/mdlayher/netlink"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// ethtool netlink's set messages and their attributes
// (include/uapi/linux/ethtool_netlink_generated.h).
const (
	ethnlVersion = 1

	ethnlMsgRingsSet    = 16
	ethnlMsgChannelsSet = 18
	// ETHTOOL_MSG_RSS_SET (6.17 and later); before it the table is set
	// with ETHTOOL_SRSSH, as ethtool -X does.
	ethnlMsgRSSSet = 48

	// Every request's header is attribute 1; in it the device's name.
	ethnlAttrHeader    = 1
	ethnlHeaderDevName = 2

	ethnlChannelsRXCount       = 6
	ethnlChannelsTXCount       = 7
	ethnlChannelsOtherCount    = 8
	ethnlChannelsCombinedCount = 9
	ethnlRingsTCPDataSplit     = 11
	ethnlRingsHDSThresh        = 17
	ethnlRSSIndir              = 4
	ethnlRSSHkey               = 5

	ethnlTCPDataSplitUnset = 0
	ethnlTCPDataSplitOff   = 1
	ethnlTCPDataSplitOn    = 2
)

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
func checkChannels(n *steer.NIC, c ChannelCounts) error {
	if n.Channels == nil {
		return fmt.Errorf("%s channels: %w: %s", n.Name, ErrReadBack, n.Unknown[steer.PartChannels])
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

func dataSplitValue(v DataSplit) (uint8, bool) {
	switch v {
	case DataSplitDefault:
		return ethnlTCPDataSplitUnset, true
	case DataSplitOff:
		return ethnlTCPDataSplitOff, true
	case DataSplitOn:
		return ethnlTCPDataSplitOn, true
	}
	return 0, false
}

// checkRings says whether n's rings are r's. tcp-data-split "unknown"
// asks for the driver's default, which reads back as on or off: any
// value is it.
func checkRings(n *steer.NIC, r RingSetting) error {
	if n.Rings == nil {
		return fmt.Errorf("%s rings: %w: %s", n.Name, ErrReadBack, n.Unknown[steer.PartRings])
	}
	if w := r.TCPDataSplit; w != nil && *w != DataSplitDefault {
		if !unknown.Is(n.Rings.TCPDataSplit, steer.TCPDataSplit(*w)) {
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
	f, err := s.family("ethtool")
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

// checkRSS says whether n's table and key are r's. A default table is
// the kernel's ethtool_rxfh_indir_default over the rx rings.
func checkRSS(n *steer.NIC, r RSSSetting) error {
	if n.RSS == nil {
		return fmt.Errorf("%s rss: %w: %s", n.Name, ErrReadBack, n.Unknown[steer.PartRSS])
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
