// Package cpuset is the one set type irqnuma uses for CPUs and NUMA nodes, with
// the kernel's textual forms: the list form of /sys and smp_affinity_list
// ("0-3,8-11"), the mask form of /proc/irq/N/smp_affinity ("ffff0000,0000ffff")
// and the single hexadecimal number taskset takes ("0xffff0000ffff0000").
//
// A Set is an immutable value of any size: every operation returns a new Set
// and never changes its operands, so a Set can be shared freely.
package cpuset

import (
	"encoding/json"
	"errors"
	"iter"
	"math/bits"
	"strconv"
	"strings"
)

// MaxID is the largest CPU or node id a Set holds. Linux caps CONFIG_NR_CPUS
// far below it; the bound keeps a hostile "0-4000000000" from allocating
// gigabytes.
const MaxID = 1<<20 - 1

// Set is an immutable set of non-negative ids (CPUs or NUMA nodes).
// The zero value is the empty set.
type Set struct {
	// w holds bit i of the set in w[i/64]; it never ends in a zero word,
	// so equal sets have equal slices.
	w []uint64
}

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
	var b builder
	b.addRange(lo, hi)
	return b.set()
}

// builder accumulates ids; set() hands out the trimmed result.
type builder struct{ w []uint64 }

func (b *builder) grow(id int) {
	if n := id/64 + 1; n > len(b.w) {
		if n <= cap(b.w) {
			b.w = b.w[:n]
		} else {
			nw := make([]uint64, n, max(n, 2*cap(b.w)))
			copy(nw, b.w)
			b.w = nw
		}
	}
}

func (b *builder) add(id int) {
	b.grow(id)
	b.w[id/64] |= 1 << uint(id%64)
}

func (b *builder) addRange(lo, hi int) {
	b.grow(hi)
	for i := lo; i <= hi; {
		if i%64 == 0 && hi-i >= 63 {
			b.w[i/64] = ^uint64(0)
			i += 64
			continue
		}
		b.w[i/64] |= 1 << uint(i%64)
		i++
	}
}

func (b *builder) set() Set { return Set{w: trim(b.w)} }

func trim(w []uint64) []uint64 {
	n := len(w)
	for n > 0 && w[n-1] == 0 {
		n--
	}
	if n == 0 {
		return nil
	}
	return w[:n:n]
}

// IsEmpty reports whether s has no members.
func (s Set) IsEmpty() bool { return len(s.w) == 0 }

// Len returns the number of members.
func (s Set) Len() int {
	n := 0
	for _, w := range s.w {
		n += bits.OnesCount64(w)
	}
	return n
}

// Contains reports whether id is a member.
func (s Set) Contains(id int) bool {
	if id < 0 || id/64 >= len(s.w) {
		return false
	}
	return s.w[id/64]&(1<<uint(id%64)) != 0
}

// Equal reports whether s and o have the same members.
func (s Set) Equal(o Set) bool {
	if len(s.w) != len(o.w) {
		return false
	}
	for i := range s.w {
		if s.w[i] != o.w[i] {
			return false
		}
	}
	return true
}

// IsSubsetOf reports whether every member of s is in o.
func (s Set) IsSubsetOf(o Set) bool {
	if len(s.w) > len(o.w) {
		return false
	}
	for i := range s.w {
		if s.w[i]&^o.w[i] != 0 {
			return false
		}
	}
	return true
}

// Intersects reports whether s and o share a member.
func (s Set) Intersects(o Set) bool {
	for i := range min(len(s.w), len(o.w)) {
		if s.w[i]&o.w[i] != 0 {
			return true
		}
	}
	return false
}

// Union returns s ∪ o.
func (s Set) Union(o Set) Set {
	a, b := s.w, o.w
	if len(a) < len(b) {
		a, b = b, a
	}
	w := make([]uint64, len(a))
	copy(w, a)
	for i := range b {
		w[i] |= b[i]
	}
	return Set{w: trim(w)}
}

