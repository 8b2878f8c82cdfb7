package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/render/hostmap"
	"github.com/irqnuma/irqnuma/internal/screen"
)

func newMapCmd(a *app) *cobra.Command {
	var (
		sel   selection
		svg   string
		width int
		color string
	)
	c := &cobra.Command{
		Use:   "map",
		Short: "Draw the host: nodes, cores, NICs, and where each queue IRQ and watched thread lands",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if width != 0 && width < hostmap.MinWidth {
				return cli.Usagef("--width %d: want at least %d columns", width, hostmap.MinWidth)
			}
			if svg != "" && a.json() {
				return cli.Usagef("--svg and -o json: choose one")
			}
			var useColor bool
			switch color {
			case "always":
				useColor = true
			case "never":
			case "auto":
				useColor = screen.IsTerminal(a.stdout) && os.Getenv("NO_COLOR") == ""
			default:
				return cli.Usagef("--color %q: want auto, always or never", color)
			}
			if err := sel.check(a); err != nil {
				return err
			}
			m, err := buildMap(a.fs, sel)
			if err != nil {
				return err
			}
			switch {
			case a.json():
				return a.writeJSON(jsondoc.SchemaMap, m)
			case svg == "-":
				return hostmap.WriteSVG(a.stdout, m)
			case svg != "":
				var buf bytes.Buffer
				if err := hostmap.WriteSVG(&buf, m); err != nil {
					return err
				}
				if err := os.WriteFile(svg, buf.Bytes(), 0o644); err != nil {
					return fmt.Errorf("write SVG: %w", err)
				}
				fmt.Fprintf(a.stderr, "irqnuma: wrote %s\n", svg)
				return nil
			}
			return hostmap.WriteText(a.stdout, m, hostmap.Style{Width: width, Color: useColor})
		},
	}
	sel.flags(c, "draw only this NIC (repeatable); default every NIC", "watch")
	c.Flags().StringVar(&svg, "svg", "", "write the picture as a standalone SVG to this file (- for stdout)")
	c.Flags().IntVar(&width, "width", 0, fmt.Sprintf("columns to fit (default %d)", hostmap.DefaultWidth))
	c.Flags().StringVar(&color, "color", "auto", "colour: auto (when stdout is a terminal), always or never")
	return c
}

// buildMap reads what the picture needs under the root and audits it: the
// conflicts drawn are the audit's findings.
func buildMap(fsys kfile.FS, s selection) (*hostmap.Map, error) {
	st, err := audit.ReadHost(fsys, s.Selection)
	if err == nil {
		err = st.Absent() // a picture of a process that is not there is no picture
	}
	if err != nil {
		return nil, err
	}
	if err := st.Audit(fsys, s.Selection); err != nil {
		return nil, err
	}
	return hostmap.Build(st.Host, st.IRQs, st.Procs, hostmap.Options{NICs: s.NICs, Uses: st.Uses, Findings: st.Findings, Steer: st.Steer}), nil
}
