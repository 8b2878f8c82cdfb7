package proc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

func TestReadNumaMaps(t *testing.T) {
	// Lines as the kernel prints them: a 4 kB anonymous mapping on two
	// nodes, a 2 MB huge-page mapping on node 1, and a mapping with no
	// pages present.
	text := "55d4c3a00000 default file=/usr/bin/iperf3 mapped=30 N0=20 N1=10 kernelpagesize_kB=4\n" +
		"7f0000000000 bind:1 anon=8 dirty=8 N1=8 kernelpagesize_kB=2048\n" +
		"7ffd5a1e0000 default stack anon=3 dirty=3 N0=3 kernelpagesize_kB=4\n" +
		"7ffd5a3f0000 default\n"
	p := filepath.Join(t.TempDir(), "numa_maps")
	if err := os.WriteFile(p, []byte(text), 0o444); err != nil {
		t.Fatal(err)
	}
	got, err := readNumaMaps(hosttest.Open(t, "/"), p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]uint64{0: 23 * 4, 1: 10*4 + 8*2048}
	if diff := cmpDiff(want, got); diff != "" {
		t.Errorf("ReadNumaMaps (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(p, []byte("7f00 default N0=x kernelpagesize_kB=4\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if _, err := readNumaMaps(hosttest.Open(t, "/"), p); err == nil {
		t.Error("ReadNumaMaps accepted N0=x")
	}
}

// TestParseNumaMapsRefuses: garbage and overflow are errors naming the
// file and line, never a silently wrong or empty total.
func TestParseNumaMapsRefuses(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{"garbage here\n", "line 1"},
		{"7f0000000000 default anon=1 N0=1\nnot a mapping\n", "line 2"},
		{"7f0000000000 default N0=18446744073709551615 kernelpagesize_kB=4\n", "overflow"},
		{"7f0000000000 default N0=4611686018427387904 kernelpagesize_kB=4\n7f0000200000 default N1=4611686018427387904 kernelpagesize_kB=4\n", "overflow"},
		{"7f0000000000 default N0=1 kernelpagesize_kB=0\n", "page size"},
	}
	for _, tt := range tests {
		_, err := parseNumaMaps("proc/42/numa_maps", []byte(tt.give))
		if err == nil || !strings.Contains(err.Error(), "proc/42/numa_maps") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseNumaMaps(%q) = %v, want an error naming the file and %q", tt.give, err, tt.want)
		}
	}
}

func FuzzParseNumaMaps(f *testing.F) {
	f.Add([]byte("55d0c0000000 default anon=900 dirty=900 N0=900 kernelpagesize_kB=4\n7f0 bind:1 file=/x N1=3 kernelpagesize_kB=2048\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		kb, err := parseNumaMaps("numa_maps", b)
		if err != nil {
			return
		}
		var total uint64
		for _, v := range kb {
			if total+v < total {
				t.Fatalf("accepted a total that overflows: %v", kb)
			}
			total += v
		}
	})
}
