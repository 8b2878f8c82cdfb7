package proc

import (
	"fmt"
	"testing"
)

// BenchmarkSocketTable1M parses a million /proc/net/tcp rows (kernel
// format, tcp4_seq_show) into sockets: the cost of reading flows from the
// socket table, to set beside rsshash's BenchmarkToeplitz1M (hashing as
// many flows).
func BenchmarkSocketTable1M(b *testing.B) {
	const n = 1 << 20
	lines := make([][]byte, n)
	for i := range lines {
		lines[i] = fmt.Appendf(nil, "%4d: 0201A8C0:1451 %08X:%04X 01 00000000:00000000 00:00000000 00000000  1000        0 %d 1 0000000000000000 20 4 30 10 -1",
			i, 0x0000000a|uint32(i>>6)<<8, 32768+i&63, 100000+i)
	}
	if _, err := parseSocketLine("tcp", false, lines[1]); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, l := range lines {
			if _, err := parseSocketLine("tcp", false, l); err != nil {
				b.Fatal(err)
			}
		}
	}
}
