package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestArgCountSaysWhatIsWanted: every command, given no arguments or
// four, either takes them or refuses with a usage error in one line
// that says what it wants (`zc check` said cobra's "accepts 1 arg(s),
// received 0"). The commands are walked from the tree, so a new one is
// held to it too.
func TestArgCountSaysWhatIsWanted(t *testing.T) {
	t.Parallel()
	root := hosttest.Root("seed")
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Args == nil || c.Name() == "help" || c.Name() == "completion" || c.Parent() != nil && c.Parent().Name() == "completion" {
			return
		}
		path := strings.Fields(c.CommandPath())[1:]
		for _, args := range [][]string{nil, {"a", "b", "c", "d"}} {
			if c.Args(c, args) == nil {
				continue // the count is taken: running it would run the command
			}
			checked++
			give := append(append([]string{"--root", root}, path...), args...)
			out, stderr, code := runCLI(t, give...)
			if code != cli.ExitUsage || out != "" || strings.Count(stderr, "\n") != 1 {
				t.Errorf("irqnuma %s: exit %d, stdout %q, stderr %q; want exit %d and one line", strings.Join(give[2:], " "), code, out, stderr, cli.ExitUsage)
			}
			if strings.Contains(stderr, "arg(s)") || !strings.Contains(stderr, "want") && !strings.Contains(stderr, "unknown command") && !strings.Contains(stderr, "needs") && !strings.Contains(stderr, "name the") {
				t.Errorf("irqnuma %s: %q does not say what it wants", strings.Join(give[2:], " "), stderr)
			}
		}
	}
	walk(newRoot(&app{sys: hostSys()}))
	if checked < 10 {
		t.Errorf("checked %d refused counts: the walk missed the commands", checked)
	}
}
