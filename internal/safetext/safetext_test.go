package safetext

import "testing"

func TestEscape(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{"eth0", "eth0"},
		{"", ""},
		{"ens1f0np0 ─ 网卡 e\u0301", "ens1f0np0 ─ 网卡 e\u0301"}, // box drawing, CJK, combining mark
		{"a\x1b[31mb", `a\x1b[31mb`},
		{"a\nb\r\tc", `a\x0ab\x0d\x09c`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085\u009b", `c1\xc2\x85\xc2\x9b`},
		{"bad\xff\xc2", `bad\xff\xc2`},
		{"rtl\u202eZ", `rtl\u202eZ`},
		{"\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069", `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"\u200e\u200f\u061c", `\u200e\u200f\u061c`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"zwj\u200d ok", "zwj\u200d ok"}, // joiners are not bidi controls
	}
	for _, tt := range tests {
		if got := Escape(tt.give); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
