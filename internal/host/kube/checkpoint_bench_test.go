package kube

import (
	"fmt"
	"strings"
	"testing"
)

// bigCheckpoint is a v2 checkpoint of n pods, each with one container
// on one CPU, pod i's UID uidN(i).
func bigCheckpoint(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"policyName":"static","defaultCpuSet":"0-1","entries":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%s":{"c":"%d"}`, uidN(i), 2+i%62)
	}
	b.WriteString(`},"checksum":1}`)
	return []byte(b.String())
}

func uidN(i int) string { return fmt.Sprintf("%08x-5a4f-4e2b-9c8d-0123456789ab", i) }

// BenchmarkParseCheckpoint: a 300,000-entry checkpoint, one pod asked.
func BenchmarkParseCheckpoint(b *testing.B) {
	ck := bigCheckpoint(300000)
	want := Want{UIDs: map[string]bool{uidN(123456): true}, IDs: map[string]bool{}}
	b.SetBytes(int64(len(ck)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseCheckpoint(ck, want); err != nil {
			b.Fatal(err)
		}
	}
}
