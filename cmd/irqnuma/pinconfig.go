package main

import (
	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/tune"
)

// placementFlags are the pin flags a --config file replaces.
var placementFlags = []string{"node", "cpus", "exclude", "strategy", "xps"}

// pinArgs wants NIC names, or none with --config (the file names them).
func pinArgs(cmd *cobra.Command, args []string) error {
	switch config := cmd.Flags().Changed("config"); {
	case config && len(args) > 0:
		return cli.Usagef("--config names the NICs: give no NIC arguments (got %q)", args)
	case !config && len(args) == 0:
		return cli.Usagef("name the NIC to pin (irqnuma topology lists them), or give --config FILE")
	}
	return nil
}

// runPinConfig runs irq pin with the NICs and options of a config file:
// the same plan, writes, state file and rollback as with flags.
func runPinConfig(a *app, cmd *cobra.Command, f pinFlags) error {
	for _, name := range placementFlags {
		if cmd.Flags().Changed(name) {
			return cli.Usagef("--%s: set it in the --config file, per NIC", name)
		}
	}
	c, err := tune.ReadPinConfig(f.config)
	if err != nil {
		return err
	}
	f.pinConfig, f.node, f.strategy = c, nil, string(tune.StrategySpread)
	return runPin(a, c.Names(), f)
}
