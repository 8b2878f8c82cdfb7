package units

import "testing"

func TestUnits(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{Bytes(512), "512 B"},
		{Bytes(1536), "1.5 KiB"},
		{Bytes(135073937408), "125.8 GiB"},
		{Plural(1, "queue", "queues"), "1 queue"},
		{Plural(16, "queue", "queues"), "16 queues"},
		{Plural(0, "queue", "queues"), "0 queues"},
		{Ints([]int{3, 7, 9}, ","), "3,7,9"},
		{Ints(nil, ","), ""},
		{OrDash(""), "-"},
		{OrDash("eth0"), "eth0"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
