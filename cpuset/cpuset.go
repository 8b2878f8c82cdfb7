// Package cpuset is the one set type irqnuma uses for CPUs and NUMA nodes, with
// the kernel's textual forms: the list form of /sys and smp_affinity_list
// ("0-3,8-11"), the mask form of /proc/irq/N/smp_affinity ("ffff0000,0000ffff")
// and the single hexadecimal number taskset takes ("0xffff0000ffff0000").
//
// A Set is an immutable value of any size: every operation returns a new Set
// and never changes its operands, so a Set can be shared freely.
package cpuset

import (
	"cmp"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"strconv"
	"strings"
)

// MaxID is the largest CPU or node id a Set holds. Linux caps CONFIG_NR_CPUS
// far below it; the bound keeps a hostile "0-4000000000" from allocating
// gigabytes.
const MaxID = 1<<20 - 1

// Set is an immutable set of non-negative ids (CPUs or NUMA nodes).
// The zero value is the empty set.
//
// A Set costs what it holds, not what its largest id is: it keeps runs of
// consecutive ids, so {1048575}, {0,1048575} and 0-1048575 are one or two
// runs each, where a bitmap from 0 would take 128 KB.
type Set struct {
	// r holds the members as runs, ascending and apart (each run ends at
	// least two below the next one's start), so equal sets have equal
	// slices. It is never changed once the Set is made.
	r []run
}

// run is the ids lo to hi, both included.
type run struct{ lo, hi int32 }

// New returns the set of the given ids. It panics on an id outside
// [0, MaxID]: passing one is a programming error, not bad input.
func New(ids ...int) Set {
	var b builder
	for _, id := range ids {
		if id < 0 || id > MaxID {
			panic("cpuset.New: id " + strconv.Itoa(id) + " out of range")
		}
		b.add(id)
	}
	return b.set()
}

// Range returns the set {lo, lo+1, ..., hi}; it is empty when hi < lo.
func Range(lo, hi int) Set {
	if hi < lo {
		return Set{}
	}
	if lo < 0 || hi > MaxID {
		panic("cpuset.Range: bounds out of range")
	}
	return Set{r: []run{{int32(lo), int32(hi)}}}
}

// builder accumulates runs; set() hands out the canonical result. Runs
// added in ascending order merge as they come; one out of order makes
// set() sort and merge them all.
type builder struct {
	r        []run
	unsorted bool
}

func (b *builder) add(id int) { b.addRange(id, id) }

func (b *builder) addRange(lo, hi int) {
	l, h := int32(lo), int32(hi)
	if n := len(b.r); n > 0 && !b.unsorted {
		last := &b.r[n-1]
		switch {
		case l >= last.lo && l <= last.hi+1:
			last.hi = max(last.hi, h)
			return
		case l < last.lo:
			b.unsorted = true
		}
	}
	b.r = append(b.r, run{l, h})
}

func (b *builder) set() Set {
	if b.unsorted {
		slices.SortFunc(b.r, func(x, y run) int { return cmp.Compare(x.lo, y.lo) })
		out := b.r[:0]
		for _, x := range b.r {
			if n := len(out); n > 0 && x.lo <= out[n-1].hi+1 {
				out[n-1].hi = max(out[n-1].hi, x.hi)
				continue
			}
			out = append(out, x)
		}
		b.r = out
	}
	return Set{r: clip(b.r)}
}

// clip returns r with no spare capacity, or nil when it is empty. When
// most of r's array is spare (runs merged), the runs move to one of their
// size, so a set never keeps more than twice what it holds.
func clip(r []run) []run {
	switch {
	case len(r) == 0:
		return nil
	case cap(r) > 2*len(r)+4:
		return append([]run(nil), r...)
	}
	return r[:len(r):len(r)]
}

// IsEmpty reports whether s has no members.
func (s Set) IsEmpty() bool { return len(s.r) == 0 }

// Len returns the number of members.
func (s Set) Len() int {
	n := 0
	for _, x := range s.r {
		n += int(x.hi-x.lo) + 1
	}
	return n
}

// Contains reports whether id is a member.
func (s Set) Contains(id int) bool {
	r := s.r
	for len(r) > 8 { // halve to a few runs, then look through them
		if m := len(r) / 2; int(r[m].hi) < id {
			r = r[m+1:]
		} else {
			r = r[:m+1]
		}
	}
	for _, x := range r {
		if id <= int(x.hi) {
			return id >= int(x.lo)
		}
	}
	return false
}

// Equal reports whether s and o have the same members.
func (s Set) Equal(o Set) bool { return slices.Equal(s.r, o.r) }

// IsSubsetOf reports whether every member of s is in o.
func (s Set) IsSubsetOf(o Set) bool {
	j := 0
	for _, x := range s.r {
		for j < len(o.r) && o.r[j].hi < x.lo {
			j++
		}
		if j == len(o.r) || o.r[j].lo > x.lo || o.r[j].hi < x.hi {
			return false
		}
	}
	return true
}

// Intersects reports whether s and o share a member.
func (s Set) Intersects(o Set) bool {
	i, j := 0, 0
	for i < len(s.r) && j < len(o.r) {
		switch a, b := s.r[i], o.r[j]; {
		case a.hi < b.lo:
			i++
		case b.hi < a.lo:
			j++
		default:
			return true
		}
	}
	return false
}

