package steer

import (
	"fmt"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/mdlayher/netlink"
)

// netdev generic netlink (include/uapi/linux/netdev.h,
// Documentation/netlink/specs/netdev.yaml).
const (
	netdevVersion     = 1
	netdevCmdQueueGet = 10
	netdevCmdNAPIGet  = 11
	netdevCmdQStats   = 12

	netdevQueueID      = 1
	netdevQueueIfindex = 2
	netdevQueueType    = 3
	netdevQueueNAPIID  = 4
	netdevQueueDMABuf  = 5 // 6.12+: the dmabuf binding's id
	netdevQueueIOURing = 6 // 6.15+: an io_uring zero-copy area (empty nest)
	netdevQueueXSK     = 7 // 6.15+: an AF_XDP socket (empty nest)

	netdevNAPIIfindex       = 1
	netdevNAPIID            = 2
	netdevNAPIIRQ           = 3
	netdevNAPIPID           = 4
	netdevNAPIDeferHardIRQs = 5
	netdevNAPIGROFlush      = 6
	netdevNAPIIRQSuspend    = 7
	netdevNAPIThreaded      = 8
	netdevQStatsIfindex     = 1
	netdevQStatsQueueType   = 2
	netdevQStatsQueueID     = 3
	netdevQStatsScope       = 4
	netdevQStatsRxPackets   = 8
	netdevQStatsRxBytes     = 9
	netdevQStatsTxPackets   = 10
	netdevQStatsTxBytes     = 11
	netdevQStatsScopeQueue  = 1
	netdevQueueTypeRX       = 0
	netdevQueueTypeTX       = 1
)

func queueType(v uint32) (QueueType, error) {
	switch v {
	case netdevQueueTypeRX:
		return QueueTypeRX, nil
	case netdevQueueTypeTX:
		return QueueTypeTX, nil
	}
	return "", fmt.Errorf("queue type %d is neither rx nor tx", v)
}

// decodeQueue reads one queue-get message.
func decodeQueue(b []byte) (NetdevQueue, error) {
	var q NetdevQueue
	var haveID, haveType bool
	err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		var err error
		switch typ {
		case netdevQueueID:
			q.ID, err = ethnl.U32(ad, "queue id")
			haveID = true
		case netdevQueueType:
			var v uint32
			if v, err = ethnl.U32(ad, "queue type"); err == nil {
				q.Type, err = queueType(v)
			}
			haveType = true
		case netdevQueueNAPIID:
			q.NAPI, err = ethnl.U32(ad, "queue napi-id")
		case netdevQueueDMABuf:
			var v uint32
			if v, err = ethnl.U32(ad, "queue dmabuf"); err == nil {
				q.DMABuf = &v
			}
		case netdevQueueIOURing:
			q.IOURing = true
		case netdevQueueXSK:
			q.XSK = true
		}
		return err
	})
	if err == nil && (!haveID || !haveType) {
		err = fmt.Errorf("a queue without its id or type")
	}
	return q, err
}

// decodeNAPI reads one napi-get message.
func decodeNAPI(b []byte) (NAPI, error) {
	n := NAPI{IRQ: unknown.Not[int](NoIRQ)}
	var haveID bool
	err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		var err error
		var v uint32
		switch typ {
		case netdevNAPIID:
			n.ID, err = ethnl.U32(ad, "napi id")
			haveID = true
		case netdevNAPIIRQ:
			if v, err = ethnl.U32(ad, "napi irq"); err == nil {
				n.IRQ = unknown.Of(int(v))
			}
		case netdevNAPIPID:
			if v, err = ethnl.U32(ad, "napi pid"); err == nil {
				n.PID = int(v)
			}
		case netdevNAPIDeferHardIRQs:
			err = setU32(&n.DeferHardIRQs, ad, "defer-hard-irqs")
		case netdevNAPIGROFlush:
			err = setUint(&n.GROFlushTimeout, ad, "gro-flush-timeout")
		case netdevNAPIIRQSuspend:
			err = setUint(&n.IRQSuspendTimeout, ad, "irq-suspend-timeout")
		case netdevNAPIThreaded:
			var t uint64
			if t, err = ethnl.Uint(ad, "threaded"); err == nil {
				on := t != 0
				n.Threaded = &on
			}
		}
		return err
	})
	if err == nil && !haveID {
		err = fmt.Errorf("a NAPI without its id")
	}
	return n, err
}

func setUint(p **uint64, ad *netlink.AttributeDecoder, name string) error {
	v, err := ethnl.Uint(ad, name)
	if err == nil {
		*p = &v
	}
	return err
}

// decodeQStats reads one qstats-get message of queue scope: the queue,
// and its packets and bytes of its direction.
func decodeQStats(b []byte) (QStats, error) {
	var s QStats
	var haveID, haveType bool
	var rxp, rxb, txp, txb *uint64
	err := ethnl.Attrs(b, func(typ uint16, ad *netlink.AttributeDecoder) error {
		var err error
		switch typ {
		case netdevQStatsQueueID:
			s.Queue, err = ethnl.U32(ad, "qstats queue-id")
			haveID = true
		case netdevQStatsQueueType:
			var v uint32
			if v, err = ethnl.U32(ad, "qstats queue-type"); err == nil {
				s.Type, err = queueType(v)
			}
			haveType = true
		case netdevQStatsRxPackets:
			err = setUint(&rxp, ad, "rx-packets")
		case netdevQStatsRxBytes:
			err = setUint(&rxb, ad, "rx-bytes")
		case netdevQStatsTxPackets:
			err = setUint(&txp, ad, "tx-packets")
		case netdevQStatsTxBytes:
			err = setUint(&txb, ad, "tx-bytes")
		}
		return err
	})
	if err == nil && (!haveID || !haveType) {
		err = fmt.Errorf("queue stats without the queue's id or type")
	}
	if s.Type == QueueTypeRX {
		s.Packets, s.Bytes = rxp, rxb
	} else {
		s.Packets, s.Bytes = txp, txb
	}
	return s, err
}
