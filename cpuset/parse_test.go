package cpuset_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
)

// The parse tables are package-level so the fuzz targets below can seed
// their corpora from them.

// union returns the union of sets, for writing wants.
func union(sets ...cpuset.Set) cpuset.Set {
	var u cpuset.Set
	for _, s := range sets {
		u = u.Union(s)
	}
	return u
}

// stride returns {lo, lo+step, ...} up to hi.
func stride(lo, hi, step int) cpuset.Set {
	var ids []int
	for id := lo; id <= hi; id += step {
		ids = append(ids, id)
	}
	return cpuset.New(ids...)
}

// words joins n copies of w with commas: the mask of n full 32-bit groups.
func words(w string, n int) string {
	return strings.TrimSuffix(strings.Repeat(w+",", n), ",")
}

var listTests = []struct {
	give string
	want cpuset.Set
}{
	{give: "", want: cpuset.Set{}},
	{give: "0", want: cpuset.New(0)},
	{give: "0-3,8-11", want: union(cpuset.Range(0, 3), cpuset.Range(8, 11))},
	{give: "1,3,5", want: cpuset.New(1, 3, 5)},
	{give: "5,1,3", want: cpuset.New(1, 3, 5)},
	{give: "1,1", want: cpuset.New(1)},
	{give: "0-3,2-5", want: cpuset.Range(0, 5)},
	{give: "0-0", want: cpuset.New(0)},
	{give: "007", want: cpuset.New(7)},
	{give: "62-65", want: cpuset.Range(62, 65)},
	{give: "0-63", want: cpuset.Range(0, 63)},
	{give: "0-127", want: cpuset.Range(0, 127)},
	// The seed host's IRQ targets.
	{give: "50", want: cpuset.New(50)},
	{give: "17", want: cpuset.New(17)},
	{give: "53", want: cpuset.New(53)},
	{give: "63", want: cpuset.New(63)},
	// taskset's stride: a-b:step.
	{give: "0-10:2", want: cpuset.New(0, 2, 4, 6, 8, 10)},
	{give: "0-10:3", want: cpuset.New(0, 3, 6, 9)},
	{give: "1-11:2", want: stride(1, 11, 2)},
	{give: "5-5:7", want: cpuset.New(5)},
	{give: "0-3:5", want: cpuset.New(0)},
	// bitmap_parselist's groups: a-b:used/group (Documentation/core-api/printk-formats
	// and lib/bitmap-str.c): "used" ids from the start of every "group".
	{give: "0-15:2/8", want: cpuset.New(0, 1, 8, 9)},
	{give: "0-1023:2/256", want: cpuset.New(0, 1, 256, 257, 512, 513, 768, 769)},
	{give: "8-11:4/4", want: cpuset.Range(8, 11)},
	{give: "0-9:3/4", want: cpuset.New(0, 1, 2, 4, 5, 6, 8, 9)},
	{give: "0-3,16-19:1/2", want: union(cpuset.Range(0, 3), cpuset.New(16, 18))},
	// Large hosts.
	{give: "0-1151", want: cpuset.Range(0, 1151)},
	{give: "0-4095", want: cpuset.Range(0, 4095)},
	{give: "0-4094:2", want: stride(0, 4095, 2)},
	{give: "0-575,1024-1599", want: union(cpuset.Range(0, 575), cpuset.Range(1024, 1599))},
	// MaxID is the last id accepted.
	{give: "1048575", want: cpuset.New(cpuset.MaxID)},
	{give: "0-1048575", want: cpuset.Range(0, cpuset.MaxID)},
	{give: "1048570-1048575:5", want: cpuset.New(1048570, cpuset.MaxID)},
}

var listErrTests = []string{
	"1,",
	",3",
	",",
	"1,,2",
	"3-0",
	"-1",
	"1-",
	"1--3",
	"1-3-5",
	"a",
	"1-a",
	"0x1",
	"+1",
	"1.5",
	" 1",
	"1 ",
	"1, 2",
	"1\n",
	"\uff11", // fullwidth digit one
	"1:2",
	"1-3:",
	"1-3:0",
	"1-3:a",
	"1-3:-1",
	"1-3:2:1",
	"1-3:2/",
	"1-3:/2",
	"1-3:2/0",
	"1-3:3/2",
	"1-3:1/2/3",
	"1048576",
	"0-1048576",
	"99999999",
	"4294967296",
	"18446744073709551617",
	"0-1048575:1048576",
}

