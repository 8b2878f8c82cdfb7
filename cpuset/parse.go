package cpuset

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrSyntax is wrapped by every parse error, so callers can tell bad input
// from other failures with errors.Is.
var ErrSyntax = errors.New("invalid syntax")

func syntaxErr(form, s, why string) error {
	return fmt.Errorf("%s %s: %s: %w", form, quote(s), why, ErrSyntax)
}

// quote quotes input for an error. Input can be any length (a --cpus
// argument, a file): past 64 bytes the quote is cut, still recognisable by
// its start, and says how many bytes it left out.
func quote(s string) string {
	const keep = 64
	if len(s) <= keep {
		return strconv.Quote(s)
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d more bytes)", s[:cut], len(s)-cut)
}

// ParseList parses the kernel list form: comma-separated ids and ranges,
// "0-3,8-11". "" is the empty set. A range may carry a stride as taskset
// writes it ("0-10:2" = 0,2,4,...,10) or a group pattern as the kernel's
// bitmap_parselist reads it ("0-15:2/8" = 0,1,8,9). Anything else, such as
// "1,", ",3", "3-0", "-1" or "1--3", is an error wrapping ErrSyntax.
// The caller trims the kernel's trailing newline.
func ParseList(s string) (Set, error) {
	if s == "" {
		return Set{}, nil
	}
	b := builder{r: make([]run, 0, strings.Count(s, ",")+1)} // a run per element at most, bar patterns
	patternRuns := maxPatternRuns
	for part := range strings.SplitSeq(s, ",") {
		if part == "" {
			return Set{}, syntaxErr("cpu list", s, "empty element")
		}
		rng, pattern, hasPattern := strings.Cut(part, ":")
		loS, hiS, isRange := strings.Cut(rng, "-")
		lo, err := parseID(loS)
		if err != nil {
			return Set{}, syntaxErr("cpu list", s, err.Error())
		}
		hi := lo
		if isRange {
			if hi, err = parseID(hiS); err != nil {
				return Set{}, syntaxErr("cpu list", s, err.Error())
			}
			if hi < lo {
				return Set{}, syntaxErr("cpu list", s, fmt.Sprintf("range %d-%d runs backwards", lo, hi))
			}
		}
		if !hasPattern {
			b.addRange(lo, hi)
			continue
		}
		if !isRange {
			return Set{}, syntaxErr("cpu list", s, "stride without a range")
		}
		usedS, groupS, isGroup := strings.Cut(pattern, "/")
		used, err := parseID(usedS)
		if err != nil || used == 0 {
			return Set{}, syntaxErr("cpu list", s, fmt.Sprintf("bad stride %s", quote(pattern)))
		}
		var group int
		if !isGroup { // taskset stride a-b:s
			group = used
			used = 1
		} else if group, err = parseID(groupS); err != nil || group == 0 || used > group {
			return Set{}, syntaxErr("cpu list", s, fmt.Sprintf("bad group %s", quote(pattern)))
		}
		if used == group { // every id of the range
			b.addRange(lo, hi)
			continue
		}
		// Each group is a run of its own: a pattern makes as many runs
		// as it has groups, so their number is bounded.
		if (hi-lo)/group+1 > patternRuns {
			return Set{}, syntaxErr("cpu list", s, fmt.Sprintf("pattern %s names more than %d separate runs of ids", quote(part), maxPatternRuns))
		}
		for base := lo; base <= hi; base += group {
			b.addRange(base, min(base+used-1, hi))
			patternRuns--
		}
	}
	return b.set(), nil
}

// maxPatternRuns bounds the runs the strides and groups of one list make:
// "0-1048575:2" is 524,288 runs, where the kernel's own files never hold a
// pattern and no CPU list of a real host has more runs than it has CPUs,
// at most 8192 (NR_CPUS). Without the bound a few bytes of input would
// cost megabytes.
const maxPatternRuns = 8192

