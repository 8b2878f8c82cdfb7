package safetext

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestJSON(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{`{"nic": "eth0"}`, `{"nic": "eth0"}`},
		{"", ""},
		{"{\n  \"a\": [\n    1\n  ]\n}\n", "{\n  \"a\": [\n    1\n  ]\n}\n"}, // whitespace stays
		{`"ens1f0np0 ─ 网卡 e` + "\u0301\"", `"ens1f0np0 ─ 网卡 e` + "\u0301\""},
		{`"a\u001b[31mb\n"`, `"a\u001b[31mb\n"`}, // encoding/json's escapes stay
		{"\"rtl\u202eZ\"", `"rtl\u202eZ"`},
		{"\"mlx5\u202e_core\u2066\"", `"mlx5\u202e_core\u2066"`},
		{"\"\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\"", `"\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069"`},
		{"\"\u200e\u200f\u061c\"", `"\u200e\u200f\u061c"`},
		{"\"del\x7f c1\u0085\u009b\"", `"del\u007f c1\u0085\u009b"`},
		{"\"line\u2028para\u2029\"", `"line\u2028para\u2029"`},
		{"\"bad\xff\"", `"bad\ufffd"`},
		{"\"\ufffd zwj\u200d ok\"", "\"\ufffd zwj\u200d ok\""},
	}
	for _, tt := range tests {
		if got := JSON([]byte(tt.give)); string(got) != tt.want {
			t.Errorf("JSON(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// TestJSONClean: a document with nothing to escape is returned as it is,
// not copied.
func TestJSONClean(t *testing.T) {
	b := []byte(`{"name": "mlx5_comp0@pci:0000:98:00.0", "nic": "网卡"}`)
	if got := JSON(b); &got[0] != &b[0] {
		t.Error("JSON copied a document with nothing to escape")
	}
}

// rawRune returns the first rune of s a terminal would act on other than
// the line breaks and spaces of JSON's indentation, or "".
func rawRune(s string) string {
	for i, r := range s {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x061c || r == 0x200e || r == 0x200f ||
			r == 0x2028 || r == 0x2029 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 ||
			r == utf8.RuneError && !strings.HasPrefix(s[i:], "\ufffd") {
			return "U+" + strconv.FormatInt(int64(r), 16) + " at byte " + strconv.Itoa(i)
		}
	}
	return ""
}

// FuzzJSON: a document escaped by JSON is valid JSON, holds none of the
// runes raw, decodes to what the unescaped one decodes to (s itself when
// s is UTF-8), and JSON leaves it as it is.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{"", "eth0", "rtl\u202eZ", "\x1b[31m\n\t\x7f\u0085\u009b", "\u061c\u200e\u200f\u2028\u2029",
		"\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069", "bad\xff\xc2", "\ufffd网卡\u200d", "<&>\"\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := json.MarshalIndent(map[string][]string{s: {s, "x"}}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got := JSON(b)
		if !json.Valid(got) {
			t.Fatalf("JSON(%q) = %q: not valid JSON", b, got)
		}
		if bad := rawRune(string(got)); bad != "" {
			t.Errorf("JSON(%q) = %q: raw %s", b, got, bad)
		}
		var want, dec map[string][]string
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &dec); err != nil {
			t.Fatalf("JSON(%q) = %q: %v", b, got, err)
		}
		if len(dec) != 1 {
			t.Fatalf("JSON(%q) decodes to %q", b, dec)
		}
		for k, v := range dec {
			if len(v) != 2 || want[k] == nil || v[0] != want[k][0] || v[1] != "x" {
				t.Errorf("JSON(%q) decodes to %q, want %q", b, dec, want)
			}
			if utf8.ValidString(s) && (k != s || v[0] != s) {
				t.Errorf("JSON(%q) decodes to %q, want the key and value %q", b, dec, s)
			}
		}
		if again := JSON(got); !bytes.Equal(again, got) {
			t.Errorf("JSON(%q) = %q, not its own escape %q", got, again, got)
		}
	})
}
