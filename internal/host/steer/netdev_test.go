package steer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
)

// TestDecodeQueueProviders decodes queue-get messages as a 6.15+ kernel
// writes them (netdev_nl_queue_fill): the dmabuf id as a u32, io-uring
// and xsk as empty nests, each present only when the queue has one.
func TestDecodeQueueProviders(t *testing.T) {
	id := uint32(7)
	tests := []struct {
		name string
		give func(ae *netlink.AttributeEncoder)
		want NetdevQueue
	}{
		{"plain", func(ae *netlink.AttributeEncoder) {}, NetdevQueue{ID: 1, Type: QueueTypeRX, NAPI: 8193}},
		{"dmabuf", func(ae *netlink.AttributeEncoder) { ae.Uint32(netdevQueueDMABuf, id) },
			NetdevQueue{ID: 1, Type: QueueTypeRX, NAPI: 8193, DMABuf: &id}},
		{"io-uring", func(ae *netlink.AttributeEncoder) {
			ae.Nested(netdevQueueIOURing, func(*netlink.AttributeEncoder) error { return nil })
		}, NetdevQueue{ID: 1, Type: QueueTypeRX, NAPI: 8193, IOURing: true}},
		{"xsk", func(ae *netlink.AttributeEncoder) {
			ae.Nested(netdevQueueXSK, func(*netlink.AttributeEncoder) error { return nil })
		}, NetdevQueue{ID: 1, Type: QueueTypeRX, NAPI: 8193, XSK: true}},
	}
	for _, tt := range tests {
		b := enc(t, func(ae *netlink.AttributeEncoder) {
			ae.Uint32(netdevQueueID, 1)
			ae.Uint32(netdevQueueIfindex, 2)
			ae.Uint32(netdevQueueType, netdevQueueTypeRX)
			ae.Uint32(netdevQueueNAPIID, 8193)
			tt.give(ae)
		})
		got, err := decodeQueue(b)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, got, exportValues); diff != "" {
			t.Errorf("%s: decodeQueue (-want +got):\n%s", tt.name, diff)
		}
	}
	// A dmabuf id of the wrong size is an error naming it.
	b := enc(t, func(ae *netlink.AttributeEncoder) {
		ae.Uint32(netdevQueueID, 1)
		ae.Uint32(netdevQueueType, netdevQueueTypeRX)
		ae.Uint16(netdevQueueDMABuf, 7)
	})
	if _, err := decodeQueue(b); err == nil {
		t.Error("a 2-byte dmabuf id decoded without error")
	}
}
