package main

import (
	"testing"

	"github.com/irqnuma/irqnuma/internal/cli"
)

// TestUnknownCommandSuggests: a mistyped subcommand, at the root or
// under irq, exits 2 with the nearest command named; one near nothing
// points to --help.
func TestUnknownCommandSuggests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give []string
		want string
	}{
		{[]string{"topolgy"}, "irqnuma: unknown command \"topolgy\" for \"irqnuma\"; did you mean \"topology\"?\n"},
		{[]string{"audi"}, "irqnuma: unknown command \"audi\" for \"irqnuma\"; did you mean \"audit\"?\n"},
		{[]string{"irq", "pinn"}, "irqnuma: unknown command \"pinn\" for \"irqnuma irq\"; did you mean \"pin\"?\n"},
		{[]string{"irq", "pinn", "eth0"}, "irqnuma: unknown command \"pinn\" for \"irqnuma irq\"; did you mean \"pin\"?\n"},
		{[]string{"irq", "lst"}, "irqnuma: unknown command \"lst\" for \"irqnuma irq\"; did you mean \"list\"?\n"},
		{[]string{"--root", "testdata/none", "irq", "restor"}, "irqnuma: unknown command \"restor\" for \"irqnuma irq\"; did you mean \"restore\"?\n"},
		// A command that left the CLI says where it went, with its flags too.
		{[]string{"serve", "--listen", "127.0.0.1:9143"}, "irqnuma: irqnuma serve is now irqnuma-exporter, a binary of its own with the same flags (make build puts it in bin/)\n"},
		{[]string{"--root", "testdata/none", "serve"}, "irqnuma: irqnuma serve is now irqnuma-exporter, a binary of its own with the same flags (make build puts it in bin/)\n"},
		{[]string{"frobnicate"}, "irqnuma: unknown command \"frobnicate\" for \"irqnuma\" (see irqnuma --help)\n"},
		{[]string{"irq", "frobnicate"}, "irqnuma: unknown command \"frobnicate\" for \"irqnuma irq\" (see irqnuma irq --help)\n"},
		// A command without subcommands keeps cobra's word for an extra
		// argument.
		{[]string{"audit", "extra"}, "irqnuma: unknown command \"extra\" for \"irqnuma audit\"\n"},
	}
	for _, tt := range tests {
		stdout, stderr, code := runCLI(t, tt.give...)
		if code != cli.ExitUsage || stderr != tt.want || stdout != "" {
			t.Errorf("irqnuma %q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.give, code, stdout, stderr, tt.want)
		}
	}
}
