package zc

import (
	"testing"
)

func TestParseRelease(t *testing.T) {
	tests := []struct {
		give string
		want Version
		ok   bool
	}{
		{"6.18.44-fc-v857", Version{6, 18}, true},         // this VM
		{"6.15.3-3.gdc.el9.x86_64", Version{6, 15}, true}, // the ice capture's driver version
		{"6.1.0-57-amd64", Version{6, 1}, true},
		{"4.19.97-gentoo", Version{4, 19}, true},
		{"6.15", Version{6, 15}, true},
		{"6.16-rc1", Version{6, 16}, true},
		{"6.16+", Version{6, 16}, true},
		{"", Version{}, false},
		{"6", Version{}, false},
		{"6.x", Version{}, false},
		{"6.15x", Version{}, false},
		{".15", Version{}, false},
		{"-6.15", Version{}, false},
		{"12345.1", Version{}, false},
	}
	for _, tt := range tests {
		got, err := ParseRelease(tt.give)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseRelease(%q) = %v, %v; want %v, ok %v", tt.give, got, err, tt.want, tt.ok)
		}
	}
	if !(Version{6, 18}).AtLeast(recvKernel) || (Version{6, 14}).AtLeast(recvKernel) || !(Version{7, 0}).AtLeast(recvKernel) {
		t.Error("AtLeast orders versions wrongly")
	}
}

func TestParseCapEff(t *testing.T) {
	status := "Name:\tcat\nCapInh:\t0000000000000000\nCapPrm:\t000001fffeffffff\nCapEff:\t000001fffeffffff\nCapBnd:\t000001ffffffffff\n"
	tests := []struct {
		give string
		want uint64
		ok   bool
	}{
		{status, 0x000001fffeffffff, true},
		{"CapEff:\t0000000000001000\n", 1 << capNetAdmin, true},
		{"CapEff:\t0000000000000000", 0, true},
		{"CapPrm:\t0000000000000000\n", 0, false},
		{"CapEff:\t\n", 0, false},
		{"CapEff:\t00000000000000000\n", 0, false},
		{"CapEff:\tzz\n", 0, false},
	}
	for _, tt := range tests {
		got, err := parseCapEff([]byte(tt.give))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseCapEff(%q) = %x, %v; want %x, ok %v", tt.give, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseRelease(f *testing.F) {
	for _, s := range []string{"6.18.44-fc-v857", "6.15", "4.19.97-gentoo", "6.x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseRelease(s)
		if err != nil {
			if v != (Version{}) {
				t.Fatalf("ParseRelease(%q) = %v with error %v", s, v, err)
			}
			return
		}
		if v.Major < 0 || v.Minor < 0 || v.Major > 9999 || v.Minor > 9999 {
			t.Fatalf("ParseRelease(%q) = %v", s, v)
		}
		if again, err := ParseRelease(v.String()); err != nil || again != v {
			t.Fatalf("ParseRelease(%q) = %v, %v; want %v", v.String(), again, err, v)
		}
	})
}

func FuzzParseCapEff(f *testing.F) {
	f.Add([]byte("CapEff:\t000001fffeffffff\n"))
	f.Add([]byte("Name:\tx\nCapEff:\t0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseCapEff(b)
	})
}
