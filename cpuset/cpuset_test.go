package cpuset_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
)

func mustList(t *testing.T, s string) cpuset.Set {
	t.Helper()
	v, err := cpuset.ParseList(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNewRange(t *testing.T) {
	tests := []struct {
		give cpuset.Set
		want string
	}{
		{give: cpuset.New(), want: ""},
		{give: cpuset.New(3, 1, 2, 1), want: "1-3"},
		{give: cpuset.New(0, cpuset.MaxID), want: "0,1048575"},
		{give: cpuset.Range(4, 2), want: ""},
		{give: cpuset.Range(-3, -4), want: ""},
		{give: cpuset.Range(5, 5), want: "5"},
		{give: cpuset.Range(1, 130), want: "1-130"},
		{give: cpuset.Range(64, 127), want: "64-127"},
	}
	for _, tt := range tests {
		if got := tt.give.String(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestNewPanics(t *testing.T) {
	tests := []struct {
		name string
		give func()
	}{
		{name: "New(-1)", give: func() { cpuset.New(-1) }},
		{name: "New(MaxID+1)", give: func() { cpuset.New(cpuset.MaxID + 1) }},
		{name: "Range(-1, 3)", give: func() { cpuset.Range(-1, 3) }},
		{name: "Range(0, MaxID+1)", give: func() { cpuset.Range(0, cpuset.MaxID+1) }},
	}
	for _, tt := range tests {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", tt.name)
				}
			}()
			tt.give()
		}()
	}
}

func TestZeroValue(t *testing.T) {
	var s cpuset.Set
	if !s.IsEmpty() || s.Len() != 0 || s.String() != "" || s.Contains(0) {
		t.Errorf("zero Set = %q (len %d), want empty", s, s.Len())
	}
	if !s.Equal(cpuset.New()) || !s.Equal(mustList(t, "")) {
		t.Errorf("zero Set not Equal to other empty sets")
	}
	// Sets that end in zero words after an operation still equal the zero value.
	if d := cpuset.Range(0, 200).Difference(cpuset.Range(0, 200)); !d.Equal(s) || !d.IsEmpty() {
		t.Errorf("Range(0,200) minus itself = %v, want empty", d)
	}
	if m, _ := cpuset.ParseMask("00000000,00000000,00000000"); !m.Equal(s) {
		t.Errorf("zero mask = %v, want empty", m)
	}
}

func TestContainsLen(t *testing.T) {
	s := mustList(t, "0-3,63-64,1000")
	tests := []struct {
		give int
		want bool
	}{
		{give: -1, want: false},
		{give: 0, want: true},
		{give: 3, want: true},
		{give: 4, want: false},
		{give: 63, want: true},
		{give: 64, want: true},
		{give: 65, want: false},
		{give: 1000, want: true},
		{give: 1001, want: false},
		{give: cpuset.MaxID + 1, want: false},
		{give: 1 << 40, want: false},
	}
	for _, tt := range tests {
		if got := s.Contains(tt.give); got != tt.want {
			t.Errorf("%v.Contains(%d) = %v, want %v", s, tt.give, got, tt.want)
		}
	}
	if got := s.Len(); got != 7 {
		t.Errorf("%v.Len() = %d, want 7", s, got)
	}
	if got := cpuset.Range(0, 4095).Len(); got != 4096 {
		t.Errorf("Range(0, 4095).Len() = %d, want 4096", got)
	}
}

func TestAlgebra(t *testing.T) {
	tests := []struct {
		a, b                string
		union, inter, aMinB string
		subset, intersects  bool
	}{
		{a: "", b: "", union: "", inter: "", aMinB: "", subset: true, intersects: false},
		{a: "", b: "1-3", union: "1-3", inter: "", aMinB: "", subset: true, intersects: false},
		{a: "1-3", b: "", union: "1-3", inter: "", aMinB: "1-3", subset: false, intersects: false},
		{a: "0-3", b: "2-5", union: "0-5", inter: "2-3", aMinB: "0-1", subset: false, intersects: true},
		{a: "2-3", b: "0-5", union: "0-5", inter: "2-3", aMinB: "", subset: true, intersects: true},
		{a: "0-5", b: "0-5", union: "0-5", inter: "0-5", aMinB: "", subset: true, intersects: true},
		{a: "0,2,4", b: "1,3,5", union: "0-5", inter: "", aMinB: "0,2,4", subset: false, intersects: false},
		// Different lengths of backing words, both ways round.
		{a: "1", b: "200", union: "1,200", inter: "", aMinB: "1", subset: false, intersects: false},
		{a: "200", b: "1", union: "1,200", inter: "", aMinB: "200", subset: false, intersects: false},
		{a: "1,200", b: "1", union: "1,200", inter: "1", aMinB: "200", subset: false, intersects: true},
		{a: "1", b: "1,200", union: "1,200", inter: "1", aMinB: "", subset: true, intersects: true},
		// NUMA halves of a 4,096-CPU host.
		{a: "0-4095:2", b: "1-4095:2", union: "0-4095", inter: "", aMinB: "0-4095:2", subset: false, intersects: false},
		{a: "0-2047", b: "0-4095", union: "0-4095", inter: "0-2047", aMinB: "", subset: true, intersects: true},
		{a: "0-4095", b: "0-2047", union: "0-4095", inter: "0-2047", aMinB: "2048-4095", subset: false, intersects: true},
		{a: "0-1151", b: "576-1727", union: "0-1727", inter: "576-1151", aMinB: "0-575", subset: false, intersects: true},
	}
	for _, tt := range tests {
		a, b := mustList(t, tt.a), mustList(t, tt.b)
		aStr, bStr := a.String(), b.String()
		if diff := cmp.Diff(mustList(t, tt.union), a.Union(b)); diff != "" {
			t.Errorf("ParseList(%q).Union(%q) (-want +got):\n%s", tt.a, tt.b, diff)
		}
		if diff := cmp.Diff(mustList(t, tt.union), b.Union(a)); diff != "" {
			t.Errorf("ParseList(%q).Union(%q) (-want +got):\n%s", tt.b, tt.a, diff)
		}
		if diff := cmp.Diff(mustList(t, tt.inter), a.Intersection(b)); diff != "" {
			t.Errorf("ParseList(%q).Intersection(%q) (-want +got):\n%s", tt.a, tt.b, diff)
		}
		if diff := cmp.Diff(mustList(t, tt.inter), b.Intersection(a)); diff != "" {
			t.Errorf("ParseList(%q).Intersection(%q) (-want +got):\n%s", tt.b, tt.a, diff)
		}
		if diff := cmp.Diff(mustList(t, tt.aMinB), a.Difference(b)); diff != "" {
			t.Errorf("ParseList(%q).Difference(%q) (-want +got):\n%s", tt.a, tt.b, diff)
		}
		if got := a.IsSubsetOf(b); got != tt.subset {
			t.Errorf("ParseList(%q).IsSubsetOf(%q) = %v, want %v", tt.a, tt.b, got, tt.subset)
		}
		if got := a.Intersects(b); got != tt.intersects {
			t.Errorf("ParseList(%q).Intersects(%q) = %v, want %v", tt.a, tt.b, got, tt.intersects)
		}
		if got := b.Intersects(a); got != tt.intersects {
			t.Errorf("ParseList(%q).Intersects(%q) = %v, want %v", tt.b, tt.a, got, tt.intersects)
		}
		if got, want := a.Equal(b), tt.a == tt.b; got != want {
			t.Errorf("ParseList(%q).Equal(%q) = %v, want %v", tt.a, tt.b, got, want)
		}
		// Immutable: no operation changed its operands.
		if a.String() != aStr || b.String() != bStr {
			t.Errorf("operands changed: %q, %q became %v, %v", tt.a, tt.b, a, b)
		}
	}
}

func TestResultsDoNotAlias(t *testing.T) {
	// A result must not share storage with an operand: changing one derived
	// set through further operations must leave the others alone.
	a := mustList(t, "0-127")
	u := a.Union(cpuset.Set{})
	d := a.Difference(cpuset.New(5))
	_ = u.Union(cpuset.New(500)).Difference(cpuset.Range(0, 63))
	if a.String() != "0-127" || u.String() != "0-127" || d.String() != "0-4,6-127" {
		t.Errorf("sets changed: a=%v u=%v d=%v", a, u, d)
	}
}

func TestMinMax(t *testing.T) {
	tests := []struct {
		give     string
		min, max int
		wantOK   bool
	}{
		{give: "", wantOK: false},
		{give: "0", min: 0, max: 0, wantOK: true},
		{give: "63", min: 63, max: 63, wantOK: true},
		{give: "64", min: 64, max: 64, wantOK: true},
		{give: "3,200", min: 3, max: 200, wantOK: true},
		{give: "50,1048575", min: 50, max: cpuset.MaxID, wantOK: true},
		{give: "0-4095", min: 0, max: 4095, wantOK: true},
	}
	for _, tt := range tests {
		s := mustList(t, tt.give)
		gotMin, okMin := s.Min()
		gotMax, okMax := s.Max()
		if okMin != tt.wantOK || okMax != tt.wantOK || (tt.wantOK && (gotMin != tt.min || gotMax != tt.max)) {
			t.Errorf("ParseList(%q): Min() = %d, %v; Max() = %d, %v; want %d, %d, %v",
				tt.give, gotMin, okMin, gotMax, okMax, tt.min, tt.max, tt.wantOK)
		}
	}
	// Empty sets, however made, report no member.
	for _, s := range []cpuset.Set{{}, cpuset.Range(0, 100).Intersection(cpuset.Range(200, 300))} {
		if id, ok := s.Min(); ok || id != 0 {
			t.Errorf("%q.Min() = %d, %v, want 0, false", s, id, ok)
		}
		if id, ok := s.Max(); ok || id != 0 {
			t.Errorf("%q.Max() = %d, %v, want 0, false", s, id, ok)
		}
	}
}

func TestNth(t *testing.T) {
	s := mustList(t, "1,3,63-65,1000")
	tests := []struct {
		give   int
		want   int
		wantOK bool
	}{
		{give: -1, wantOK: false},
		{give: 0, want: 1, wantOK: true},
		{give: 1, want: 3, wantOK: true},
		{give: 2, want: 63, wantOK: true},
		{give: 3, want: 64, wantOK: true},
		{give: 4, want: 65, wantOK: true},
		{give: 5, want: 1000, wantOK: true},
		{give: 6, wantOK: false},
		{give: 1 << 40, wantOK: false},
	}
	for _, tt := range tests {
		got, ok := s.Nth(tt.give)
		if ok != tt.wantOK || got != tt.want {
			t.Errorf("%v.Nth(%d) = %d, %v, want %d, %v", s, tt.give, got, ok, tt.want, tt.wantOK)
		}
	}
	for _, n := range []int{-1, 0, 1} {
		if got, ok := (cpuset.Set{}).Nth(n); ok || got != 0 {
			t.Errorf("empty.Nth(%d) = %d, %v, want 0, false", n, got, ok)
		}
	}
	// Nth agrees with IDs on a big sparse set.
	big := mustList(t, "0-4095:3,4000-4095")
	ids := big.IDs()
	for i, want := range ids {
		if got, ok := big.Nth(i); !ok || got != want {
			t.Fatalf("%v.Nth(%d) = %d, %v, want %d, true", big, i, got, ok, want)
		}
	}
	if _, ok := big.Nth(len(ids)); ok {
		t.Errorf("Nth(Len()) reported a member")
	}
}

func TestFirst(t *testing.T) {
	tests := []struct {
		give string
		k    int
		want string
	}{
		{give: "", k: 0, want: ""},
		{give: "", k: 3, want: ""},
		{give: "1-5", k: -1, want: ""},
		{give: "1-5", k: 0, want: ""},
		{give: "1-5", k: 1, want: "1"},
		{give: "1-5", k: 3, want: "1-3"},
		{give: "1-5", k: 5, want: "1-5"},
		{give: "1-5", k: 99, want: "1-5"},
		{give: "0-4095:2", k: 40, want: "0-78:2"},
		{give: "60-70", k: 5, want: "60-64"},
		{give: "0-4095", k: 1152, want: "0-1151"},
		{give: "0-4095", k: 64, want: "0-63"},
		{give: "0-4095", k: 65, want: "0-64"},
		{give: "5,1048575", k: 2, want: "5,1048575"},
	}
	for _, tt := range tests {
		got := mustList(t, tt.give).First(tt.k)
		if diff := cmp.Diff(mustList(t, tt.want), got); diff != "" {
			t.Errorf("ParseList(%q).First(%d) (-want +got):\n%s", tt.give, tt.k, diff)
		}
	}
}

func TestAllIDs(t *testing.T) {
	s := mustList(t, "0,63-65,4095")
	if diff := cmp.Diff([]int{0, 63, 64, 65, 4095}, s.IDs()); diff != "" {
		t.Errorf("%v.IDs() (-want +got):\n%s", s, diff)
	}
	var got []int
	for id := range s.All() {
		got = append(got, id)
		if len(got) == 2 {
			break
		}
	}
	if diff := cmp.Diff([]int{0, 63}, got); diff != "" {
		t.Errorf("%v.All() stopped early (-want +got):\n%s", s, diff)
	}
	if ids := (cpuset.Set{}).IDs(); len(ids) != 0 {
		t.Errorf("empty.IDs() = %v, want none", ids)
	}
}

func TestJSON(t *testing.T) {
	type irq struct {
		IRQ      int        `json:"irq"`
		Affinity cpuset.Set `json:"affinity"`
	}
	tests := []struct {
		give irq
		want string
	}{
		{give: irq{IRQ: 1}, want: `{"irq":1,"affinity":""}`},
		{give: irq{IRQ: 2, Affinity: cpuset.New(50)}, want: `{"irq":2,"affinity":"50"}`},
		{give: irq{IRQ: 3, Affinity: mustList(t, "0-3,8-11")}, want: `{"irq":3,"affinity":"0-3,8-11"}`},
		{give: irq{IRQ: 4, Affinity: cpuset.Range(0, 4095)}, want: `{"irq":4,"affinity":"0-4095"}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.give)
		if err != nil {
			t.Fatalf("json.Marshal(%v): %v", tt.give, err)
		}
		if string(b) != tt.want {
			t.Errorf("json.Marshal(%v) = %s, want %s", tt.give, b, tt.want)
		}
		var got irq
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("json.Unmarshal(%s): %v", b, err)
		}
		if diff := cmp.Diff(tt.give, got); diff != "" {
			t.Errorf("JSON round trip of %s (-want +got):\n%s", b, diff)
		}
	}

	// A pointer and a slice of sets marshal the same way.
	one := cpuset.New(1, 2)
	b, err := json.Marshal([]*cpuset.Set{&one})
	if err != nil || string(b) != `["1-2"]` {
		t.Errorf("json.Marshal([]*Set) = %s, %v, want [\"1-2\"]", b, err)
	}
}

func TestJSONNull(t *testing.T) {
	// By encoding/json's convention null leaves the value alone.
	s := cpuset.New(7)
	if err := json.Unmarshal([]byte("null"), &s); err != nil || !s.Equal(cpuset.New(7)) {
		t.Errorf("json.Unmarshal(null) = %v, %v, want 7, nil", s, err)
	}
}

func TestJSONErrors(t *testing.T) {
	tests := []struct {
		give       string
		wantSyntax bool // the JSON was fine but the list was not
	}{
		{give: `"1,"`, wantSyntax: true},
		{give: `"3-0"`, wantSyntax: true},
		{give: `"00040000,00000000"`, wantSyntax: true},
		{give: `" 1"`, wantSyntax: true},
		{give: `5`, wantSyntax: false},
		{give: `[1,2]`, wantSyntax: false},
		{give: `"1`, wantSyntax: false},
	}
	for _, tt := range tests {
		s := cpuset.New(7)
		err := json.Unmarshal([]byte(tt.give), &s)
		if err == nil {
			t.Errorf("json.Unmarshal(%s) = %v, want an error", tt.give, s)
			continue
		}
		if got := errors.Is(err, cpuset.ErrSyntax); got != tt.wantSyntax {
			t.Errorf("json.Unmarshal(%s) error %v: errors.Is(ErrSyntax) = %v, want %v", tt.give, err, got, tt.wantSyntax)
		}
		if !s.Equal(cpuset.New(7)) {
			t.Errorf("json.Unmarshal(%s) failed but changed the set to %v", tt.give, s)
		}
	}
}
