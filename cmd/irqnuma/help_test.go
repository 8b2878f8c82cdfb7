package main

import (
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpFiles: every command but the plain groups and cobra's own has
// its long help from help/, and every help file belongs to a command.
func TestHelpFiles(t *testing.T) {
	root := newRoot(&app{sys: hostSys(), stdout: io.Discard, stderr: io.Discard})
	used := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		name := strings.Join(strings.Fields(c.CommandPath())[1:], "-")
		if name == "" {
			name = "irqnuma"
		}
		switch {
		case c.Hidden:
		case name == "irq" || name == "topology" || name == "irq-list" || name == "help" || strings.HasPrefix(name, "completion"):
		case c.Long == "":
			t.Errorf("%s has no help/%s.txt", c.CommandPath(), name)
		default:
			used[name] = true
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	files, err := fs.Glob(helpFiles, "help/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "help/"), ".txt")
		if !used[name] {
			t.Errorf("%s belongs to no command", f)
		}
	}
}
