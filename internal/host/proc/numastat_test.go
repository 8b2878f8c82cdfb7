package proc

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// numaStat68 is memory.numa_stat as Linux 6.8's memory_numa_stat_show
// writes it on a two-node host: every node-level type of memory_stats[]
// in its order, " N%d=%llu" for each node with memory.
const numaStat68 = `anon N0=1048576 N1=209715200
file N0=4096 N1=52428800
kernel_stack N0=0 N1=65536
pagetables N0=8192 N1=413696
sec_pagetables N0=0 N1=0
shmem N0=0 N1=0
file_mapped N0=0 N1=12288000
file_dirty N0=0 N1=0
file_writeback N0=0 N1=0
swapcached N0=0 N1=0
anon_thp N0=0 N1=188743680
file_thp N0=0 N1=0
shmem_thp N0=0 N1=0
inactive_anon N0=1048576 N1=209715200
active_anon N0=0 N1=0
inactive_file N0=4096 N1=40960000
active_file N0=0 N1=11468800
unevictable N0=0 N1=0
slab_reclaimable N0=2048 N1=301056
slab_unreclaimable N0=4096 N1=233472
workingset_refault_anon N0=0 N1=0
workingset_refault_file N0=0 N1=0
workingset_activate_anon N0=0 N1=0
workingset_activate_file N0=0 N1=0
workingset_restore_anon N0=0 N1=0
workingset_restore_file N0=0 N1=0
workingset_nodereclaim N0=0 N1=0
`

func mustNumaStat(t *testing.T, s string) NumaStat {
	t.Helper()
	st, err := parseNumaStat(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestParseNumaStat(t *testing.T) {
	st := mustNumaStat(t, numaStat68)
	if len(st) != 27 || st["anon_thp"][1] != 188743680 || st["workingset_nodereclaim"][0] != 0 {
		t.Errorf("parseNumaStat(6.8) = %v", st)
	}
	if diff := cmpDiff(map[int]uint64{0: 1048576 + 4096, 1: 209715200 + 52428800}, st.Footprint()); diff != "" {
		t.Errorf("Footprint (-want +got):\n%s", diff)
	}
	// A node without memory is left out of every line; a type the kernel
	// adds later is read by name wherever it is.
	st = mustNumaStat(t, "zswapped N0=7\nanon N0=1 N2=3\nfile N0=0 N2=5\n")
	if diff := cmpDiff(map[int]uint64{0: 1, 2: 8}, st.Footprint()); diff != "" {
		t.Errorf("Footprint with node 1 memoryless (-want +got):\n%s", diff)
	}
	bad := []struct{ give, want string }{
		{"", "empty"},
		{"anon N0=1\nfile N0=1", "not terminated"},
		{"anon N0=1\n", `no "file" line`},
		{"file N0=1\n", `no "anon" line`},
		{"anon N0=1\nfile N0=1\nanon N0=2\n", `line 3: type "anon" repeats`},
		{"anon N0=1 N0=2\nfile N0=1\n", "line 1: anon: node 0 repeats"},
		{"anon N0=1\nfile N0=1\n\n", "line 3"},
		{"anon  N0=1\nfile N0=1\n", `line 1: anon: "" is not N<node>=<bytes>`},
		{"anon N0=1 \nfile N0=1\n", "line 1"},
		{"anon N0=-1\nfile N0=1\n", "not a decimal count"},
		{"anon N0=+1\nfile N0=1\n", "not a decimal count"},
		{"anon N0=18446744073709551616\nfile N0=1\n", "not a decimal count"},
		{"anon N1024=1\nfile N0=1\n", "node 0-1023"},
		{"anon N01=1\nfile N0=1\n", "not N<node>"},
		{"anon n0=1\nfile N0=1\n", "not N<node>"},
		{"anon N0:1\nfile N0=1\n", "not N<node>"},
		{"anon=1 N0=1\nfile N0=1\n", "does not start with a memory type"},
		{"anon\tN0=1\nfile N0=1\n", "does not start with a memory type"},
		// memory.stat's layout is not numa_stat's.
		{"anon 1048576\nfile 4096\n", "not N<node>"},
		// v1's memory.numa_stat is not v2's.
		{"total=5 N0=5\nfile=2 N0=2\nanon=3 N0=3\n", "does not start with a memory type"},
	}
	for _, tt := range bad {
		if got, err := parseNumaStat(tt.give); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseNumaStat(%q) = %v, %v; want an error saying %q", tt.give, got, err, tt.want)
		}
	}
}

// TestReadNumaStatMalformed: a memory.numa_stat that does not parse
// leaves the group's memory unknown, naming the file and what is wrong;
// the group itself is read.
func TestReadNumaStatMalformed(t *testing.T) {
	root := v2Tree(t)
	putTree(t, root, map[string]string{"sys/fs/cgroup/" + podScope + "/memory.numa_stat": "anon N0=x\nfile N0=1\n"})
	g, err := ReadCgroup(hosttest.Open(t, root), "/"+podScope)
	if err != nil || g.NumaStat.Known() || !g.CPUs.Known() ||
		!strings.Contains(g.NumaStat.Why().Detail, podScope+"/memory.numa_stat: line 1: anon: \"N0=x\"") {
		t.Errorf("ReadCgroup with a bad memory.numa_stat = %+v, %v", g, err)
	}
}

func FuzzParseNumaStat(f *testing.F) {
	for _, s := range []string{numaStat68, "anon N0=1 N2=3\nfile N0=0 N2=5\n", "anon\nfile\n", "anon N0=1 N0=2\nfile N0=1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := parseNumaStat(s)
		if err != nil {
			return
		}
		// What parsed prints back (types sorted, nodes ascending) and
		// parses to the same.
		var b strings.Builder
		for _, typ := range slices.Sorted(maps.Keys(st)) {
			b.WriteString(typ)
			for _, n := range slices.Sorted(maps.Keys(st[typ])) {
				fmt.Fprintf(&b, " N%d=%d", n, st[typ][n])
			}
			b.WriteByte('\n')
		}
		again, err := parseNumaStat(b.String())
		if err != nil || !cmp.Equal(again, st) {
			t.Fatalf("round trip of %v = %v, %v", st, again, err)
		}
		var sum, anonFile uint64
		for _, b := range st.Footprint() {
			sum += b
		}
		for _, typ := range []string{"anon", "file"} {
			for _, b := range st[typ] {
				anonFile += b
			}
		}
		if sum != anonFile {
			t.Fatalf("Footprint of %v sums to %d, want %d", st, sum, anonFile)
		}
	})
}
