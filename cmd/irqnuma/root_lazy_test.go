package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/cli"
)

// TestCommandArg: the subcommand a command line runs is found past the
// root's flags and their values, and any word or flag the root does not
// know asks for the whole tree.
func TestCommandArg(t *testing.T) {
	tests := []struct {
		give     string
		want     string
		wantNone bool
	}{
		{give: "topology", want: "topology"},
		{give: "--root testdata/hosts/seed -o json irq list", want: "irq"},
		{give: "--root=x --output=json audit", want: "audit"},
		{give: "-ojson --output table map", want: "map"},
		{give: "--root topology", want: ""}, // the root is named topology: no command
		{give: "--version", wantNone: true},
		{give: "--root x --version", wantNone: true},
		{give: "", want: ""},
		{give: "help topology", want: ""},
		{give: "__complete irq li", want: ""},
		{give: "topolgy", want: ""},
		{give: "serve", want: ""},
		{give: "__man /tmp/man", want: ""},
		{give: "-h topology", want: ""},
		{give: "--version topology", want: "topology"},
	}
	for _, tt := range tests {
		got, none := commandArg(strings.Fields(tt.give))
		if got != tt.want || none != tt.wantNone {
			t.Errorf("commandArg(%q) = %q, %v, want %q, %v", tt.give, got, none, tt.want, tt.wantNone)
		}
	}
}

// TestLazyRootSameOutput: a command line run on the tree newRootFor
// builds for it (one subcommand, or none for --version) prints and exits
// as it does on the whole tree: every command's help, a usage error, a
// misspelt command, a moved one and the version.
func TestLazyRootSameOutput(t *testing.T) {
	t.Parallel()
	lines := [][]string{{"--version"}, {"--root", "/", "--version"}, {"-h"}, {"topolgy"}, {"serve"},
		{"irq", "lst"}, {"topology", "extra"}, {"irq", "list", "--bogus"}, {"help", "irq", "list"}}
	for _, c := range commands {
		if got := c.new(&app{sys: hostSys()}).Name(); got != c.name {
			t.Errorf("commands names %q for the command %q", c.name, got)
		}
		lines = append(lines, []string{c.name, "--help"})
	}
	run := func(args []string, full bool) (string, string, int) {
		var out, errb bytes.Buffer
		a := &app{sys: hostSys(), ctx: context.Background(), stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
		root := newRootFor(a, args)
		if full {
			root = newRoot(a)
		}
		root.SetArgs(args)
		defer a.close()
		code := cli.Code(a.ctx, root.ExecuteContext(a.ctx), &errb)
		return out.String(), errb.String(), code
	}
	for _, args := range lines {
		lo, le, lc := run(args, false)
		fo, fe, fc := run(args, true)
		if lo != fo || le != fe || lc != fc {
			t.Errorf("irqnuma %s: the lazy tree gives exit %d, stdout %q, stderr %q; the whole tree exit %d, stdout %q, stderr %q",
				strings.Join(args, " "), lc, lo, le, fc, fo, fe)
		}
	}
	if got := len(newRootFor(&app{sys: hostSys()}, []string{"--version"}).Commands()); got != 0 {
		t.Errorf("irqnuma --version builds %d subcommands, want none", got)
	}
	var names []string
	for _, c := range newRootFor(&app{sys: hostSys()}, []string{"-o", "json", "irq", "list"}).Commands() {
		names = append(names, c.Name())
	}
	if !slices.Contains(names, "irq") || slices.Contains(names, "topology") {
		t.Errorf("irqnuma -o json irq list builds %q, want irq without its siblings", names)
	}
}