// Union returns s ∪ o.
func (s Set) Union(o Set) Set {
	switch {
	case len(o.r) == 0:
		return s
	case len(s.r) == 0:
		return o
	}
	out := make([]run, 0, len(s.r)+len(o.r))
	i, j := 0, 0
	for i < len(s.r) || j < len(o.r) {
		var x run
		if j == len(o.r) || (i < len(s.r) && s.r[i].lo <= o.r[j].lo) {
			x = s.r[i]
			i++
		} else {
			x = o.r[j]
			j++
		}
		if n := len(out); n > 0 && x.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, x.hi)
			continue
		}
		out = append(out, x)
	}
	return Set{r: clip(out)}
}

// Intersection returns s ∩ o.
func (s Set) Intersection(o Set) Set {
	var out []run
	i, j := 0, 0
	for i < len(s.r) && j < len(o.r) {
		a, b := s.r[i], o.r[j]
		if lo, hi := max(a.lo, b.lo), min(a.hi, b.hi); lo <= hi {
			if out == nil {
				out = make([]run, 0, min(len(s.r)-i, len(o.r)-j)*2)
			}
			out = append(out, run{lo, hi})
		}
		if a.hi < b.hi {
			i++
		} else {
			j++
		}
	}
	return Set{r: clip(out)}
}

// Difference returns the members of s that are not in o.
func (s Set) Difference(o Set) Set {
	if len(s.r) == 0 || len(o.r) == 0 {
		return s
	}
	out := make([]run, 0, len(s.r)+len(o.r))
	j := 0
	for _, x := range s.r {
		for j < len(o.r) && o.r[j].hi < x.lo {
			j++
		}
		lo := x.lo
		for k := j; k < len(o.r) && o.r[k].lo <= x.hi; k++ {
			if o.r[k].lo > lo {
				out = append(out, run{lo, o.r[k].lo - 1})
			}
			lo = max(lo, o.r[k].hi+1)
		}
		if lo <= x.hi {
			out = append(out, run{lo, x.hi})
		}
	}
	return Set{r: clip(out)}
}

// Min returns the smallest member, or false when s is empty.
func (s Set) Min() (int, bool) {
	if len(s.r) == 0 {
		return 0, false
	}
	return int(s.r[0].lo), true
}

// Max returns the largest member, or false when s is empty.
func (s Set) Max() (int, bool) {
	if len(s.r) == 0 {
		return 0, false
	}
	return int(s.r[len(s.r)-1].hi), true
}

// All yields the members in ascending order.
func (s Set) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for _, x := range s.r {
			for id := int(x.lo); id <= int(x.hi); id++ {
				if !yield(id) {
					return
				}
			}
		}
	}
}

// IDs returns the members in ascending order.
func (s Set) IDs() []int {
	out := make([]int, 0, s.Len())
	for id := range s.All() {
		out = append(out, id)
	}
	return out
}

// Nth returns the n-th smallest member (from 0), or false when s has
// fewer than n+1 members.
func (s Set) Nth(n int) (int, bool) {
	if n < 0 {
		return 0, false
	}
	for _, x := range s.r {
		if c := int(x.hi-x.lo) + 1; n >= c {
			n -= c
			continue
		}
		return int(x.lo) + n, true
	}
	return 0, false
}

// First returns the set of the k smallest members (all of s when it has
// fewer than k).
func (s Set) First(k int) Set {
	if k <= 0 {
		return Set{}
	}
	for i, x := range s.r {
		c := int(x.hi-x.lo) + 1
		if c < k {
			k -= c
			continue
		}
		out := make([]run, i+1)
		copy(out, s.r[:i])
		out[i] = run{x.lo, x.lo + int32(k) - 1}
		return Set{r: out}
	}
	return s // fewer than k members; s is immutable, so sharing it is safe
}

// String returns the kernel list form, e.g. "0-3,8-11"; "" for the empty set.
func (s Set) String() string { return s.List() }

// List returns the kernel list form, e.g. "0-3,8-11"; "" for the empty set.
func (s Set) List() string {
	if len(s.r) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.Grow(min(len(s.r)*8, 1<<16))
	var num [20]byte
	for i, x := range s.r {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.Write(strconv.AppendInt(num[:0], int64(x.lo), 10))
		if x.hi > x.lo {
			sb.WriteByte('-')
			sb.Write(strconv.AppendInt(num[:0], int64(x.hi), 10))
		}
	}
	return sb.String()
}

// MarshalJSON encodes s as its list form string.
func (s Set) MarshalJSON() ([]byte, error) { return json.Marshal(s.List()) }

// UnmarshalJSON decodes a list form string. JSON null leaves s unchanged,
// as encoding/json does for other types.
func (s *Set) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return err
	}
	v, err := ParseList(str)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ListFlag holds a CPU list given on the command line in the kernel's
// list form ("0-3,8"). It is a flag.Value (and a pflag.Value): Set parses
// strictly and refuses an empty list, so a bad value is the flag's error.
type ListFlag struct{ CPUs Set }

// String is the list form of the CPUs.
func (f *ListFlag) String() string { return f.CPUs.List() }

// Set parses s, surrounding spaces allowed.
func (f *ListFlag) Set(s string) error {
	set, err := ParseList(strings.TrimSpace(s))
	if err != nil {
		return err
	}
	if set.IsEmpty() {
		return errors.New("empty CPU list")
	}
	f.CPUs = set
	return nil
}

// Type names the value in help ("cpus").
func (f *ListFlag) Type() string { return "cpus" }
