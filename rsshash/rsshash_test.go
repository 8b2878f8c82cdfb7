package rsshash

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestInputLayout(t *testing.T) {
	tests := []struct {
		fields string
		give   Tuple
		want   []byte
	}{
		{"sd", Tuple{netip.MustParseAddrPort("1.2.3.4:258"), netip.MustParseAddrPort("5.6.7.8:772")}, []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		{"sdfn", Tuple{netip.MustParseAddrPort("1.2.3.4:258"), netip.MustParseAddrPort("5.6.7.8:772")}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4}},
		// An IPv4-mapped IPv6 address is the IPv4 packet it stands for.
		{"sd", Tuple{netip.MustParseAddrPort("[::ffff:1.2.3.4]:1"), netip.MustParseAddrPort("5.6.7.8:2")}, []byte{1, 2, 3, 4, 5, 6, 7, 8}},
	}
	for _, tt := range tests {
		got, err := Input(tt.fields, tt.give)
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("Input(%q, %v) = %v, %v; want %v", tt.fields, tt.give, got, err, tt.want)
		}
	}
	v6 := Tuple{netip.MustParseAddrPort("[fe80::1]:1"), netip.MustParseAddrPort("[fe80::2]:2")}
	if got, _ := Input("sdfn", v6); len(got) != 36 {
		t.Errorf("IPv6 4-tuple input is %d bytes, want 36", len(got))
	}
}

func TestInputRefuses(t *testing.T) {
	ok := Tuple{netip.MustParseAddrPort("1.2.3.4:1"), netip.MustParseAddrPort("5.6.7.8:2")}
	for _, f := range []string{"", "s", "sdf", "sdn", "vtsd", "sdfnr", "ds"} {
		if _, err := Input(f, ok); !errors.Is(err, ErrUndefined) {
			t.Errorf("Input(%q) error = %v, want ErrUndefined", f, err)
		}
	}
	mixed := Tuple{netip.MustParseAddrPort("1.2.3.4:1"), netip.MustParseAddrPort("[fe80::2]:2")}
	if _, err := Input("sd", mixed); err == nil || !strings.Contains(err.Error(), "family") {
		t.Errorf("Input of mixed families: %v", err)
	}
	if _, err := Input("sd", Tuple{}); err == nil {
		t.Error("Input of no addresses: no error")
	}
}

func TestKeyLength(t *testing.T) {
	in := make([]byte, 12)
	if _, err := Toeplitz(make([]byte, 15), in); !errors.Is(err, ErrKey) {
		t.Errorf("15-byte key, 12-byte input: %v, want ErrKey", err)
	}
	if _, err := Toeplitz(make([]byte, 16), in); err != nil {
		t.Errorf("16-byte key, 12-byte input: %v", err)
	}
	if _, err := NewTable(make([]byte, 39), 36); !errors.Is(err, ErrKey) {
		t.Errorf("NewTable(39, 36): %v, want ErrKey", err)
	}
	tab, _ := NewTable(make([]byte, 16), 12)
	if _, err := tab.Hash(make([]byte, 13)); !errors.Is(err, ErrKey) {
		t.Errorf("Table.Hash past its size: %v, want ErrKey", err)
	}
}

// A key longer than 40 bytes (virtio-net, ice and mlx5 keys are 40 or 52)
// hashes with its extra bytes unused by short inputs.
func TestLongKey(t *testing.T) {
	key := bytes.Repeat([]byte{0x6d, 0x5a, 0x56, 0xda}, 13)
	in := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	a, _ := Toeplitz(key, in)
	b, _ := Toeplitz(key[:12], in)
	if a != b {
		t.Errorf("a 52-byte key hashes %#x, its 12-byte prefix %#x", a, b)
	}
}

func TestUndefined(t *testing.T) {
	if Undefined(FuncToeplitz) != nil {
		t.Error("toeplitz undefined")
	}
	for _, f := range []Func{FuncXOR, FuncCRC32, "", "sym"} {
		if err := Undefined(f); !errors.Is(err, ErrUndefined) {
			t.Errorf("Undefined(%q) = %v", f, err)
		}
	}
	if err := Undefined(FuncXOR); !strings.Contains(err.Error(), "the NIC's xor function is not defined exactly") {
		t.Errorf("xor: %v", err)
	}
}

func TestIndex(t *testing.T) {
	tests := []struct {
		hash       uint32
		size, want int
		rule       string
	}{
		{0x51ccc178, 128, 0x78, "low 7 bits"},
		{0x51ccc178, 512, 0x178, "low 9 bits"},
		{0x51ccc178, 1, 0, "low 0 bits"},
		{0x51ccc178, 24, 0x51ccc178 % 24, "not a power of two"},
	}
	for _, tt := range tests {
		got, rule, err := Index(tt.hash, tt.size)
		if err != nil || got != tt.want || !strings.Contains(rule, tt.rule) {
			t.Errorf("Index(%#x, %d) = %d, %q, %v; want %d, ~%q", tt.hash, tt.size, got, rule, err, tt.want, tt.rule)
		}
	}
	if _, _, err := Index(1, 0); err == nil {
		t.Error("Index in an empty table: no error")
	}
}

// FuzzToeplitz holds the precomputed table to the bitwise definition.
func FuzzToeplitz(f *testing.F) {
	f.Add([]byte("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da3"), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, key, in []byte) {
		h, err := Toeplitz(key, in)
		if err != nil {
			return
		}
		tab, err := NewTable(key, len(in))
		if err != nil {
			t.Fatalf("NewTable refused a key Toeplitz took: %v", err)
		}
		if g, _ := tab.Hash(in); g != h {
			t.Fatalf("table %#x, bitwise %#x", g, h)
		}
	})
}
