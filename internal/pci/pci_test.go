package pci

import (
	"regexp"
	"testing"
)

// bdfRE is the definition IsAddress implements by hand (a regexp at
// package init cost every command its compile).
var bdfRE = regexp.MustCompile(`^[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)

func TestIsAddress(t *testing.T) {
	for _, s := range []string{"0000:98:00.0", "10000:00:1f.7", "0000:98:00.8", "0000:98:0.0", "0000:98:00.0 ", "000:98:00.0",
		"0000:98:00:0", "0000:98:00.", "0000:9G:00.0", "0000:98:00.0\n", "", "ABCD:98:00.0", "abcd:98:00.0", "virtio2"} {
		if got, want := IsAddress(s), bdfRE.MatchString(s); got != want {
			t.Errorf("IsAddress(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzIsAddress(f *testing.F) {
	f.Add("0000:98:00.0")
	f.Add("10000:00:1f.7")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := IsAddress(s), bdfRE.MatchString(s); got != want {
			t.Errorf("IsAddress(%q) = %v, regexp says %v", s, got, want)
		}
	})
}