// Intersection returns s ∩ o.
func (s Set) Intersection(o Set) Set {
	n := min(len(s.w), len(o.w))
	w := make([]uint64, n)
	for i := range n {
		w[i] = s.w[i] & o.w[i]
	}
	return Set{w: trim(w)}
}

// Difference returns the members of s that are not in o.
func (s Set) Difference(o Set) Set {
	w := make([]uint64, len(s.w))
	copy(w, s.w)
	for i := range min(len(w), len(o.w)) {
		w[i] &^= o.w[i]
	}
	return Set{w: trim(w)}
}

// Min returns the smallest member, or false when s is empty.
func (s Set) Min() (int, bool) {
	for i, w := range s.w {
		if w != 0 {
			return i*64 + bits.TrailingZeros64(w), true
		}
	}
	return 0, false
}

// Max returns the largest member, or false when s is empty.
func (s Set) Max() (int, bool) {
	if len(s.w) == 0 {
		return 0, false
	}
	i := len(s.w) - 1
	return i*64 + 63 - bits.LeadingZeros64(s.w[i]), true
}

// All yields the members in ascending order.
func (s Set) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for i, w := range s.w {
			for w != 0 {
				t := bits.TrailingZeros64(w)
				if !yield(i*64 + t) {
					return
				}
				w &= w - 1
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
	for i, w := range s.w {
		c := bits.OnesCount64(w)
		if n >= c {
			n -= c
			continue
		}
		for ; n > 0; n-- {
			w &= w - 1
		}
		return i*64 + bits.TrailingZeros64(w), true
	}
	return 0, false
}

// First returns the set of the k smallest members (all of s when it has
// fewer than k).
func (s Set) First(k int) Set {
	if k <= 0 {
		return Set{}
	}
	for i, w := range s.w {
		c := bits.OnesCount64(w)
		if c < k {
			k -= c
			continue
		}
		for ; c > k; c-- { // drop the c-k highest members of this word
			w &^= 1 << uint(63-bits.LeadingZeros64(w))
		}
		out := make([]uint64, i+1)
		copy(out, s.w[:i])
		out[i] = w
		return Set{w: out}
	}
	return s // fewer than k members; s is immutable, so sharing it is safe
}

// String returns the kernel list form, e.g. "0-3,8-11"; "" for the empty set.
func (s Set) String() string { return s.List() }

// List returns the kernel list form, e.g. "0-3,8-11"; "" for the empty set.
func (s Set) List() string {
	if len(s.w) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.Grow(64)
	var num [20]byte
	for lo := s.nextSet(0); lo >= 0; {
		hi := s.nextClear(lo) - 1
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.Write(strconv.AppendInt(num[:0], int64(lo), 10))
		if hi > lo {
			sb.WriteByte('-')
			sb.Write(strconv.AppendInt(num[:0], int64(hi), 10))
		}
		lo = s.nextSet(hi + 1)
	}
	return sb.String()
}

// nextSet returns the smallest member >= i, or -1 when there is none.
func (s Set) nextSet(i int) int {
	wi := i / 64
	if wi >= len(s.w) {
		return -1
	}
	w := s.w[wi] &^ (1<<uint(i%64) - 1)
	for w == 0 {
		if wi++; wi >= len(s.w) {
			return -1
		}
		w = s.w[wi]
	}
	return wi*64 + bits.TrailingZeros64(w)
}

// nextClear returns the smallest non-member >= i.
func (s Set) nextClear(i int) int {
	wi := i / 64
	if wi >= len(s.w) {
		return i
	}
	w := ^s.w[wi] &^ (1<<uint(i%64) - 1)
	for w == 0 {
		if wi++; wi >= len(s.w) {
			return wi * 64
		}
		w = ^s.w[wi]
	}
	return wi*64 + bits.TrailingZeros64(w)
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
