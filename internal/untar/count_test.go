package untar

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	many := func(n int) []ent {
		ents := append([]ent{}, base...)
		for i := range n {
			ents = append(ents, fileEnt(fmt.Sprintf("sys/e%d", i), ""))
		}
		return ents
	}
	tests := []struct {
		name string
		give []ent
		opt  Options
		want int    // entries, when msg is empty
		msg  string // the error's text, ErrTooLarge
	}{
		{"base", base, Options{}, 3, ""},
		{"folder listed again", append(append([]ent{dirEnt("./")}, base...), dirEnt("./proc/"), dirEnt("sys")), Options{}, 3, ""},
		{"implied folders", []ent{fileEnt("sys/a/b/c", ""), fileEnt("sys/a/b/d", ""), dirEnt("sys/a/")}, Options{}, 5, ""},
		{"empty files at the bound", many(7), Options{MaxEntries: 10}, 10, ""},
		{"empty files past the bound", many(8), Options{MaxEntries: 10}, 0,
			`entry "sys/e7": over the size bound: more than 10 entries with the folders they imply`},
		{"folders past the bound", []ent{fileEnt(strings.Repeat("d/", 20)+"f", "")}, Options{MaxEntries: 10}, 0,
			`more than 10 entries with the folders they imply`},
		{"huge entry", []ent{{name: "proc/big", typ: tar.TypeReg, size: 2 << 20}}, Options{MaxFileSize: 1 << 20}, 0,
			`entry "proc/big": over the size bound: 2097152 bytes, more than 1048576`},
		{"bomb", []ent{{name: "proc/a", typ: tar.TypeReg, size: 3 << 20}, {name: "proc/b", typ: tar.TypeReg, size: 3 << 20}},
			Options{MaxTotalSize: 5 << 20}, 0, `entry "proc/b": over the size bound: archive holds more than 5242880 bytes`},
		{"names too long", []ent{fileEnt("sys/"+strings.Repeat("n", 100), "x")}, Options{MaxNameBytes: 64}, 0,
			`over the size bound: names and link targets take more than 64 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Count(context.Background(), tar.NewReader(bytes.NewReader(craft(t, tt.give...))), tt.opt)
			if tt.msg == "" {
				if err != nil || n != tt.want {
					t.Errorf("Count() = %d, %v, want %d, nil", n, err, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(errText(err), tt.msg) {
				t.Errorf("Count() error = %v, want ErrTooLarge containing %q", err, tt.msg)
			}
		})
	}
	if _, err := Count(context.Background(), tar.NewReader(strings.NewReader(strings.Repeat("x\n", 600))), Options{}); !errors.Is(err, ErrFormat) {
		t.Errorf("Count(text) = %v, want ErrFormat", err)
	}
}

// TestCountAgreesWithUnpack: an archive Count accepts at a bound, Unpack
// accepts at it too, and one entry more is refused by both.
func TestCountAgreesWithUnpack(t *testing.T) {
	ents := append(append([]ent{}, base...), fileEnt("sys/a/b/c", ""), dirEnt("sys/a/b/"), fileEnt("proc/x/y", ""))
	b := craft(t, ents...)
	n, err := Count(context.Background(), tar.NewReader(bytes.NewReader(b)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Unpack counts a folder listed after it was implied once more.
	if _, _, err := unpackIn(t, b, Options{MaxEntries: n + 1}); err != nil {
		t.Errorf("Unpack(MaxEntries %d) = %v", n+1, err)
	}
	if _, err := Count(context.Background(), tar.NewReader(bytes.NewReader(b)), Options{MaxEntries: n - 1}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Count(MaxEntries %d) = %v, want ErrTooLarge", n-1, err)
	}
	if _, _, err := unpackIn(t, b, Options{MaxEntries: n - 1}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Unpack(MaxEntries %d) = %v, want ErrTooLarge", n-1, err)
	}
}
