// Package units prints quantities the way irqnuma's tables and messages
// show them.
package units

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Bytes prints a byte count in binary units, "125.8 GiB".
func Bytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// Plural is "1 queue IRQ" or "16 queue IRQs".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Ints joins integers with sep: "3,7,9".
func Ints(v []int, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}

// OrDash is s, or "-" for an empty cell.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Choose is one for n == 1, many otherwise: the verb or phrase that goes
// with a count ("shares a core with" or "share cores with").
func Choose(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// naturalCompare orders names with their numbers compared as numbers:
// eth2 before eth10.
func naturalCompare(x, y string) int {
	for x != "" && y != "" {
		dx, dy := digitRun(x), digitRun(y)
		if dx > 0 && dy > 0 {
			a, b := strings.TrimLeft(x[:dx], "0"), strings.TrimLeft(y[:dy], "0")
			if c := cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)); c != 0 {
				return c
			}
			x, y = x[dx:], y[dy:]
			continue
		}
		if x[0] != y[0] {
			return cmp.Compare(x[0], y[0])
		}
		x, y = x[1:], y[1:]
	}
	return cmp.Compare(len(x), len(y))
}

// digitRun is the length of the run of decimal digits s starts with.
func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// Names lists names (of NICs) in natural order, runs of names that
// differ only in a trailing number written once when there are three or
// more: "ens1f0v0-15, eth2, eth3, 0000:19:00.0-7".
func Names(names []string) string {
	type name struct {
		prefix string
		num    int // -1: no trailing number
		s      string
	}
	ns := make([]name, 0, len(names))
	for _, s := range names {
		i := len(s)
		for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
			i--
		}
		n := name{prefix: s[:i], num: -1, s: s}
		// A number with a leading zero ("eth01") is not counted on.
		if d := s[i:]; d != "" && len(d) <= 6 && (d == "0" || d[0] != '0') {
			n.num, _ = strconv.Atoi(d)
		} else {
			n.prefix = s
		}
		ns = append(ns, n)
	}
	slices.SortFunc(ns, func(x, y name) int { return naturalCompare(x.s, y.s) })
	var parts []string
	for i := 0; i < len(ns); {
		j := i + 1
		if ns[i].num >= 0 {
			for j < len(ns) && ns[j].prefix == ns[i].prefix && ns[j].num == ns[j-1].num+1 {
				j++
			}
		}
		if j-i < 3 {
			for _, n := range ns[i:j] {
				parts = append(parts, n.s)
			}
		} else {
			parts = append(parts, fmt.Sprintf("%s%d-%d", ns[i].prefix, ns[i].num, ns[j-1].num))
		}
		i = j
	}
	return strings.Join(parts, ", ")
}

// ReplaceName replaces each whole occurrence of the name nic in s by
// with: one not part of a longer name ("eth1" in "eth10" or "eth1.100"
// is left alone).
func ReplaceName(s, nic, with string) string {
	if nic == "" {
		return s
	}
	var b strings.Builder
	done := 0 // s[:done] is written
	for at := 0; ; {
		i := strings.Index(s[at:], nic)
		if i < 0 {
			b.WriteString(s[done:])
			return b.String()
		}
		i += at
		at = i + len(nic)
		if !nameByte(s, i-1) && !continuesName(s[at:]) {
			b.WriteString(s[done:i])
			b.WriteString(with)
			done = at
		}
	}
}

// nameByte reports whether s[i] is an ASCII letter or digit (false
// outside s).
func nameByte(s string, i int) bool {
	return i >= 0 && i < len(s) && (s[i]|0x20 >= 'a' && s[i]|0x20 <= 'z' || s[i] >= '0' && s[i] <= '9')
}

// continuesName reports whether rest, what follows a name, goes on with
// it: a letter or digit, or one of "._-@" then a letter or digit.
func continuesName(rest string) bool {
	return nameByte(rest, 0) || len(rest) > 1 && strings.IndexByte("._-@", rest[0]) >= 0 && nameByte(rest, 1)
}

// List prints numbers as the kernel prints a CPU or IRQ list: ascending,
// each run of consecutive numbers as "a-b", joined by commas ("0-3,8");
// duplicates count once and "" is no number. Unlike a cpuset.Set it holds
// any number a table, a rule or a reply names (an IRQ or queue of 2^32-1),
// built from the numbers given, never a set sized by the largest.
func List[T ~int | ~int64 | ~uint32 | ~uint64](ns []T) string {
	s := slices.Clone(ns)
	slices.Sort(s)
	s = slices.Compact(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, s[i])
		if j > i {
			b.WriteByte('-')
			fmt.Fprint(&b, s[j])
		}
		i = j + 1
	}
	return b.String()
}
