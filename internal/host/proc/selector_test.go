package proc

import (
	"errors"
	"testing"
)

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
		{PodSelector("kube-system/iperf-0"), "--pod kube-system/iperf-0"},
		{ContainerSelector("3f2e9a"), "--container 3f2e9a"},
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

// TestValidatePodSelectors: --pod wants NAMESPACE/NAME of object names,
// --container a hex container ID; anything else is ErrSelection.
func TestValidatePodSelectors(t *testing.T) {
	good := Selection{Pods: []string{"default/iperf-server.0"}, Containers: []string{"3f2e", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}}
	if err := good.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v", good, err)
	}
	if !good.Any() {
		t.Error("Any() = false for pods and containers")
	}
	for _, bad := range []Selection{
		{Pods: []string{"iperf"}}, {Pods: []string{"/iperf"}}, {Pods: []string{"ns/"}}, {Pods: []string{"ns/Iperf"}}, {Pods: []string{"a/b/c"}},
		{Containers: []string{"abc"}}, {Containers: []string{"3F2E"}}, {Containers: []string{"crio-3f2e"}},
	} {
		if err := bad.Validate(); !errors.Is(err, ErrSelection) {
			t.Errorf("Validate(%+v) = %v, want ErrSelection", bad, err)
		}
	}
}
