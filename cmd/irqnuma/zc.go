package main

import "github.com/spf13/cobra"

// newZCCmd is the zc parent: zero-copy receive's check and prepare.
// (A minimal parent while zc check lands separately; check adds itself
// here.)
func newZCCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "zc",
		Short: "Check and prepare a NIC for io_uring zero-copy receive",
		Args:  usageArgs(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	c.AddCommand(newZCPrepareCmd(a))
	return c
}
