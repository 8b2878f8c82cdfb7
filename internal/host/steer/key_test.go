package steer

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestKeyJSON(t *testing.T) {
	tests := []struct {
		give Key
		want string
	}{
		{Key{0x6d, 0x5a, 0x56, 0xda, 0x0f}, `"6d:5a:56:da:0f"`},
		{Key{0xff}, `"ff"`},
		{Key{}, `""`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.give)
		if err != nil || string(b) != tt.want {
			t.Errorf("Marshal(%v) = %s, %v, want %s", []byte(tt.give), b, err, tt.want)
		}
		var got Key
		if err := json.Unmarshal(b, &got); err != nil || !bytes.Equal(got, tt.give) {
			t.Errorf("Unmarshal(%s) = %v, %v, want %v", b, []byte(got), err, []byte(tt.give))
		}
	}
	// Omitted when empty, as the RSS context of a driver without a key.
	if b, _ := json.Marshal(RSS{}); strings.Contains(string(b), "key") {
		t.Errorf("Marshal(RSS{}) = %s, want no key", b)
	}
	// A key as v1 JSON wrote it (base64), as an old state file holds it.
	var old Key
	if err := json.Unmarshal([]byte(`"bVpW2g=="`), &old); err != nil || old.String() != "6d:5a:56:da" {
		t.Errorf("Unmarshal(base64) = %v, %v, want 6d:5a:56:da", old, err)
	}
	for _, give := range []string{`"6d:5"`, `"6d:"`, `":6d"`, `"6d::5a"`, `"zz"`, `"6d-5a"`} {
		var k Key
		if err := json.Unmarshal([]byte(give), &k); err == nil {
			t.Errorf("Unmarshal(%s) = %v, want an error", give, []byte(k))
		}
	}
}

// FuzzParseKey: what ParseKey reads, String writes back as it was read
// (lowercased), and what String writes ParseKey reads back.
func FuzzParseKey(f *testing.F) {
	f.Add("6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb:ae:7b:30:b4:77:cb:2d:a3:80:30:f2:0c:6a:42:b7:3b:be:ac:01:fa")
	f.Add("")
	f.Add("FF:00")
	f.Add("6d:5a:")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKey(s)
		if err != nil {
			return
		}
		if got := k.String(); got != strings.ToLower(s) {
			t.Fatalf("ParseKey(%q).String() = %q, want %q", s, got, strings.ToLower(s))
		}
		back, err := ParseKey(k.String())
		if err != nil || !bytes.Equal(back, k) {
			t.Fatalf("ParseKey(%q) = %v, %v, want %v", k.String(), []byte(back), err, []byte(k))
		}
	})
}
