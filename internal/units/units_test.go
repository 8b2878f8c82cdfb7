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

func TestList(t *testing.T) {
	tests := []struct {
		give []uint32
		want string
	}{
		{give: nil, want: ""},
		{give: []uint32{3}, want: "3"},
		{give: []uint32{2, 3}, want: "2-3"},
		{give: []uint32{5, 0, 1, 2, 9, 8, 2}, want: "0-2,5,8-9"},
		{give: []uint32{1<<32 - 1, 1<<32 - 2, 0}, want: "0,4294967294-4294967295"},
	}
	for _, tt := range tests {
		if got := List(tt.give); got != tt.want {
			t.Errorf("List(%v) = %q, want %q", tt.give, got, tt.want)
		}
	}
	if got := List([]int{1 << 40, 7}); got != "7,1099511627776" {
		t.Errorf("List(ints) = %q", got)
	}
}
