package steer

import (
	"fmt"

	"github.com/irqnuma/irqnuma/internal/unknown"
)

// A count in a reply is a claim, not a size: channels and RSS rings are
// checked here, after a source has read them, against what the host shows
// beside them before any reader or judge sizes anything by them.

// maxQueues is the kernel's own bound on a device's queue count: an skb
// records the queue it was received on as queue_mapping = index + 1 and
// the queue it is sent on as queue_mapping, a __u16
// (include/linux/skbuff.h: skb_record_rx_queue, skb_set_queue_mapping),
// so no device steers among more than 65,535 queues of either kind.
const maxQueues = 1<<16 - 1

// sysQueues is how many rx-N and tx-N folders /sys/class/net/IF/queues
// holds (the kernel's real_num_rx_queues and real_num_tx_queues). A
// device has at least one queue of each kind, so 0 is a root that does
// not show them (a capture without the folder), never a count.
type sysQueues struct {
	rx, tx int
}

// bound drops the counts of n that claim more queues than the host has:
// the channels (combined plus rx against the rx queues in sysfs, combined
// plus tx against the tx ones, every count and maximum against
// maxQueues) and the RSS rings (against the rx queues), each then unknown
// as malformed with the value and the bound it passed.
func (n *NIC) bound(sq sysQueues) {
	if c := n.Channels; c != nil {
		if why := channelsClaim(*c, sq); why != "" {
			n.Channels = nil
			n.SetUnknown(PartChannels, unknown.Reason{Kind: unknown.KindMalformed, Detail: why})
		}
	}
	if r := n.RSS; r != nil && r.Rings > 0 {
		if why := countClaim("rx rings", uint64(r.Rings), sq.rx, "rx"); why != "" {
			r.Rings = 0
			n.SetUnknown(PartRSSRings, unknown.Reason{Kind: unknown.KindMalformed, Detail: why})
		}
	}
}

// channelsClaim says what is wrong with c's counts, or "".
func channelsClaim(c Channels, sq sysQueues) string {
	for _, f := range []struct {
		name string
		v    uint32
	}{{"max rx", c.MaxRX}, {"max tx", c.MaxTX}, {"max other", c.MaxOther}, {"max combined", c.MaxCombined},
		{"rx", c.RX}, {"tx", c.TX}, {"other", c.Other}, {"combined", c.Combined}} {
		if f.v > maxQueues {
			return fmt.Sprintf("claims %d %s channels, more than the %d queues a device can have", f.v, f.name, maxQueues)
		}
	}
	if why := countClaim("combined and rx channels", uint64(c.Combined)+uint64(c.RX), sq.rx, "rx"); why != "" {
		return why
	}
	return countClaim("combined and tx channels", uint64(c.Combined)+uint64(c.TX), sq.tx, "tx")
}

// countClaim says what is wrong with a claim of v queues of kind (rx or
// tx) given the have of them sysfs shows (0: not shown), or "".
func countClaim(what string, v uint64, have int, kind string) string {
	switch {
	case v > maxQueues:
		return fmt.Sprintf("claims %d %s, more than the %d queues a device can have", v, what, maxQueues)
	case have > 0 && v > uint64(have):
		return fmt.Sprintf("claims %d %s, but /sys/class/net shows %d %s %s", v, what, have, kind, queuesNoun(have))
	}
	return ""
}

func queuesNoun(n int) string {
	if n == 1 {
		return "queue"
	}
	return "queues"
}
