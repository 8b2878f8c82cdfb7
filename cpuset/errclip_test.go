package cpuset_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
)

// TestErrorsClipInput: however long the input (issue 27: a 114 KB --cpus
// argument came back whole in the error), an error quotes at most the
// first 64 bytes of the input and of the element at fault, and says how
// many bytes it left out.
func TestErrorsClipInput(t *testing.T) {
	even := make([]string, 0, 20000)
	for id := 0; id < 40000; id += 2 {
		even = append(even, fmt.Sprint(id))
	}
	longList := strings.Join(even, ",")
	tests := []struct {
		name  string
		parse func(string) (cpuset.Set, error)
		give  string
		want  []string // in the error
	}{
		{"long id", cpuset.ParseList, strings.Repeat("1", 114000),
			[]string{`cpu list "` + strings.Repeat("1", 64) + `"... (113936 more bytes)`, `id "` + strings.Repeat("1", 64) + `"... (113936 more bytes) too large`}},
		{"long list, bad end", cpuset.ParseList, longList + ",x",
			[]string{`cpu list "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,"... (`, `bad number "x"`}},
		{"long element", cpuset.ParseList, "0," + strings.Repeat("x", 5000),
			[]string{`bad number "` + strings.Repeat("x", 64) + `"... (4936 more bytes)`}},
		{"long stride", cpuset.ParseList, "0-3:" + strings.Repeat("9", 5000),
			[]string{`bad stride "` + strings.Repeat("9", 64) + `"... (4936 more bytes)`}},
		{"long group", cpuset.ParseList, "0-3:1/" + strings.Repeat("9", 5000),
			[]string{`bad group "1/` + strings.Repeat("9", 62) + `"... (4938 more bytes)`}},
		{"long mask group", cpuset.ParseMask, "ff," + strings.Repeat("f", 5000),
			[]string{`group "` + strings.Repeat("f", 64) + `"... (4936 more bytes) wider than 32 bits`}},
		{"long taskset", cpuset.ParseTaskset, "0x" + strings.Repeat("f", 4000) + "g",
			[]string{`taskset mask "0x` + strings.Repeat("f", 62) + `"... (3939 more bytes)`, `bad hex digit 'g'`}},
	}
	for _, tt := range tests {
		_, err := tt.parse(tt.give)
		if !errors.Is(err, cpuset.ErrSyntax) {
			t.Fatalf("%s: error %v, want one wrapping ErrSyntax", tt.name, err)
		}
		if len(err.Error()) > 400 {
			t.Errorf("%s: error of %d bytes, want at most 400: %.600s", tt.name, len(err.Error()), err)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %.600s\ndoes not say %s", tt.name, err, w)
			}
		}
	}
}
