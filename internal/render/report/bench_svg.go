package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/irqnuma/irqnuma/internal/run/bench"
	"github.com/irqnuma/irqnuma/internal/units"
)

// Bar chart geometry, in pixels.
const (
	barLabelW = 300 // the placement's name and where it ran
	barW      = 440 // the longest bar
	barValueW = 150
	barRowH   = 40
	barH      = 18
	barTop    = 64
	barFont   = "DejaVu Sans, Helvetica, Arial, sans-serif"
)

// WriteBenchSVG draws a bench as a standalone SVG bar chart: a bar per
// placement for the median result, a whisker from the lowest to the
// highest run, the value in words; placements the host does not allow,
// and those that failed, as a line of text saying so. It uses no
// external font, image, style sheet or script.
func WriteBenchSVG(w io.Writer, doc BenchDoc) error {
	scale := benchScale(doc)
	top := 0.0
	for _, c := range doc.Cells {
		if c.Summary != nil {
			top = math.Max(top, c.Summary.Max)
		}
	}
	width := barLabelW + barW + barValueW + 32
	height := barTop + len(doc.Cells)*barRowH + 48
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s">`+"\n",
		width, height, width, height, barFont)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	p := doc.Plan
	svgText(&b, 16, 24, 15, ` font-weight="bold" fill="#212529"`, fmt.Sprintf("irqnuma bench: %s (node %d), %s", p.NIC, p.NICNode, shellJoin(p.Command)))
	what := scale.label
	if p.Parser.Kind == bench.ParseIperf3 {
		what += " received"
	}
	svgText(&b, 16, 44, 12, ` fill="#495057"`, strings.TrimSpace(fmt.Sprintf("%s, median of %s per placement; whiskers: lowest to highest run",
		what, units.Plural(p.Repeat, "run", "runs"))))
	x0 := float64(16 + barLabelW)
	for i, c := range doc.Cells {
		y := float64(barTop + i*barRowH)
		svgText(&b, 16, y+13, 13, ` fill="#212529"`, c.Name)
		svgText(&b, 16, y+28, 10, ` fill="#868e96"`, barWhere(c))
		switch s := c.Summary; {
		case !c.Applicable:
			svgText(&b, x0, y+17, 12, ` fill="#868e96" font-style="italic"`, "not applicable: "+c.Reason)
		case s == nil && len(c.Runs) > 0:
			svgText(&b, x0, y+17, 12, ` fill="#c92a2a"`, "failed: "+c.Runs[len(c.Runs)-1].Error)
		case s == nil:
			svgText(&b, x0, y+17, 12, ` fill="#868e96"`, "not run: the bench stopped first")
		default:
			bx := func(v float64) float64 { return x0 + barW*v/top }
			fill := "#74c0fc"
			if c.App == bench.SideLocal && c.IRQs == bench.SideLocal && !c.Shared {
				fill = "#4dabf7"
			}
			fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%.1f" height="%d" fill="%s" stroke="#1c7ed6"/>`+"\n", x0, y+3, bx(s.Median)-x0, barH, fill)
			fmt.Fprintf(&b, `<path d="M%.1f %g H%.1f M%.1f %g V%g M%.1f %g V%g" stroke="#212529" stroke-width="1.5" fill="none"/>`+"\n",
				bx(s.Min), y+12, bx(s.Max), bx(s.Min), y+7, y+17, bx(s.Max), y+7, y+17)
			svgText(&b, bx(s.Max)+8, y+17, 12, ` fill="#212529"`, strings.TrimSpace(scale.format(s.Median)+" "+scale.label))
		}
	}
	if doc.Stopped != "" {
		svgText(&b, 16, float64(height-16), 12, ` fill="#c92a2a"`, "stopped early: "+doc.Stopped)
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// barWhere says where a cell put the IRQs, the command and its memory.
func barWhere(c bench.CellResult) string {
	if !c.Applicable {
		return fmt.Sprintf("IRQs %s, command %s", c.IRQs, c.App)
	}
	s := fmt.Sprintf("IRQs on node %d, command on node %d", c.IRQNode.Or(-1), c.AppNode.Or(-1))
	if c.Shared {
		s += ", on the IRQ CPUs"
	}
	if !c.MemNodes.IsEmpty() {
		s += ", memory bound"
	}
	return s
}

func svgText(b *bytes.Buffer, x, y float64, size int, attrs, t string) {
	var e bytes.Buffer
	_ = xml.EscapeText(&e, []byte(strings.ToValidUTF8(t, "\uFFFD")))
	fmt.Fprintf(b, `<text x="%g" y="%g" font-size="%d"%s>%s</text>`+"\n", x, y, size, attrs, e.String())
}
