package steer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestBoundCounts: a channels or RSS-rings count is checked against the
// rx and tx queues /sys/class/net shows and against the kernel's queue
// bound before anything uses it; a count past either is dropped, and
// the part is unknown as malformed, naming the value and the bound.
func TestBoundCounts(t *testing.T) {
	tests := []struct {
		name     string
		give     func(n *NIC)
		noQueues bool // the root has no queues folder
		wantPart Part // "" when every count stands
		want     string
	}{
		{name: "as the host has", give: func(n *NIC) {}},
		{name: "combined past the rx queues", give: func(n *NIC) { n.Channels.Combined = 9 },
			wantPart: PartChannels, want: "claims 9 combined and rx channels, but /sys/class/net shows 8 rx queues"},
		{name: "rx-only past the rx queues", give: func(n *NIC) { n.Channels.RX = 1 },
			wantPart: PartChannels, want: "claims 9 combined and rx channels"},
		{name: "combined and rx wrapping a u32", give: func(n *NIC) { n.Channels.Combined, n.Channels.RX = 1<<32-1, 9 },
			wantPart: PartChannels, want: "claims 4294967295 combined channels, more than the 65535 queues"},
		{name: "a maximum past the kernel's bound", give: func(n *NIC) { n.Channels.MaxCombined = 1 << 31 },
			wantPart: PartChannels, want: "claims 2147483648 max combined channels"},
		{name: "more rings than rx queues", give: func(n *NIC) { n.RSS.Rings = 1 << 24 },
			wantPart: PartRSSRings, want: "claims 16777216 rx rings, more than the 65535 queues"},
		{name: "one ring too many", give: func(n *NIC) { n.RSS.Rings = 9 },
			wantPart: PartRSSRings, want: "claims 9 rx rings, but /sys/class/net shows 8 rx queues"},
		{name: "without the queues folder a count stands", noQueues: true, give: func(n *NIC) { n.Channels.Combined, n.RSS.Rings = 64, 64 }},
		{name: "without the queues folder the kernel's bound holds", noQueues: true, give: func(n *NIC) { n.Channels.Combined = 70000 },
			wantPart: PartChannels, want: "claims 70000 combined channels, more than the 65535 queues"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			n := modelNIC(0, 8, 64)
			tt.give(n)
			writeRecorded(t, root, []*NIC{n})
			if tt.noQueues {
				if err := os.RemoveAll(filepath.Join(root, "sys/class/net/eth0/queues")); err != nil {
					t.Fatal(err)
				}
			}
			h, err := Read(openTree(t, root), []string{"eth0"})
			if err != nil {
				t.Fatal(err)
			}
			got := h.NICs[0]
			for _, p := range []Part{PartChannels, PartRSSRings} {
				r, isUnknown := got.Why(p)
				switch {
				case p == tt.wantPart && (r.Kind != unknown.KindMalformed || !strings.Contains(r.Detail, tt.want)):
					t.Errorf("%s: %v, want malformed saying %q", p, r, tt.want)
				case p != tt.wantPart && isUnknown:
					t.Errorf("%s unknown (%v), want it read", p, r)
				}
			}
			if tt.wantPart == PartChannels && got.Channels != nil {
				t.Errorf("channels %+v kept beside the malformed reason", *got.Channels)
			}
			if tt.wantPart == PartRSSRings && got.RSS.Rings != 0 {
				t.Errorf("RSS rings %d kept beside the malformed reason", got.RSS.Rings)
			}
		})
	}
}

// TestBoundRingsU64: GRXRINGS answers a __u64; a count past the u32 the
// reading holds is malformed, never truncated (2^32+8 is not 8 rings).
func TestBoundRingsU64(t *testing.T) {
	root := t.TempDir()
	writeRecorded(t, root, []*NIC{modelNIC(0, 8, 64)})
	b := newRxnfc(ethtoolGRXRings, rxnfcSize)
	native.PutUint64(b[rxnfcData:], 1<<32+8)
	if err := os.WriteFile(filepath.Join(root, recordDir, "eth0", "ioctl.rxrings"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := Read(openTree(t, root), []string{"eth0"})
	if err != nil {
		t.Fatal(err)
	}
	n := h.NICs[0]
	if r, _ := n.Why(PartRSSRings); r.Kind != unknown.KindMalformed || !strings.Contains(r.Detail, "4294967304 rx rings") || n.RSS.Rings != 0 {
		t.Errorf("rings %d, %v; want 0 and malformed naming 4294967304", n.RSS.Rings, r)
	}
}
