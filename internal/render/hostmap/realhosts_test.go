package hostmap

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// mapRealHosts are the captures TestMapRealHosts draws, one of each shape
// (unpacking all of them takes long): a one-node VM, isolated CPUs, 70 NICs
// on interleaved nodes, 4 ARM nodes, offline CPUs, sparse node ids.
var mapRealHosts = []string{"cnto-sno", "cnto-worker1", "dell-2numa", "hwloc-128arm-2pa2n8cluster4co",
	"hwloc-16em64t-4s2c2t-offlines", "hwloc-48amd64-4pa2n6c-sparse"}

// TestMapRealHosts draws captured machines in testdata/realhosts:
// each node's cells are its CPUs (as other projects' answers give them,
// where there are answers), every IRQ of the NICs lands on the CPUs of
// its effective (else requested) affinity, the terminal picture fits 80
// columns and the SVG is well-formed and self-contained.
func TestMapRealHosts(t *testing.T) {
	realhosts.Require(t)
	for _, name := range mapRealHosts {
		t.Run(name, func(t *testing.T) {
			c := realhosts.MustLookup(t, name)
			root := realhosts.Root(t, c)
			h, tb := loadMapHost(t, root)
			m := audited(t, h, tb, nil, Options{})

			drawn := map[int]cpuset.Set{}
			for _, p := range m.Packages {
				for _, n := range p.Nodes {
					var ids []int
					for _, core := range n.Cores {
						for _, th := range core.Threads {
							if th.Online {
								ids = append(ids, th.ID)
							}
						}
					}
					drawn[n.ID.Or(-1)] = cpuset.New(ids...)
				}
			}
			want, err := realhosts.ExpectedNodes(c)
			switch {
			case errors.Is(err, realhosts.ErrNoExpected):
				t.Logf("no expected NUMA nodes: %v", err)
			case err != nil:
				t.Fatal(err)
			default:
				for id, cpus := range want {
					if !drawn[id].Equal(cpus) {
						t.Errorf("node %d drawn with online CPUs %s, want %s", id, drawn[id], cpus)
					}
				}
			}

			// Every placed queue IRQ is in the cells of its CPUs, and only there.
			where := map[int]cpuset.Set{}
			for i := range tb.IRQs {
				q := &tb.IRQs[i]
				if q.Owner == nil || q.Owner.Kind != "queue" {
					continue
				}
				if w, ok := audit.Place(h, q).Where.Get(); ok {
					where[q.IRQ] = w.Intersection(h.Possible)
				}
			}
			cells := map[int][]int{}
			for _, p := range m.Packages {
				for _, n := range p.Nodes {
					for _, core := range n.Cores {
						for _, th := range core.Threads {
							for _, mi := range th.IRQs {
								cells[mi.IRQ] = append(cells[mi.IRQ], th.ID)
							}
						}
					}
				}
			}
			for n, w := range where {
				if got := cpuset.New(cells[n]...); !got.Equal(w) {
					t.Errorf("IRQ %d drawn on %s, lands on %s", n, got, w)
				}
			}
			t.Logf("%d CPUs, %d nodes, %d NICs, %d queue IRQs drawn, %d conflicts, %d remote",
				len(h.CPUs), len(h.Nodes), len(m.NICs), len(where), len(m.Conflicts), len(m.Remote))

			var buf bytes.Buffer
			if err := WriteText(&buf, m, Style{}); err != nil {
				t.Fatal(err)
			}
			for i, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
				if n := utf8.RuneCountInString(l); n > DefaultWidth {
					t.Errorf("line %d is %d columns: %q", i+1, n, l)
				}
			}
			buf.Reset()
			if err := WriteSVG(&buf, m); err != nil {
				t.Fatal(err)
			}
			parseSVG(t, buf.Bytes())
		})
	}
}

// TestMapKeysDell: dell-2numa has 70 NICs with queue IRQs, more than the
// 52 letters, so each gets a distinct two-letter key; CPU 51 takes three
// IRQs of three NICs (840 ens3f1 queue 99, 964 ens3f1v2 queue 3, 982
// ens3f1v0 queue 1), which its cell says as "3+", not as three of one.
func TestMapKeysDell(t *testing.T) {
	realhosts.Require(t)
	c := realhosts.MustLookup(t, "dell-2numa")
	h, tb := loadMapHost(t, realhosts.Root(t, c))
	m := audited(t, h, tb, nil, Options{})
	seen := map[string]string{}
	for _, n := range m.NICs {
		if len(n.Key) != 2 {
			t.Errorf("NIC %s key %q, want two letters", n.Name, n.Key)
		}
		if other, ok := seen[n.Key]; ok {
			t.Errorf("NICs %s and %s share key %q", other, n.Name, n.Key)
		}
		seen[n.Key] = n.Name
	}
	if len(seen) != 70 {
		t.Errorf("%d keys, want 70", len(seen))
	}
	for id, want := range map[int]string{51: "3+", 99: "2+"} {
		if got := mustCPU(t, m, id).Label; got != want {
			t.Errorf("CPU %d label %q, want %q", id, got, want)
		}
	}
}

// TestMapAbsentCPUs: hwloc-32intel64-2p8co2t+8ve says possible 0-111 but
// has cpu0-cpu31 only (present 0-31, all online); the 80 others are no
// CPUs, neither online nor offline, so they get no cell, none is drawn
// offline, and a note and absent_cpus say which they are. Likewise
// hwloc-32em64t-2n8c+dax+nvme+mic+dimms: possible 0-127, cpu0-cpu15.
func TestMapAbsentCPUs(t *testing.T) {
	realhosts.Require(t)
	tests := []struct {
		capture       string
		drawn, absent string
		absentCount   int
	}{
		{"hwloc-32intel64-2p8co2t+8ve", "0-31", "32-111", 80},
		{"hwloc-32em64t-2n8c+dax+nvme+mic+dimms", "0-15", "16-127", 112},
	}
	for _, tt := range tests {
		c := realhosts.MustLookup(t, tt.capture)
		h, tb := loadMapHost(t, realhosts.Root(t, c))
		m := audited(t, h, tb, nil, Options{})
		var ids []int
		for _, p := range m.Packages {
			for _, n := range p.Nodes {
				for _, core := range n.Cores {
					for _, th := range core.Threads {
						ids = append(ids, th.ID)
						if !th.Online {
							t.Errorf("%s: CPU %d drawn offline", tt.capture, th.ID)
						}
					}
				}
			}
		}
		if got := cpuset.New(ids...).List(); got != tt.drawn {
			t.Errorf("%s: cells for CPUs %s, want %s", tt.capture, got, tt.drawn)
		}
		if m.AbsentCPUs.List() != tt.absent || m.AbsentCPUs.Len() != tt.absentCount {
			t.Errorf("%s: absent CPUs %s, want %s", tt.capture, m.AbsentCPUs, tt.absent)
		}
		note := fmt.Sprintf("%d possible CPUs are not present (no cpuN folder, not online): %s; not drawn", tt.absentCount, tt.absent)
		if !slices.Contains(m.Notes, note) {
			t.Errorf("%s: notes %q lack %q", tt.capture, m.Notes, note)
		}
	}
}
