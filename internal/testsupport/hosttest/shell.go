package hosttest

import (
	"os/exec"
	"strings"
	"testing"
)

// RunShell runs a docs block of shell commands as a user would type
// them: each line "$ COMMAND" with sh -c in dir, in order, failing the
// test at the first that fails or at a line that is no command.
func RunShell(t testing.TB, dir, block string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		line, ok := strings.CutPrefix(l, "$ ")
		if !ok {
			t.Fatalf("the block's line %q is no command", l)
		}
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
}
