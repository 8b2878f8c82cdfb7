package unknown

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type nicDoc struct {
	Name  string        `json:"name"`
	Node  Value[int]    `json:"numa_node"`
	Speed Value[int]    `json:"speed_mbps,omitempty"`
	Key   Value[string] `json:"rss_key"`
	Skip  Value[int]    `json:"-"`
}

func (d nicDoc) MarshalJSON() ([]byte, error) {
	type plain nicDoc
	return MarshalObject(plain(d))
}

func (d *nicDoc) UnmarshalJSON(b []byte) error {
	type plain nicDoc
	return UnmarshalObject(b, (*plain)(d))
}

func TestMarshalObject(t *testing.T) {
	tests := []struct {
		give nicDoc
		want string
	}{
		{
			give: nicDoc{Name: "eth0", Node: Of(1), Speed: Of(100000), Key: Of("6d:5a")},
			want: `{"name":"eth0","numa_node":1,"speed_mbps":100000,"rss_key":"6d:5a"}`,
		},
		{
			give: nicDoc{Name: "eth0", Node: NotAs[int](KindNotReported, "numa_node is -1"), Speed: Of(0),
				Key: NotAs[string](KindDriver, "EOPNOTSUPP")},
			want: `{"name":"eth0","numa_node":null,"speed_mbps":0,"rss_key":null,` +
				`"numa_node_unknown":{"reason":"not reported by the host","detail":"numa_node is -1"},` +
				`"rss_key_unknown":{"reason":"not supported by the driver","detail":"EOPNOTSUPP"}}`,
		},
		{
			give: nicDoc{Name: "lo", Node: Of(0), Key: Of("")},
			want: `{"name":"lo","numa_node":0,"speed_mbps":null,"rss_key":"","speed_mbps_unknown":{"reason":"not read"}}`,
		},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.give)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.want {
			t.Errorf("Marshal(%+v) =\n%s\nwant\n%s", tt.give, b, tt.want)
		}
		var back nicDoc
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", b, err)
		}
		tt.give.Skip = Value[int]{}
		if diff := cmp.Diff(tt.give, back, cmp.AllowUnexported(Value[int]{}, Value[string]{})); diff != "" {
			t.Errorf("round trip of %s (-want +got):\n%s", b, diff)
		}
	}
}

func TestEmptyObject(t *testing.T) {
	type only struct {
		N Value[int] `json:"n"`
	}
	b, err := MarshalObject(only{N: NotAs[int](KindNotCaptured, "")})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"n":null,"n_unknown":{"reason":"not captured"}}`; string(b) != want {
		t.Errorf("MarshalObject = %s, want %s", b, want)
	}
	if _, err := MarshalObject(3); err == nil {
		t.Error("MarshalObject(3) succeeded, want an error")
	}
}

func TestValue(t *testing.T) {
	var zero Value[int]
	if zero.Known() || zero.Why().String() != "not read" || zero.String() != "unknown" {
		t.Errorf("zero Value = %v (%v), want unknown, not read", zero, zero.Why())
	}
	if v, ok := Of(0).Get(); !ok || v != 0 {
		t.Errorf("Of(0).Get() = %d, %v", v, ok)
	}
	if got := NotAs[int](KindMalformed, "x").Or(-7); got != -7 {
		t.Errorf("Or = %d, want -7", got)
	}
	if !Is(Of(3), 3) || Is(NotAs[int](KindKernel, ""), 0) || Same(Of(1), NotAs[int](KindKernel, "")) || !Same(Of(1), Of(1)) {
		t.Error("Is/Same disagree with the values")
	}
	if got := Because(KindDriver, "").String(); got != "not supported by the driver" {
		t.Errorf("String = %q", got)
	}
}

func FuzzUnmarshalObject(f *testing.F) {
	f.Add([]byte(`{"name":"eth0","numa_node":null,"numa_node_unknown":{"reason":"malformed","detail":"x"}}`))
	f.Add([]byte(`{"numa_node":1,"rss_key":"a","speed_mbps":null}`))
	f.Add([]byte(`{"numa_node_unknown":3}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d nicDoc
		if err := json.Unmarshal(b, &d); err != nil {
			return
		}
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("Marshal after Unmarshal(%q): %v", b, err)
		}
		var again nicDoc
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("Unmarshal(%s) of our own output: %v", out, err)
		}
	})
}

type word string

func TestValueString(t *testing.T) {
	tests := []struct {
		give fmtString
		want string
	}{
		{Of(word("root")), "root"},
		{Of(-3), "-3"},
		{Of(uint32(7)), "7"},
		{Of(2.5), "2.5"},
		{Of(true), "true"},
		{Of([]int{1, 2}), "[1,2]"},
		{NotAs[word](KindMalformed, "x"), "unknown"},
	}
	for _, tt := range tests {
		if got := tt.give.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

type fmtString interface{ String() string }

// BenchmarkMarshalObject is one watch-sized object, two Values known and
// one not, as watch writes a few dozen each interval.
func BenchmarkMarshalObject(b *testing.B) {
	d := nicDoc{Name: "eth0", Node: Of(1), Speed: Of(100000), Key: NotAs[string](KindDriver, "EOPNOTSUPP")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(d); err != nil {
			b.Fatal(err)
		}
	}
}
