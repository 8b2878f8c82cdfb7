package main

import (
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
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
		case name == "irq" || name == "zc" || name == "help" || strings.HasPrefix(name, "completion"):
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

// TestTopologyHelpMemory: topology's help says where a node's MEMORY
// comes from and why it is not free(1)'s figure (issue 39).
func TestTopologyHelpMemory(t *testing.T) {
	t.Parallel()
	out, _, code := runCLI(t, "help", "topology")
	for _, want := range []string{"MEMORY is the node's MemTotal, from /sys/devices/system/node/nodeN/meminfo", "free(1)", "/proc/meminfo's MemTotal"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("irqnuma help topology: exit %d, no %q in:\n%s", code, want, out)
		}
	}
}

// TestCompletion: the shells' completion (cobra's __complete) offers the
// host's NICs for irq pin and --nic, and the words of word flags.
func TestCompletion(t *testing.T) {
	t.Parallel()
	root := hosttest.Root("offline-2node")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--root", root, "__complete", "irq", "pin", ""}, "eth1\neth10\nens1f0\nens2f0\n:4\n"},
		{[]string{"--root", root, "__complete", "irq", "pin", "eth1", ""}, "eth10\nens1f0\nens2f0\n:4\n"},
		{[]string{"--root", root, "__complete", "audit", "--nic", ""}, "eth1\neth10\nens1f0\nens2f0\n:4\n"},
		{[]string{"__complete", "mask", "--format", ""}, "list\ntaskset\nmask\nnumactl\ndocker\nsystemd\ncgroup\n:4\n"},
		{[]string{"__complete", "irq", "pin", "--strategy", ""}, "spread\nnode\n:4\n"},
		{[]string{"__complete", "audit", "--fail-on", ""}, "info\nwarning\nerror\nnever\n:4\n"},
		{[]string{"__complete", "map", "--color", ""}, "auto\nalways\nnever\n:4\n"},
		{[]string{"__complete", "topology", "-o", ""}, "table\njson\n:4\n"},
	} {
		stdout, _, code := runCLI(t, tt.args...)
		if code != 0 || sortLines(stdout) != sortLines(tt.want) {
			t.Errorf("%q: exit %d, %q; want %q", tt.args, code, stdout, tt.want)
		}
	}
}

func sortLines(s string) string {
	l := strings.Split(s, "\n")
	slices.Sort(l)
	return strings.Join(l, "\n")
}
