package main

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/tune"
)

// flagValues are the values a flag takes, for shell completion.
var flagValues = map[string][]string{
	"output":   {"table", "json"},
	"strategy": {string(tune.StrategySpread), string(tune.StrategyNode)},
	"format":   tune.MaskFormats,
	"fail-on":  failOnLevels,
	"color":    {"auto", "always", "never"},
}

// addCompletion makes the shells complete NIC names (irq pin's
// arguments, every --nic) from the host under --root, and the values of
// the flags that take one of a few words.
func addCompletion(c *cobra.Command, a *app) {
	for name, values := range flagValues {
		if c.Flags().Lookup(name) != nil || c.PersistentFlags().Lookup(name) != nil {
			_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
		}
	}
	if c.Flags().Lookup("nic") != nil {
		_ = c.RegisterFlagCompletionFunc("nic", a.completeNICs)
	}
	if c.CommandPath() == "irqnuma irq pin" {
		c.ValidArgsFunction = a.completeNICs
	}
	for _, sub := range c.Commands() {
		addCompletion(sub, a)
	}
}

// completeNICs lists the NICs of the host under --root (a folder; a
// snapshot is not unpacked for completion), those already given left out.
func (a *app) completeNICs(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	fsys, err := kfile.Open(a.root)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer fsys.Close()
	h, err := topology.Read(fsys)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, n := range h.NICs {
		if !slices.Contains(args, n.Name) {
			names = append(names, n.Name)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