// parseID parses one decimal id in [0, MaxID]: digits only, no sign.
func parseID(s string) (int, error) {
	if s == "" {
		return 0, errors.New("missing number")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < '0' || c > '9' {
			return 0, fmt.Errorf("bad number %s", quote(s))
		}
	}
	if len(s) > 7 {
		return 0, fmt.Errorf("id %s too large", quote(s))
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	if n > MaxID {
		return 0, fmt.Errorf("id %d above %d", n, MaxID)
	}
	return n, nil
}

// ParseMask parses the kernel mask form of /proc/irq/N/smp_affinity:
// comma-separated groups of at most 8 hex digits (32 bits), most significant
// group first, e.g. "00040000,00000000" is CPU 50. The first group may be
// short ("3"); an empty group or a group over 32 bits is an error.
func ParseMask(s string) (Set, error) {
	if s == "" {
		return Set{}, syntaxErr("cpu mask", s, "empty")
	}
	ngroups := strings.Count(s, ",") + 1
	if ngroups*32 > MaxID+1 {
		return Set{}, syntaxErr("cpu mask", s, "too many groups")
	}
	var b descBuilder
	i := 0
	for g := range strings.SplitSeq(s, ",") {
		if g == "" {
			return Set{}, syntaxErr("cpu mask", s, fmt.Sprintf("empty group %d", i+1))
		}
		if len(g) > 8 {
			return Set{}, syntaxErr("cpu mask", s, fmt.Sprintf("group %s wider than 32 bits", quote(g)))
		}
		v, err := parseHex(g)
		if err != nil {
			return Set{}, syntaxErr("cpu mask", s, err.Error())
		}
		b.addBits((ngroups-1-i)*32, v) // the lowest id of this group
		i++
	}
	return b.set(), nil
}

// descBuilder collects runs from the highest id down, the order the mask
// forms print them in; set() turns them around.
type descBuilder struct{ r []run }

// addBits adds the set bits of v, whose bit 0 is id base. Every id added
// before is above base+63.
func (b *descBuilder) addBits(base int, v uint64) {
	for v != 0 {
		top := 63 - bits.LeadingZeros64(v)
		ones := bits.LeadingZeros64(^(v << uint(63-top))) // ones from top down
		lo := top - ones + 1
		if n := len(b.r); n > 0 && int(b.r[n-1].lo) == base+top+1 {
			b.r[n-1].lo = int32(base + lo)
		} else {
			b.r = append(b.r, run{int32(base + lo), int32(base + top)})
		}
		v &= 1<<uint(lo) - 1
	}
}

func (b *descBuilder) set() Set {
	slices.Reverse(b.r)
	return Set{r: clip(b.r)}
}

// ParseTaskset parses the single hexadecimal number taskset takes, with or
// without "0x": "0xffff0000ffff0000". Commas are not allowed here.
func ParseTaskset(s string) (Set, error) {
	h := s
	if strings.HasPrefix(h, "0x") || strings.HasPrefix(h, "0X") {
		h = h[2:]
	}
	if h == "" {
		return Set{}, syntaxErr("taskset mask", s, "no hex digits")
	}
	h = strings.TrimLeft(h, "0")
	if len(h)*4 > MaxID+1 {
		return Set{}, syntaxErr("taskset mask", s, "too long")
	}
	var b descBuilder
	for i := 0; i < len(h); {
		n := len(h) - i // digits left, this chunk's among them
		chunk := (n-1)%16 + 1
		v, err := parseHex(h[i : i+chunk])
		if err != nil {
			return Set{}, syntaxErr("taskset mask", s, err.Error())
		}
		b.addBits((n-chunk)*4, v)
		i += chunk
	}
	return b.set(), nil
}

func parseHex(g string) (uint64, error) {
	var v uint64
	for i := 0; i < len(g); i++ {
		d, ok := hexDigit(g[i])
		if !ok {
			return 0, fmt.Errorf("bad hex digit %q", g[i])
		}
		v = v<<4 | uint64(d)
	}
	return v, nil
}

// hexVal maps a byte to its hex digit value, or 0xff when it is not one.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
		t[c-'a'+'A'] = byte(c - 'a' + 10)
	}
	return t
}()

func hexDigit(c byte) (byte, bool) {
	d := hexVal[c]
	return d, d != 0xff
}

const hexDigits = "0123456789abcdef"

// writeHex writes the low ndigits hex digits of v, zero-padded.
func writeHex(sb *strings.Builder, v uint64, ndigits int) {
	for d := ndigits - 1; d >= 0; d-- {
		sb.WriteByte(hexDigits[v>>uint(4*d)&0xf])
	}
}

// Mask returns the kernel mask form padded the way the kernel prints a
// bitmap of nbits bits ("%*pb"): 32-bit groups, most significant first, the
// first group as wide as its bits need, e.g. "3" for nbits 2 and
// "ffff,ffffffff" for 48. When s has members at or above nbits the mask
// widens to hold them.
func (s Set) Mask(nbits int) string {
	if m, ok := s.Max(); ok && m+1 > nbits {
		nbits = m + 1
	}
	if nbits <= 0 {
		nbits = 1
	}
	chunk := nbits % 32
	if chunk == 0 {
		chunk = 32
	}
	ngroups := (nbits + 31) / 32
	w := s.words((nbits + 63) / 64)
	var sb strings.Builder
	sb.Grow((chunk+3)/4 + (ngroups-1)*9)
	for i := (ngroups - 1) * 32; i >= 0; i -= 32 {
		v := uint32(w[i/64] >> uint(i%64))
		if chunk < 32 {
			v &= 1<<uint(chunk) - 1
		}
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		writeHex(&sb, uint64(v), (chunk+3)/4)
		chunk = 32
	}
	return sb.String()
}

// words returns the members below n*64 as a bitmap of n words: id i is
// bit i%64 of word i/64.
func (s Set) words(n int) []uint64 {
	w := make([]uint64, n)
	for _, x := range s.r {
		lo, hi := int(x.lo), min(int(x.hi), n*64-1)
		for lo <= hi {
			end := min(hi, lo|63) // the last id of this run in lo's word
			m := ^uint64(0) >> uint(63-(end-lo))
			w[lo/64] |= m << uint(lo%64)
			lo = end + 1
		}
	}
	return w
}

// Taskset returns the single hex number taskset takes, "0xffff0000";
// "0x0" for the empty set.
func (s Set) Taskset() string {
	m, ok := s.Max()
	if !ok {
		return "0x0"
	}
	w := s.words(m/64 + 1)
	top := w[len(w)-1]
	topDigits := (64 - bits.LeadingZeros64(top) + 3) / 4
	var sb strings.Builder
	sb.Grow(2 + topDigits + 16*(len(w)-1))
	sb.WriteString("0x")
	writeHex(&sb, top, topDigits)
	for i := len(w) - 2; i >= 0; i-- {
		writeHex(&sb, w[i], 16)
	}
	return sb.String()
}
