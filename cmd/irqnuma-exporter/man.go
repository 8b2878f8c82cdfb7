package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/irqnuma/irqnuma/internal/manpage"
	"github.com/irqnuma/irqnuma/internal/version"
)

// writeManPage writes irqnuma-exporter.1 into dir from the text -h prints
// and the flags fl holds (irqnuma-exporter __man DIR; make install runs
// it, as it runs irqnuma __man).
func writeManPage(fl *pflag.FlagSet, dir string) error {
	p := manpage.Page{Name: "irqnuma-exporter", Section: "1", Source: "irqnuma " + version.Get().Version,
		Manual: "irqnuma manual", Short: short, Synopsis: []string{"irqnuma-exporter [flags]"}, Description: description,
		Sections: []manpage.Section{{Title: "Examples", Body: examples}, {Title: "Exit status", Body: exitStatus}},
		SeeAlso:  []string{"irqnuma(1)", "irqnuma-audit(1)", "irqnuma-snapshot(1)"}}
	fl.VisitAll(func(f *pflag.Flag) {
		flags := "--" + f.Name
		name, usage := pflag.UnquoteUsage(f)
		if name != "" {
			flags += " " + name
		}
		p.Options = append(p.Options, manpage.Option{Flags: flags, Usage: usage})
	})
	f, err := os.Create(filepath.Join(dir, p.Name+".1"))
	if err != nil {
		return err
	}
	if err := manpage.Write(f, p); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
