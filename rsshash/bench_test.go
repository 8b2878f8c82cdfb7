package rsshash

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// million is how many flows one iteration of the benchmarks hashes.
const million = 1 << 20

var msKey = []byte{
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
}

// flows returns n distinct IPv4 TCP 4-tuples: peers 10.x.y.z to one
// server port, as a busy server's socket table holds them.
func flows(n int) []Tuple {
	out := make([]Tuple, n)
	dst := netip.AddrPortFrom(netip.MustParseAddr("192.168.1.2"), 5201)
	for i := range out {
		var a [4]byte
		binary.BigEndian.PutUint32(a[:], 0x0a000000|uint32(i>>6))
		out[i] = Tuple{Src: netip.AddrPortFrom(netip.AddrFrom4(a), uint16(32768+i&63)), Dst: dst}
	}
	return out
}

// BenchmarkToeplitz1M hashes a million flows (input laid out, hashed,
// table index taken) bit by bit, as the definition reads; compare
// BenchmarkToeplitzTable1M and proc's BenchmarkSocketTable1M.
func BenchmarkToeplitz1M(b *testing.B) {
	fs := flows(million)
	var sink uint32
	buf := make([]byte, 0, 36)
	for b.Loop() {
		for _, f := range fs {
			in, _ := AppendInput(buf[:0], "sdfn", f)
			h, _ := Toeplitz(msKey, in)
			sink ^= h & 127
		}
	}
	_ = sink
}

// BenchmarkToeplitzTable1M is BenchmarkToeplitz1M through the
// precomputed Table.
func BenchmarkToeplitzTable1M(b *testing.B) {
	fs := flows(million)
	tab, err := NewTable(msKey, 36)
	if err != nil {
		b.Fatal(err)
	}
	var sink uint32
	buf := make([]byte, 0, 36)
	for b.Loop() {
		for _, f := range fs {
			in, _ := AppendInput(buf[:0], "sdfn", f)
			h, _ := tab.Hash(in)
			sink ^= h & 127
		}
	}
	_ = sink
}
