package usage

import (
	"errors"
	"fmt"
	"testing"
)

func TestUsage(t *testing.T) {
	errThing := New("unknown thing")
	errOther := New("other thing")
	plain := errors.New("read /proc/x: boom")
	tests := []struct {
		name      string
		give      error
		wantUsage bool
		wantIs    error // a sentinel give must be, or nil
		wantText  string
	}{
		{"a sentinel", errThing, true, errThing, "unknown thing"},
		{"a wrapped sentinel", fmt.Errorf("%w %q", errThing, "x"), true, errThing, `unknown thing "x"`},
		{"Errorf", Errorf("--count %d: want at least 1", 0), true, nil, "--count 0: want at least 1"},
		{"Wrap", Wrap(plain), true, plain, "read /proc/x: boom"},
		{"Kind", Kind(errThing, errors.New("--node -1: want a node id")), true, errThing, "--node -1: want a node id"},
		{"a plain error", plain, false, plain, "read /proc/x: boom"},
		{"joined", errors.Join(plain, Errorf("bad")), true, plain, "read /proc/x: boom\nbad"},
	}
	for _, tt := range tests {
		if got := Is(tt.give); got != tt.wantUsage {
			t.Errorf("%s: Is(%q) = %v, want %v", tt.name, tt.give, got, tt.wantUsage)
		}
		if tt.wantIs != nil && !errors.Is(tt.give, tt.wantIs) {
			t.Errorf("%s: errors.Is(%q, %q) = false", tt.name, tt.give, tt.wantIs)
		}
		if errors.Is(tt.give, errOther) {
			t.Errorf("%s: %q is another sentinel", tt.name, tt.give)
		}
		if tt.give.Error() != tt.wantText {
			t.Errorf("%s: message %q, want %q", tt.name, tt.give, tt.wantText)
		}
	}
	if Wrap(nil) != nil {
		t.Errorf("Wrap(nil) = %v, want nil", Wrap(nil))
	}
}
