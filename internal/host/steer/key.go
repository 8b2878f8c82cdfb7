package steer

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// Key is an RSS hash key. It reads and writes as ethtool shows it under
// "RSS hash key:" in ethtool -x, and as ethtool -X hkey takes it: each
// byte two lowercase hex digits, the bytes separated by colons
// ("6d:5a:56:da:..."); so it is in JSON, where a []byte would be base64.
type Key []byte

// String is the key in ethtool's colon hex; "" for an empty key.
func (k Key) String() string {
	if len(k) == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(3*len(k) - 1)
	for i, c := range k {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(hex.EncodeToString([]byte{c}))
	}
	return b.String()
}

// MarshalText writes the key as String does.
func (k Key) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a key as String writes it (hex digits of either
// case): "" is the empty key. It also reads the standard base64 of a
// []byte, as irqnuma before JSON v2 wrote a key (a state file saved by
// it is restored by this one); no colon hex key of two bytes or more is
// base64, which has no ':'.
func (k *Key) UnmarshalText(b []byte) error {
	v, err := ParseKey(string(b))
	if err != nil {
		old, oldErr := base64.StdEncoding.DecodeString(string(b))
		if oldErr != nil || len(old) == 0 {
			return err
		}
		v = old
	}
	*k = v
	return nil
}

// ParseKey reads a key in ethtool's colon hex, each byte two hex digits.
func ParseKey(s string) (Key, error) {
	if s == "" {
		return Key{}, nil
	}
	parts := strings.Split(s, ":")
	out := make(Key, 0, len(parts))
	for _, p := range parts {
		if len(p) != 2 {
			return nil, fmt.Errorf("%q is not two hex digits", textClip(p))
		}
		b, err := hex.DecodeString(p)
		if err != nil {
			return nil, fmt.Errorf("%q is not two hex digits", textClip(p))
		}
		out = append(out, b[0])
	}
	return out, nil
}
