package proc

import "testing"

// TestSelectorString: a selector displays as the user gave it, and
// SelectPresent's matches carry the kind and value, not a string to
// parse back.
func TestSelectorString(t *testing.T) {
	tests := []struct {
		give Selector
		want string
	}{
		{PIDSelector(42), "--pid 42"},
		{CommSelector("iperf3"), "--comm iperf3"},
		{CommSelector("--pid 1"), "--comm --pid 1"},
		{Selector{Kind: SelectorKindPID, PID: 4242}, "--pid 4242"},
	}
	for _, tt := range tests {
		if got := tt.give.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.give, got, tt.want)
		}
	}
	if s := PIDSelector(7); s.Kind != SelectorKindPID || s.PID != 7 || s.Comm != "" {
		t.Errorf("PIDSelector(7) = %#v", s)
	}
	if s := CommSelector("x"); s.Kind != SelectorKindComm || s.Comm != "x" || s.PID != 0 {
		t.Errorf("CommSelector(x) = %#v", s)
	}
}
