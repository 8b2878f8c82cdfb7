package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/manpage"
	"github.com/irqnuma/irqnuma/internal/version"
)

// newManCmd writes irqnuma.1 and a page per subcommand (irqnuma-irq-pin.1)
// into DIR, from the same help text and flags as --help; make install
// runs it. Hidden: it is for packaging.
func newManCmd(a *app) *cobra.Command {
	return &cobra.Command{Use: "__man DIR", Hidden: true, Args: namedArgs(cobra.ExactArgs(1), "DIR, the folder to write the manual pages into"),
		RunE: func(cmd *cobra.Command, args []string) error { return writeManPage(cmd.Root(), args[0]) }}
}

// writeManPage writes c's page and its subcommands' into dir.
func writeManPage(c *cobra.Command, dir string) error {
	if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
		return nil
	}
	page := func(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }
	p := manpage.Page{Name: page(c), Section: "1", Source: "irqnuma " + version.Get().Version, Manual: "irqnuma manual",
		Short: c.Short, Synopsis: []string{c.UseLine()}, Description: c.Long}
	if p.Description == "" {
		p.Description = c.Short
	}
	options := func(f *pflag.Flag) {
		if flags := "--" + f.Name; !f.Hidden && f.Name != "help" {
			if f.Shorthand != "" {
				flags = "-" + f.Shorthand + ", " + flags
			}
			if f.Value.Type() != "bool" {
				flags += " " + f.Value.Type()
			}
			p.Options = append(p.Options, manpage.Option{Flags: flags, Usage: f.Usage})
		}
	}
	c.NonInheritedFlags().VisitAll(options)
	c.InheritedFlags().VisitAll(options)
	if c.CommandPath() == "irqnuma audit" {
		p.Sections = append(p.Sections, auditChecksSection())
	}
	if c.Example != "" {
		p.Sections = append(p.Sections, manpage.Section{Title: "Examples", Body: c.Example})
	}
	p.Sections = append(p.Sections, manpage.Section{Title: "Exit status", Body: cli.ExitStatus})
	if c.HasParent() {
		p.SeeAlso = append(p.SeeAlso, page(c.Parent())+"(1)")
	}
	for _, sub := range c.Commands() {
		if !sub.Hidden && sub.Name() != "help" && sub.Name() != "completion" {
			p.SeeAlso = append(p.SeeAlso, page(sub)+"(1)")
		}
	}
	f, err := os.Create(filepath.Join(dir, p.Name+".1"))
	if err != nil {
		return err
	}
	if err := manpage.Write(f, p); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, sub := range c.Commands() {
		if err := writeManPage(sub, dir); err != nil {
			return err
		}
	}
	return nil
}
