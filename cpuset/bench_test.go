package cpuset_test

import (
	"fmt"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
)

// benchSets are the shapes irqnuma meets on big hosts: a whole machine
// (one range) and one NUMA node of a host whose nodes interleave even and
// odd CPUs (one list element per CPU, the worst case for the list form).
func benchSets() []struct {
	name  string
	nbits int
	set   cpuset.Set
} {
	var out []struct {
		name  string
		nbits int
		set   cpuset.Set
	}
	for _, n := range []int{1024, 4096} {
		var even []int
		for id := 0; id < n; id += 2 {
			even = append(even, id)
		}
		out = append(out,
			struct {
				name  string
				nbits int
				set   cpuset.Set
			}{fmt.Sprintf("cpus=%d/all", n), n, cpuset.Range(0, n-1)},
			struct {
				name  string
				nbits int
				set   cpuset.Set
			}{fmt.Sprintf("cpus=%d/even", n), n, cpuset.New(even...)},
		)
	}
	return out
}

func BenchmarkParseList(b *testing.B) {
	for _, bs := range benchSets() {
		s := bs.set.List()
		b.Run(bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if _, err := cpuset.ParseList(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseMask(b *testing.B) {
	for _, bs := range benchSets() {
		s := bs.set.Mask(bs.nbits)
		b.Run(bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if _, err := cpuset.ParseMask(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseTaskset(b *testing.B) {
	for _, bs := range benchSets() {
		s := bs.set.Taskset()
		b.Run(bs.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if _, err := cpuset.ParseTaskset(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkList(b *testing.B) {
	for _, bs := range benchSets() {
		b.Run(bs.name, func(b *testing.B) {
			for b.Loop() {
				_ = bs.set.List()
			}
		})
	}
}

func BenchmarkMask(b *testing.B) {
	for _, bs := range benchSets() {
		b.Run(bs.name, func(b *testing.B) {
			for b.Loop() {
				_ = bs.set.Mask(bs.nbits)
			}
		})
	}
}

func BenchmarkTaskset(b *testing.B) {
	for _, bs := range benchSets() {
		b.Run(bs.name, func(b *testing.B) {
			for b.Loop() {
				_ = bs.set.Taskset()
			}
		})
	}
}

func BenchmarkFirst(b *testing.B) {
	for _, bs := range benchSets() {
		k := bs.set.Len() / 2
		b.Run(bs.name, func(b *testing.B) {
			for b.Loop() {
				_ = bs.set.First(k)
			}
		})
	}
}

// BenchmarkOps measures what watch and audit do per sample and per IRQ:
// membership, the algebra against another set of the same shape shifted
// by one, and walking the members.
func BenchmarkOps(b *testing.B) {
	for _, bs := range benchSets() {
		other := cpuset.New(bs.set.IDs()...).Difference(cpuset.New(0)).Union(cpuset.New(bs.nbits - 1))
		n := bs.nbits
		b.Run("Contains/"+bs.name, func(b *testing.B) {
			for b.Loop() {
				for id := 0; id < n; id += 7 {
					_ = bs.set.Contains(id)
				}
			}
		})
		b.Run("Union/"+bs.name, func(b *testing.B) {
			for b.Loop() {
				_ = bs.set.Union(other)
			}
		})
		b.Run("Intersection/"+bs.name, func(b *testing.B) {
			for b.Loop() {
				_ = bs.set.Intersection(other)
			}
		})
		b.Run("Difference/"+bs.name, func(b *testing.B) {
			for b.Loop() {
				_ = bs.set.Difference(other)
			}
		})
		b.Run("IsSubsetOf/"+bs.name, func(b *testing.B) {
			for b.Loop() {
				_ = bs.set.IsSubsetOf(other)
			}
		})
		b.Run("All/"+bs.name, func(b *testing.B) {
			for b.Loop() {
				for range bs.set.All() {
				}
			}
		})
	}
}
