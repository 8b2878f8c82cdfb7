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

// TestAbsentFails: without the captures a test that needs them fails,
// everywhere, naming the folder: they are part of the checkout, and a skip
// would let a green run check none of them.
func TestAbsentFails(t *testing.T) {
	r := &recordTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		present(r, "/tmp/clone/x/../testdata/realhosts", false)
	}()
	<-done
	for _, want := range []string{"/tmp/clone/testdata/realhosts", "missing from this checkout", "SOURCE.txt"} {
		if !strings.Contains(r.fatal, want) {
			t.Errorf("%q does not say %q", r.fatal, want)
		}
	}
	if r.skip != "" {
		t.Errorf("skipped (%q); want a failure", r.skip)
	}
	if dir, ok := Dir(); !ok {
		t.Errorf("the module's own captures are not at %s", dir)
	}
}
