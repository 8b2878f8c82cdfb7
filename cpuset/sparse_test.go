package cpuset_test

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
)

// allocBytes returns the bytes f allocates per call, averaged over runs.
func allocBytes(runs int, f func()) uint64 {
	f() // warm up
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}

// TestCostIsMembersNotLargestID: a set naming CPU 1048575 costs a few
// bytes, however it is made, as does one spanning the whole range. A
// bitmap from 0 costs 128 KB for each (issue 27: 5,000 IRQs whose
// affinity names CPU 1048575 took 1.67 GB).
func TestCostIsMembersNotLargestID(t *testing.T) {
	top := cpuset.New(cpuset.MaxID)
	span := cpuset.New(0, cpuset.MaxID)
	all := cpuset.Range(0, cpuset.MaxID)
	tests := []struct {
		name string
		give func()
	}{
		{"ParseList top", func() { mustParse(t, fmt.Sprint(cpuset.MaxID)) }},
		{"ParseList 0 and top", func() { mustParse(t, fmt.Sprintf("0,%d", cpuset.MaxID)) }},
		{"ParseList everything", func() { mustParse(t, fmt.Sprintf("0-%d", cpuset.MaxID)) }},
		{"ParseList stride 1", func() { mustParse(t, fmt.Sprintf("0-%d:1", cpuset.MaxID)) }},
		{"New top", func() { cpuset.New(cpuset.MaxID) }},
		{"Range everything", func() { cpuset.Range(0, cpuset.MaxID) }},
		{"Union", func() { top.Union(cpuset.New(0)) }},
		{"Intersection", func() { span.Intersection(all) }},
		{"Difference", func() { all.Difference(span) }},
		{"First", func() { span.First(2) }},
	}
	for _, tt := range tests {
		if got := allocBytes(100, tt.give); got > 256 {
			t.Errorf("%s allocates %d bytes, want at most 256", tt.name, got)
		}
	}
	if got := all.Difference(span).Len(); got != cpuset.MaxID-1 {
		t.Errorf("Len of 0-%d without its ends = %d, want %d", cpuset.MaxID, got, cpuset.MaxID-1)
	}
}

