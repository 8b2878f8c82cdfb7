package deploy

import (
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestMain runs the tests with TMPDIR on a tmpfs (hosttest.Main): they
// make many small files, which on a disk take several times as long.
func TestMain(m *testing.M) { hosttest.Main(m) }
