package main

import (
	"embed"
	"strings"

	"github.com/spf13/cobra"
)

// helpFiles hold each command's long help, and its examples after a line
// "Examples:": help/<command path without irqnuma, joined by "-">.txt
// (help/irq-pin.txt). The man pages are made from the same text.
//
//go:embed help/*.txt
var helpFiles embed.FS

// addHelp gives c and its subcommands their long help and examples.
func addHelp(c *cobra.Command) {
	name := strings.Join(strings.Fields(c.CommandPath())[1:], "-")
	if name == "" {
		name = "irqnuma"
	}
	if b, err := helpFiles.ReadFile("help/" + name + ".txt"); err == nil {
		long, examples, _ := strings.Cut(string(b), "\nExamples:\n")
		c.Long = strings.TrimRight(long, "\n")
		c.Example = strings.TrimRight(examples, "\n")
	}
	for _, sub := range c.Commands() {
		addHelp(sub)
	}
}