func mustParse(t *testing.T, s string) cpuset.Set {
	t.Helper()
	set, err := cpuset.ParseList(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestPatternBound: a stride or group pattern makes at most 8192 runs
// (NR_CPUS), so a few bytes cannot cost megabytes; a pattern whose groups
// touch is one run whatever its length.
func TestPatternBound(t *testing.T) {
	for _, give := range []string{"0-16383:2", "0-32767:2/4", "1-16384:2", "0-1048575:1", "0-1048575:4/4", "0-16381:2,16383"} {
		if _, err := cpuset.ParseList(give); err != nil {
			t.Errorf("ParseList(%q) = %v, want no error", give, err)
		}
	}
	for _, give := range []string{"0-1048575:2", "0-16385:2", "0-16383:2,0-2:2", "0-1048575:1/2"} {
		_, err := cpuset.ParseList(give)
		if !errors.Is(err, cpuset.ErrSyntax) || !strings.Contains(err.Error(), "8192") {
			t.Errorf("ParseList(%q) = %v, want an ErrSyntax naming the bound 8192", give, err)
		}
	}
}

// model is the plain answer the Set's algebra is checked against.
type model map[int]bool

func (m model) ids() []int {
	var out []int
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// idsOf turns fuzz bytes into ids: pairs of bytes give an id, spread over
// small ids (where real sets live) and the whole range, and a byte >= 0xf0
// before a pair makes a short range, so runs meet, touch and overlap.
func idsOf(b []byte) model {
	m := model{}
	for i := 0; i+1 < len(b); i += 2 {
		id := int(b[i])<<8 | int(b[i+1])
		if id&1 == 1 {
			id = (id * 16) % (cpuset.MaxID + 1) // far ids
		} else {
			id %= 300 // near ids
		}
		n := 1
		if i+2 < len(b) && b[i+2] >= 0xf0 {
			n = int(b[i+2]-0xf0) + 2
			i++
		}
		for k := range n {
			if id+k <= cpuset.MaxID {
				m[id+k] = true
			}
		}
	}
	return m
}

// FuzzAlgebra checks every operation on two sets against a map: the sets
// are made unordered (New), and from the list form.
func FuzzAlgebra(f *testing.F) {
	f.Add([]byte{0, 2, 0, 4, 0xf3, 0, 3}, []byte{0, 3, 0xf1, 0xff, 0xff})
	f.Add([]byte{1, 1, 0, 0}, []byte{0, 0, 0xfa, 1, 1})
	f.Add([]byte{}, []byte{0, 8, 0, 6, 0, 4, 0, 2})
	f.Fuzz(func(t *testing.T, ab, bb []byte) {
		ma, mb := idsOf(ab), idsOf(bb)
		ia, ib := ma.ids(), mb.ids()
		rev := slices.Clone(ia)
		slices.Reverse(rev)
		a, b := cpuset.New(rev...), cpuset.New(ib...)
		if got := mustParse(t, a.List()); !got.Equal(a) {
			t.Fatalf("ParseList(%q) = %v, want %v", a.List(), got, a)
		}
		if got := a.IDs(); !slices.Equal(got, ia) && len(ia) > 0 {
			t.Fatalf("New(%v).IDs() = %v", rev, got)
		}
		check := func(op string, got cpuset.Set, want func(id int) bool) {
			t.Helper()
			var w []int
			for id := range ma {
				if want(id) {
					w = append(w, id)
				}
			}
			for id := range mb {
				if !ma[id] && want(id) {
					w = append(w, id)
				}
			}
			slices.Sort(w)
			if g := got.IDs(); !slices.Equal(g, w) && (len(g) > 0 || len(w) > 0) {
				t.Fatalf("%v %s %v = %v, want %v", a, op, b, got, cpuset.New(w...))
			}
			if !got.Equal(cpuset.New(w...)) || got.Len() != len(w) {
				t.Fatalf("%v %s %v = %v: not canonical, want %v", a, op, b, got, cpuset.New(w...))
			}
		}
		check("∪", a.Union(b), func(id int) bool { return ma[id] || mb[id] })
		check("∩", a.Intersection(b), func(id int) bool { return ma[id] && mb[id] })
		check("-", a.Difference(b), func(id int) bool { return ma[id] && !mb[id] })
		subset, meets := true, false
		for id := range ma {
			subset = subset && mb[id]
			meets = meets || mb[id]
		}
		if a.IsSubsetOf(b) != subset || a.Intersects(b) != meets || b.Intersects(a) != meets {
			t.Fatalf("%v ⊆ %v = %v, meets = %v; want %v, %v", a, b, a.IsSubsetOf(b), a.Intersects(b), subset, meets)
		}
		for _, id := range append(slices.Clone(ib), 0, 1, 299, 300, cpuset.MaxID, -1, cpuset.MaxID+1) {
			if a.Contains(id) != ma[id] {
				t.Fatalf("%v.Contains(%d) = %v, want %v", a, id, a.Contains(id), ma[id])
			}
		}
		for k := -1; k <= len(ia)+1; k++ {
			got, ok := a.Nth(k)
			if want := k >= 0 && k < len(ia); ok != want || (ok && got != ia[k]) {
				t.Fatalf("%v.Nth(%d) = %d, %v", a, k, got, ok)
			}
			want := cpuset.New(ia[:max(0, min(k, len(ia)))]...)
			if got := a.First(k); !got.Equal(want) {
				t.Fatalf("%v.First(%d) = %v, want %v", a, k, got, want)
			}
		}
		if lo, ok := a.Min(); ok != (len(ia) > 0) || (ok && lo != ia[0]) {
			t.Fatalf("%v.Min() = %d, %v", a, lo, ok)
		}
		if hi, ok := a.Max(); ok != (len(ia) > 0) || (ok && hi != ia[len(ia)-1]) {
			t.Fatalf("%v.Max() = %d, %v", a, hi, ok)
		}
	})
}
