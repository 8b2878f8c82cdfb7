package realhosts

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// recordTB is a testing.TB that records a Fatal or a Skip and stops the
// goroutine there, as the real ones do.
type recordTB struct {
	testing.TB
	fatal, skip string
}

func (r *recordTB) Helper()           {}
func (r *recordTB) Fatal(args ...any) { r.fatal = fmt.Sprint(args...); runtime.Goexit() }
func (r *recordTB) Skip(args ...any)  { r.skip = fmt.Sprint(args...); runtime.Goexit() }

// TestAbsentFailsUnderCI: without the captures a test that needs them
// skipped everywhere, so CI said ok having checked none of them. Under CI
// it fails, naming the folder and how to get it; elsewhere it skips with
// the same words.
func TestAbsentFailsUnderCI(t *testing.T) {
	const dir = "/tmp/noshared/x/../shared/realhosts"
	for _, ci := range []bool{true, false} {
		r := &recordTB{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			absent(r, dir, ci)
		}()
		<-done
		got, other := r.skip, r.fatal
		if ci {
			got, other = r.fatal, r.skip
		}
		if got == "" || other != "" {
			t.Errorf("CI %v: fatal %q, skip %q; want only a %s", ci, r.fatal, r.skip, map[bool]string{true: "Fatal", false: "Skip"}[ci])
		}
		for _, want := range []string{"/tmp/noshared/shared/realhosts", "copied or linked there", "SOURCE.txt"} {
			if !strings.Contains(got, want) {
				t.Errorf("CI %v: %q does not say %q", ci, got, want)
			}
		}
	}
}

// TestInCI: CI services set CI=true; "", "0" and "false" mean not CI.
func TestInCI(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{{"true", true}, {"1", true}, {"yes", true}, {"TRUE", true}, {"", false}, {"0", false}, {"false", false}, {"False", false}}
	for _, tt := range tests {
		t.Setenv("CI", tt.give)
		if got := inCI(); got != tt.want {
			t.Errorf("CI=%q: inCI() = %v, want %v", tt.give, got, tt.want)
		}
	}
}
