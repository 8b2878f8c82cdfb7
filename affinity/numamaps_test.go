package affinity

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
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
	got, err := ReadNumaMaps(p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]uint64{0: 23 * 4, 1: 10*4 + 8*2048}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadNumaMaps (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(p, []byte("7f00 default N0=x kernelpagesize_kB=4\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadNumaMaps(p); err == nil {
		t.Error("ReadNumaMaps accepted N0=x")
	}
}