func TestParseList(t *testing.T) {
	for _, tt := range listTests {
		got, err := cpuset.ParseList(tt.give)
		if err != nil {
			t.Errorf("ParseList(%q) error: %v", tt.give, err)
			continue
		}
		if !got.Equal(tt.want) {
			t.Errorf("ParseList(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

func TestParseListErrors(t *testing.T) {
	for _, give := range listErrTests {
		got, err := cpuset.ParseList(give)
		if !errors.Is(err, cpuset.ErrSyntax) {
			t.Errorf("ParseList(%q) = %v, %v; want an error wrapping ErrSyntax", give, got, err)
		}
		if !got.IsEmpty() {
			t.Errorf("ParseList(%q) returned %v with its error, want the empty set", give, got)
		}
	}
}

var maskTests = []struct {
	give string
	want cpuset.Set
}{
	{give: "0", want: cpuset.Set{}},
	{give: "00000000", want: cpuset.Set{}},
	{give: "00000000,00000000", want: cpuset.Set{}},
	{give: "1", want: cpuset.New(0)},
	{give: "3", want: cpuset.Range(0, 1)},
	{give: "fff", want: cpuset.Range(0, 11)},
	{give: "ffffffff", want: cpuset.Range(0, 31)},
	{give: "FFFFFFFF", want: cpuset.Range(0, 31)},
	{give: "aBcD", want: cpuset.New(0, 2, 3, 6, 7, 8, 9, 11, 13, 15)},
	{give: "1,00000000", want: cpuset.New(32)},
	{give: "ffff,ffffffff", want: cpuset.Range(0, 47)},
	{give: "00000000,00000001", want: cpuset.New(0)},
	{give: "00000000,00000000,00000001", want: cpuset.New(0)},
	{give: "80000000,00000000,00000000", want: cpuset.New(95)},
	{give: "ffff0000,ffff0000", want: union(cpuset.Range(16, 31), cpuset.Range(48, 63))},
	// The kernel's bitmap_parse takes at most 8 digits per group but does not
	// require 8 in the later groups either.
	{give: "1,1", want: cpuset.New(0, 32)},
	// The seed host's /proc/irq/N/smp_affinity values (64 CPUs).
	{give: "00040000,00000000", want: cpuset.New(50)},
	{give: "00000000,00020000", want: cpuset.New(17)},
	{give: "00200000,00000000", want: cpuset.New(53)},
	{give: "80000000,00000000", want: cpuset.New(63)},
	{give: "ffffffff,ffffffff", want: cpuset.Range(0, 63)},
	// Large hosts.
	{give: words("ffffffff", 36), want: cpuset.Range(0, 1151)},
	{give: words("ffffffff", 128), want: cpuset.Range(0, 4095)},
	{give: words("55555555", 128), want: stride(0, 4095, 2)},
	{give: "1," + words("00000000", 127), want: cpuset.New(4064)},
	// MaxID: 32,768 groups is the widest mask accepted.
	{give: "80000000," + words("00000000", 32767), want: cpuset.New(cpuset.MaxID)},
	{give: words("00000000", 32767) + ",1", want: cpuset.New(0)},
}

var maskErrTests = []string{
	"",
	",",
	"1,",
	",1",
	"1,,5",
	"1,,",
	"100000000",
	"1,100000000",
	"0x1",
	"g",
	"1,g",
	"-1",
	"+1",
	" 1",
	"1 ",
	"1, 2",
	"1\n",
	"1;2",
	"0," + words("00000000", 32768), // 32,769 groups
}

func TestParseMask(t *testing.T) {
	for _, tt := range maskTests {
		got, err := cpuset.ParseMask(tt.give)
		if err != nil {
			t.Errorf("ParseMask(%.40q) error: %v", tt.give, err)
			continue
		}
		if !got.Equal(tt.want) {
			t.Errorf("ParseMask(%.40q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

func TestParseMaskErrors(t *testing.T) {
	for _, give := range maskErrTests {
		got, err := cpuset.ParseMask(give)
		if !errors.Is(err, cpuset.ErrSyntax) {
			t.Errorf("ParseMask(%.40q) = %v, %v; want an error wrapping ErrSyntax", give, got, err)
		}
	}
}

var tasksetTests = []struct {
	give string
	want cpuset.Set
}{
	{give: "0", want: cpuset.Set{}},
	{give: "0x0", want: cpuset.Set{}},
	{give: "0x00000000", want: cpuset.Set{}},
	{give: "0x1", want: cpuset.New(0)},
	{give: "1", want: cpuset.New(0)},
	{give: "0X1", want: cpuset.New(0)},
	{give: "0x3", want: cpuset.Range(0, 1)},
	{give: "ff", want: cpuset.Range(0, 7)},
	{give: "0x0000ff", want: cpuset.Range(0, 7)},
	{give: "0xffff0000ffff0000", want: union(cpuset.Range(16, 31), cpuset.Range(48, 63))},
	{give: "0xFFFF0000FFFF0000", want: union(cpuset.Range(16, 31), cpuset.Range(48, 63))},
	{give: "0x8000000000000000", want: cpuset.New(63)},
	{give: "0x10000000000000000", want: cpuset.New(64)},
	{give: "0x10000000000000001", want: cpuset.New(0, 64)},
	// The seed host's targets as taskset would take them.
	{give: "0x4000000000000", want: cpuset.New(50)},
	{give: "0x20000", want: cpuset.New(17)},
	{give: "0x20000000000000", want: cpuset.New(53)},
	// Large hosts.
	{give: "0x" + strings.Repeat("f", 288), want: cpuset.Range(0, 1151)},
	{give: "0x" + strings.Repeat("f", 1024), want: cpuset.Range(0, 4095)},
	{give: "0x" + strings.Repeat("5", 1024), want: stride(0, 4095, 2)},
	// MaxID is the top bit of 262,144 digits; leading zeros do not count.
	{give: "0x8" + strings.Repeat("0", 262143), want: cpuset.New(cpuset.MaxID)},
	{give: "0x" + strings.Repeat("0", 300000) + "1", want: cpuset.New(0)},
}

var tasksetErrTests = []string{
	"",
	"0x",
	"0X",
	"x1",
	"0x0x1",
	"0xg",
	"0x1,0",
	"ffff,ffff",
	"00040000,00000000",
	"-0x1",
	"0x-1",
	"+1",
	" 0x1",
	"0x1 ",
	"0x1\n",
	"0x1" + strings.Repeat("0", 262144),
}

func TestParseTaskset(t *testing.T) {
	for _, tt := range tasksetTests {
		got, err := cpuset.ParseTaskset(tt.give)
		if err != nil {
			t.Errorf("ParseTaskset(%.40q) error: %v", tt.give, err)
			continue
		}
		if !got.Equal(tt.want) {
			t.Errorf("ParseTaskset(%.40q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

func TestParseTasksetErrors(t *testing.T) {
	for _, give := range tasksetErrTests {
		got, err := cpuset.ParseTaskset(give)
		if !errors.Is(err, cpuset.ErrSyntax) {
			t.Errorf("ParseTaskset(%.40q) = %v, %v; want an error wrapping ErrSyntax", give, got, err)
		}
	}
}

func TestErrorText(t *testing.T) {
	// Errors say what and where; a long input is cut short.
	_, err := cpuset.ParseList("0-3,9-8")
	if want := `cpu list "0-3,9-8": range 9-8 runs backwards: invalid syntax`; err == nil || err.Error() != want {
		t.Errorf("ParseList(%q) error = %v, want %v", "0-3,9-8", err, want)
	}
	long := words("ffffffff", 40) + ",x"
	_, err = cpuset.ParseMask(long)
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("ParseMask(long) error = %v, want a short error", err)
	}
}

func TestList(t *testing.T) {
	tests := []struct {
		give cpuset.Set
		want string
	}{
		{give: cpuset.Set{}, want: ""},
		{give: cpuset.New(0), want: "0"},
		{give: cpuset.New(0, 1), want: "0-1"},
		{give: cpuset.New(0, 2), want: "0,2"},
		{give: union(cpuset.Range(0, 3), cpuset.Range(8, 11)), want: "0-3,8-11"},
		{give: cpuset.New(1, 2, 3, 5, 7, 8), want: "1-3,5,7-8"},
		{give: cpuset.Range(62, 65), want: "62-65"},
		{give: cpuset.New(63, 64), want: "63-64"},
		{give: cpuset.New(50), want: "50"},
		{give: cpuset.Range(0, 1151), want: "0-1151"},
		{give: cpuset.Range(0, 4095), want: "0-4095"},
		{give: cpuset.New(0, 4095), want: "0,4095"},
		{give: stride(0, 10, 2), want: "0,2,4,6,8,10"},
		{give: cpuset.New(cpuset.MaxID), want: "1048575"},
		{give: cpuset.Range(0, cpuset.MaxID), want: "0-1048575"},
	}
	for _, tt := range tests {
		if got := tt.give.List(); got != tt.want {
			t.Errorf("%v.List() = %q, want %q", tt.give.IDs(), got, tt.want)
		}
		if got := tt.give.String(); got != tt.want {
			t.Errorf("%v.String() = %q, want %q", tt.give.IDs(), got, tt.want)
		}
	}
}

func TestMask(t *testing.T) {
	tests := []struct {
		give  cpuset.Set
		nbits int
		want  string
	}{
		// The kernel's %*pb: first group only as wide as its bits need.
		{give: cpuset.New(0, 1), nbits: 2, want: "3"},
		{give: cpuset.New(0), nbits: 1, want: "1"},
		{give: cpuset.New(4), nbits: 12, want: "010"},
		{give: cpuset.Range(0, 11), nbits: 12, want: "fff"},
		{give: cpuset.New(0), nbits: 32, want: "00000001"},
		{give: cpuset.New(0), nbits: 33, want: "0,00000001"},
		{give: cpuset.Range(0, 47), nbits: 48, want: "ffff,ffffffff"},
		{give: cpuset.New(0), nbits: 48, want: "0000,00000001"},
		{give: cpuset.New(0), nbits: 64, want: "00000000,00000001"},
		{give: cpuset.Set{}, nbits: 64, want: "00000000,00000000"},
		{give: cpuset.New(50), nbits: 64, want: "00040000,00000000"},
		{give: cpuset.New(17), nbits: 64, want: "00000000,00020000"},
		{give: cpuset.New(53), nbits: 64, want: "00200000,00000000"},
		{give: cpuset.New(63), nbits: 64, want: "80000000,00000000"},
		{give: cpuset.Range(0, 1151), nbits: 1152, want: words("ffffffff", 36)},
		{give: cpuset.Range(0, 4095), nbits: 4096, want: words("ffffffff", 128)},
		{give: cpuset.New(0), nbits: 4096, want: words("00000000", 127) + ",00000001"},
		{give: cpuset.New(cpuset.MaxID), nbits: cpuset.MaxID + 1, want: "80000000," + words("00000000", 32767)},
		// A member at or past nbits widens the mask rather than being lost.
		{give: cpuset.New(40), nbits: 32, want: "100,00000000"},
		{give: cpuset.New(64), nbits: 0, want: "1,00000000,00000000"},
		// The kernel prints nothing for 0 bits; we print "0" so the result
		// still parses.
		{give: cpuset.Set{}, nbits: 0, want: "0"},
		{give: cpuset.Set{}, nbits: -5, want: "0"},
		{give: cpuset.New(0), nbits: 0, want: "1"},
	}
	for _, tt := range tests {
		if got := tt.give.Mask(tt.nbits); got != tt.want {
			t.Errorf("%v.Mask(%d) = %.60q, want %.60q", tt.give, tt.nbits, got, tt.want)
		}
	}
}

func TestTaskset(t *testing.T) {
	tests := []struct {
		give cpuset.Set
		want string
	}{
		{give: cpuset.Set{}, want: "0x0"},
		{give: cpuset.New(0), want: "0x1"},
		{give: cpuset.Range(0, 7), want: "0xff"},
		{give: cpuset.New(50), want: "0x4000000000000"},
		{give: cpuset.New(63), want: "0x8000000000000000"},
		{give: cpuset.New(64), want: "0x10000000000000000"},
		{give: cpuset.New(0, 64), want: "0x10000000000000001"},
		{give: union(cpuset.Range(16, 31), cpuset.Range(48, 63)), want: "0xffff0000ffff0000"},
		{give: cpuset.Range(0, 4095), want: "0x" + strings.Repeat("f", 1024)},
		{give: cpuset.New(4095), want: "0x8" + strings.Repeat("0", 1023)},
	}
	for _, tt := range tests {
		if got := tt.give.Taskset(); got != tt.want {
			t.Errorf("%v.Taskset() = %.60q, want %.60q", tt.give, got, tt.want)
		}
	}
}

// realNodeTests are /sys/devices/system/node/nodeN/{cpumap,cpulist} as real
// kernels wrote them, from the captures in testdata/realhosts (hwloc test
// archives and cluster-node-tuning-operator must-gathers; see their
// SOURCE.txt). cpumap is printed with %*pb at nr_cpu_ids bits, so Mask(nbits)
// must reproduce it byte for byte.
var realNodeTests = []struct {
	host  string
	nbits int
	mask  string
	list  string
}{
	{host: "hwloc 128arm node0", nbits: 128, mask: "00000000,00000000,00000000,ffffffff", list: "0-31"},
	{host: "hwloc 128arm node3", nbits: 128, mask: "ffffffff,00000000,00000000,00000000", list: "96-127"},
	{host: "hwloc 32em64t node1", nbits: 128, mask: "00000000,00000000,00000000,0000ff00", list: "8-15"},
	{host: "hwloc 32intel64 node0", nbits: 112, mask: "0000,00000000,00000000,00ff00ff", list: "0-7,16-23"},
	{host: "hwloc 32intel64 node1", nbits: 112, mask: "0000,00000000,00000000,ff00ff00", list: "8-15,24-31"},
	{host: "hwloc 48amd64 node0", nbits: 48, mask: "0000,0000003f", list: "0-5"},
	{host: "hwloc 48amd64 node45", nbits: 48, mask: "000f,c0000000", list: "30-35"},
	{host: "hwloc 48amd64 node73", nbits: 48, mask: "fc00,00000000", list: "42-47"},
	{host: "cnto-sno node0", nbits: 12, mask: "fff", list: "0-11"},
	{host: "cnto-worker2 node1", nbits: 32, mask: "aaaaaaaa", list: "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31"},
	{
		host: "cnto-worker1 node0", nbits: 80, mask: "5555,55555555,55555555",
		list: "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48,50,52,54,56,58,60,62,64,66,68,70,72,74,76,78",
	},
	{
		host: "cnto-master node1", nbits: 112, mask: "aaaa,aaaaaaaa,aaaaaaaa,aaaaaaaa",
		list: "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,41,43,45,47,49,51,53,55,57,59,61,63,65,67,69,71,73,75,77,79,81,83,85,87,89,91,93,95,97,99,101,103,105,107,109,111",
	},
	{
		host: "dell-2numa node0", nbits: 104, mask: "55,55555555,55555555,55555555",
		list: "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48,50,52,54,56,58,60,62,64,66,68,70,72,74,76,78,80,82,84,86,88,90,92,94,96,98,100,102",
	},
}

func TestRealNodes(t *testing.T) {
	for _, tt := range realNodeTests {
		fromList, err := cpuset.ParseList(tt.list)
		if err != nil {
			t.Errorf("%s: ParseList(%q) error: %v", tt.host, tt.list, err)
			continue
		}
		fromMask, err := cpuset.ParseMask(tt.mask)
		if err != nil {
			t.Errorf("%s: ParseMask(%q) error: %v", tt.host, tt.mask, err)
			continue
		}
		if diff := cmp.Diff(fromList, fromMask); diff != "" {
			t.Errorf("%s: cpulist and cpumap disagree (-list +mask):\n%s", tt.host, diff)
		}
		if got := fromList.Mask(tt.nbits); got != tt.mask {
			t.Errorf("%s: ParseList(%q).Mask(%d) = %q, want %q", tt.host, tt.list, tt.nbits, got, tt.mask)
		}
		if got := fromMask.List(); got != tt.list {
			t.Errorf("%s: ParseMask(%q).List() = %q, want %q", tt.host, tt.mask, got, tt.list)
		}
	}
}

// TestFormsAgree parses every table entry in its own form and checks the
// other two forms print and parse back to the same set.
func TestFormsAgree(t *testing.T) {
	var sets []cpuset.Set
	for _, tt := range listTests {
		sets = append(sets, tt.want)
	}
	for _, tt := range maskTests {
		sets = append(sets, tt.want)
	}
	for _, tt := range tasksetTests {
		sets = append(sets, tt.want)
	}
	for _, s := range sets {
		checkForms(t, s)
	}
}

// checkForms checks that s survives a round trip through each textual form.
func checkForms(t *testing.T, s cpuset.Set) {
	t.Helper()
	list := s.List()
	if got, err := cpuset.ParseList(list); err != nil || !got.Equal(s) {
		t.Fatalf("ParseList(%.60q) = %v, %v, want %v", list, got, err, s)
	}
	hi, _ := s.Max()
	for _, nbits := range []int{0, hi + 1, 64, (hi + 32) / 32 * 32} {
		mask := s.Mask(nbits)
		if got, err := cpuset.ParseMask(mask); err != nil || !got.Equal(s) {
			t.Fatalf("ParseMask(%.60q) = %v, %v, want %v", mask, got, err, s)
		}
	}
	ts := s.Taskset()
	if got, err := cpuset.ParseTaskset(ts); err != nil || !got.Equal(s) {
		t.Fatalf("ParseTaskset(%.60q) = %v, %v, want %v", ts, got, err, s)
	}
	if n := len(s.IDs()); n != s.Len() {
		t.Fatalf("len(%v.IDs()) = %d, want Len() %d", s, n, s.Len())
	}
}

func FuzzParseList(f *testing.F) {
	for _, tt := range listTests {
		f.Add(tt.give)
	}
	for _, give := range listErrTests {
		f.Add(give)
	}
	for _, tt := range realNodeTests {
		f.Add(tt.list)
	}
	f.Fuzz(func(t *testing.T, give string) {
		s, err := cpuset.ParseList(give)
		if err != nil {
			if !errors.Is(err, cpuset.ErrSyntax) {
				t.Fatalf("ParseList(%q) error %v does not wrap ErrSyntax", give, err)
			}
			return
		}
		checkForms(t, s)
	})
}

func FuzzParseMask(f *testing.F) {
	for _, tt := range maskTests {
		if len(tt.give) < 2000 { // keep the seed corpus small
			f.Add(tt.give)
		}
	}
	for _, give := range maskErrTests {
		if len(give) < 2000 {
			f.Add(give)
		}
	}
	for _, tt := range realNodeTests {
		f.Add(tt.mask)
	}
	f.Fuzz(func(t *testing.T, give string) {
		s, err := cpuset.ParseMask(give)
		if err != nil {
			if !errors.Is(err, cpuset.ErrSyntax) {
				t.Fatalf("ParseMask(%q) error %v does not wrap ErrSyntax", give, err)
			}
			return
		}
		checkForms(t, s)
		// When every group after the first is a full 8 digits, the mask with
		// its commas removed is the same number in taskset form.
		groups := strings.Split(give, ",")
		for _, g := range groups[1:] {
			if len(g) != 8 {
				return
			}
		}
		flat := strings.Join(groups, "")
		if got, err := cpuset.ParseTaskset(flat); err != nil || !got.Equal(s) {
			t.Fatalf("ParseTaskset(%q) = %v, %v, want %v as ParseMask(%q)", flat, got, err, s, give)
		}
	})
}

func FuzzParseTaskset(f *testing.F) {
	for _, tt := range tasksetTests {
		if len(tt.give) < 2000 {
			f.Add(tt.give)
		}
	}
	for _, give := range tasksetErrTests {
		if len(give) < 2000 {
			f.Add(give)
		}
	}
	f.Fuzz(func(t *testing.T, give string) {
		s, err := cpuset.ParseTaskset(give)
		if err != nil {
			if !errors.Is(err, cpuset.ErrSyntax) {
				t.Fatalf("ParseTaskset(%q) error %v does not wrap ErrSyntax", give, err)
			}
			return
		}
		checkForms(t, s)
	})
}
