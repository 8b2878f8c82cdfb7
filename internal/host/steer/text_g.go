package steer

import (
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/unknown"
)

var ringKeys = map[string]bool{
	"RX": true, "RX Mini": true, "RX Jumbo": true, "TX": true,
	"RX Buf Len": true, "CQE Size": true, "TX Push": true, "RX Push": true,
	"TX push buff len": true, "TCP data split": true, "HDS thresh": true,
}

// ParseEthtoolG reads the output of ethtool -g (rings_reply_cb and the
// ioctl path's dump_ring): "Ring parameters for IF:", "Pre-set
// maximums:" with RX, RX Mini, RX Jumbo, TX (and, from newer ethtool, TX
// push buff len and HDS thresh), "Current hardware settings:" with the
// same four and, from newer ethtool, RX Buf Len, CQE Size, TX Push, RX
// Push, TX push buff len, TCP data split and HDS thresh. A capture may
// lack the section headers: the second "RX:" then starts the current
// settings, in ethtool's order. "n/a" is 0 for the four counts (the
// kernel reports none of that kind) and nil for the newer fields, "TCP
// data split: n/a" included: ethtool prints n/a when the kernel sent no
// ETHTOOL_A_RINGS_TCP_DATA_SPLIT (it sends none for "unknown", and older
// kernels have none), which the netlink reading has as nil. The error, wrapping ErrText,
// names what is missing or not ethtool's.
func ParseEthtoolG(b []byte) (*Rings, error) {
	m := newMaxCur("ethtool -g", "Ring parameters for ")
	if err := m.read(b, ringKeys); err != nil {
		return nil, err
	}
	want := []string{"RX", "RX Mini", "RX Jumbo", "TX"}
	if miss := missing(m.max, want); len(miss) > 0 {
		return nil, textErr(m.cmd, 0, "no maximum for %s", strings.Join(miss, ", "))
	}
	if miss := missing(m.cur, want); len(miss) > 0 {
		return nil, textErr(m.cmd, 0, "no current setting for %s", strings.Join(miss, ", "))
	}
	var r Rings
	for _, f := range []struct {
		sec  map[string]string
		name string
		key  string
		dst  *uint32
	}{
		{m.max, "maximum", "RX", &r.MaxRX}, {m.max, "maximum", "RX Mini", &r.MaxRXMini},
		{m.max, "maximum", "RX Jumbo", &r.MaxRXJumbo}, {m.max, "maximum", "TX", &r.MaxTX},
		{m.cur, "current", "RX", &r.RX}, {m.cur, "current", "RX Mini", &r.RXMini},
		{m.cur, "current", "RX Jumbo", &r.RXJumbo}, {m.cur, "current", "TX", &r.TX},
	} {
		v, err := m.u32(f.sec, f.name, f.key)
		if err != nil {
			return nil, err
		}
		*f.dst = v
	}
	if err := m.ringExtras(&r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ringExtras reads the fields newer ethtool prints, each nil when absent
// or "n/a".
func (m *maxCur) ringExtras(r *Rings) error {
	var err error
	for _, f := range []struct {
		sec map[string]string
		key string
		dst **uint32
	}{
		{m.max, "HDS thresh", &r.HDSThreshMax},
		{m.cur, "RX Buf Len", &r.RXBufLen},
		{m.cur, "CQE Size", &r.CQESize},
		{m.cur, "HDS thresh", &r.HDSThresh},
	} {
		if *f.dst, err = m.optU32(f.sec, f.key); err != nil {
			return err
		}
	}
	if r.TxPush, err = m.optBool("TX Push"); err != nil {
		return err
	}
	if r.RxPush, err = m.optBool("RX Push"); err != nil {
		return err
	}
	v, ok := m.cur["TCP data split"]
	if !ok {
		r.TCPDataSplit = unknown.Not[TCPDataSplit](DataSplitNotReported)
		return nil
	}
	switch v {
	case textNA:
		r.TCPDataSplit = unknown.Not[TCPDataSplit](DataSplitNA)
	case "on":
		r.TCPDataSplit = unknown.Of(TCPDataSplitEnabled)
	case "off":
		r.TCPDataSplit = unknown.Of(TCPDataSplitDisabled)
	default:
		return textErr(m.cmd, m.lineOf["TCP data split"], "TCP data split %q is not on, off or n/a", textClip(v))
	}
	return nil
}

func (m *maxCur) optU32(sec map[string]string, key string) (*uint32, error) {
	v, ok := sec[key]
	if !ok || v == textNA {
		return nil, nil
	}
	x, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return nil, textErr(m.cmd, m.lineOf[key], "%s %q is not a number", key, textClip(v))
	}
	u := uint32(x)
	return &u, nil
}

func (m *maxCur) optBool(key string) (*bool, error) {
	v, ok := m.cur[key]
	if !ok || v == textNA {
		return nil, nil
	}
	on, err := textOnOff(v)
	if err != nil {
		return nil, textErr(m.cmd, m.lineOf[key], "%s: %v", key, err)
	}
	return &on, nil
}
