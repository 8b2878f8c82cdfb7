package hostmap

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/irqnuma/irqnuma/internal/units"
)

// SVG geometry, in pixels.
const (
	svgMargin   = 16
	svgPad      = 10 // inside package and node boxes
	svgTitleH   = 24 // a box's title row
	svgLineH    = 18 // a line of 12px text
	svgCellW    = 64
	svgCellH    = 32
	svgCorePad  = 3
	svgCoreGap  = 6
	svgMaxCores = 16 // cores per row
	svgCharW    = 7.3
	svgFont     = "DejaVu Sans Mono, Menlo, Consolas, monospace"
)

// cellStyle is the fill, stroke and stroke width of a cell.
type cellStyle struct {
	fill, stroke string
	width        float64
	dash         bool
}

// svgStyle picks a cell's look from the same facts as cellColor; the
// cell's label carries the meaning without it.
func svgStyle(c CPU) cellStyle {
	st := cellStyle{fill: "#f1f3f5", stroke: "#adb5bd", width: 1}
	switch {
	case c.Conflict:
		st = cellStyle{fill: "#ffa8a8", stroke: "#c92a2a", width: 2.5}
	case c.Remote:
		st = cellStyle{fill: "#ffd8a8", stroke: "#e8590c", width: 2}
	case len(c.IRQs) > 0:
		st = cellStyle{fill: "#a5d8ff", stroke: "#1c7ed6", width: 1.5}
	case len(c.LastRan) > 0 || c.MayRun > 0:
		st = cellStyle{fill: "#b2f2bb", stroke: "#2f9e44", width: 1.5}
	case !c.Online:
		st = cellStyle{fill: "#dee2e6", stroke: "#868e96", width: 1, dash: true}
	}
	if c.Isolated {
		st.stroke, st.dash = "#9c36b5", true
		st.width = max(st.width, 2)
	}
	return st
}

// svgWriter accumulates elements and tracks the picture's extent.
type svgWriter struct {
	b    bytes.Buffer
	maxX float64
}

// esc escapes text for XML; runes XML cannot hold become U+FFFD.
func esc(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool {
		return r < 0x20 || r > 0x7e || strings.ContainsRune(`<>&'"`, r)
	}) {
		return s
	}
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func (s *svgWriter) rect(x, y, w, h float64, fill, stroke string, sw float64, dash bool, rx float64) {
	d := ""
	if dash {
		d = ` stroke-dasharray="4 3"`
	}
	fmt.Fprintf(&s.b, `<rect x="%g" y="%g" width="%g" height="%g" rx="%g" fill="%s" stroke="%s" stroke-width="%g"%s/>`+"\n",
		x, y, w, h, rx, fill, stroke, sw, d)
	s.maxX = max(s.maxX, x+w)
}

func (s *svgWriter) text(x, y float64, size int, attrs, t string) {
	fmt.Fprintf(&s.b, `<text x="%g" y="%g" font-size="%d"%s>%s</text>`+"\n", x, y, size, attrs, esc(t))
	s.maxX = max(s.maxX, x+float64(utf8.RuneCountInString(t))*svgCharW*float64(size)/12)
}

// svgNodeLayout is a node box's size and rows.
type svgNodeLayout struct {
	node    Node
	perRow  int
	rows    [][]Core
	rowH    []float64
	nicText []string
	w, h    float64
}

func coreH(threads int) float64 {
	return float64(threads)*svgCellH + float64(threads-1)*2 + 2*svgCorePad
}

func layoutNode(m *Map, n Node) svgNodeLayout {
	l := svgNodeLayout{node: n}
	if len(n.Cores) > 0 {
		per := min(svgMaxCores, len(n.Cores))
		rows := (len(n.Cores) + per - 1) / per
		per = (len(n.Cores) + rows - 1) / rows
		l.perRow = per
		for r := 0; r < rows; r++ {
			row := n.Cores[r*per : min(len(n.Cores), (r+1)*per)]
			depth := 1
			for _, c := range row {
				depth = max(depth, len(c.Threads))
			}
			l.rows = append(l.rows, row)
			l.rowH = append(l.rowH, coreH(depth))
		}
	}
	for _, name := range n.NICs {
		nic, _ := m.NIC(name)
		l.nicText = append(l.nicText, nicLines(nic)...)
	}
	gridW := float64(l.perRow)*(svgCellW+2*svgCorePad) + float64(max(0, l.perRow-1))*svgCoreGap
	l.w = gridW
	for _, t := range append([]string{nodeTitle(n.ID.Or(-1)) + ": " + nodeSummary(n)}, l.nicText...) {
		l.w = max(l.w, float64(utf8.RuneCountInString(t))*svgCharW+16)
	}
	l.h = svgTitleH
	for _, h := range l.rowH {
		l.h += h + svgCoreGap
	}
	if len(l.nicText) > 0 {
		l.h += float64(len(l.nicText))*svgLineH + 12
	}
	l.h += svgPad
	return l
}

// WriteSVG draws m as a standalone SVG: the same boxes, cells and
// markers as WriteText, with colour, and a tooltip per cell. It uses no
// external font, image, style sheet or script.
func WriteSVG(w io.Writer, m *Map) error {
	var s svgWriter
	var layouts [][]svgNodeLayout
	nodeW := 0.0
	for _, p := range m.Packages {
		var ls []svgNodeLayout
		for _, n := range p.Nodes {
			l := layoutNode(m, n)
			nodeW = max(nodeW, l.w)
			ls = append(ls, l)
		}
		layouts = append(layouts, ls)
	}
	var unknownText []string
	for _, name := range m.UnknownNICs {
		nic, _ := m.NIC(name)
		unknownText = append(unknownText, nicLines(nic)...)
	}
	for _, t := range unknownText {
		nodeW = max(nodeW, float64(utf8.RuneCountInString(t))*svgCharW+16)
	}
	nodeW += 2 * svgPad
	pkgW := nodeW + 2*svgPad

	y := float64(svgMargin)
	x0 := float64(svgMargin)
	for pi, p := range m.Packages {
		h := float64(svgTitleH + svgPad)
		for _, l := range layouts[pi] {
			h += l.h + svgPad
		}
		s.rect(x0, y, pkgW, h, "#ffffff", "#495057", 1.5, false, 8)
		s.text(x0+svgPad, y+17, 14, ` font-weight="bold" fill="#212529"`, packageTitle(p.Packages))
		ny := y + svgTitleH
		for _, l := range layouts[pi] {
			s.node(m, l, x0+svgPad, ny, nodeW)
			ny += l.h + svgPad
		}
		y += h + svgPad
	}
	if len(unknownText) > 0 {
		h := svgTitleH + float64(len(unknownText))*svgLineH + svgPad
		s.rect(x0, y, pkgW, h, "#ffffff", "#495057", 1.5, true, 8)
		s.text(x0+svgPad, y+17, 14, ` font-weight="bold" fill="#212529"`, "NICs on no known node")
		for i, t := range unknownText {
			s.nicText(x0+svgPad, y+svgTitleH+float64(i)*svgLineH+13, t)
		}
		y += h + svgPad
	}

	y += 8
	line := func(marker, color, t string) {
		if marker != "" {
			s.text(x0, y+13, 13, ` font-weight="bold" fill="`+color+`"`, marker)
		}
		s.text(x0+16, y+13, 12, ` fill="#212529"`, t)
		y += svgLineH
	}
	split := func(l string) (string, string) { m, t, _ := strings.Cut(l, " "); return m, t }
	for _, l := range conflictLines(m) {
		mk, t := split(l)
		line(mk, "#c92a2a", t)
	}
	for _, l := range remoteLines(m) {
		mk, t := split(l)
		line(mk, "#e8590c", t)
	}
	for _, l := range processLines(m) {
		mk, t := split(l)
		line(mk, "#2f9e44", t)
	}
	y += 8
	y = s.legend(m, x0, y)
	for _, n := range m.Notes {
		s.text(x0, y+13, 12, ` fill="#495057"`, "note: "+n)
		y += svgLineH
	}

	width := math.Ceil(s.maxX + svgMargin)
	height := math.Ceil(y + svgMargin)
	var out bytes.Buffer
	fmt.Fprintf(&out, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="%s">`+"\n",
		width, height, width, height, svgFont)
	fmt.Fprintf(&out, "<title>irqnuma map</title>\n")
	fmt.Fprintf(&out, `<rect x="0" y="0" width="%g" height="%g" fill="#ffffff"/>`+"\n", width, height)
	out.Write(s.b.Bytes())
	out.WriteString("</svg>\n")
	_, err := w.Write(out.Bytes())
	return err
}

// node draws one node box at x, y.
func (s *svgWriter) node(m *Map, l svgNodeLayout, x, y, w float64) {
	s.rect(x, y, w, l.h, "#f8f9fa", "#868e96", 1, !l.node.ID.Known(), 6)
	s.text(x+svgPad, y+17, 13, ` font-weight="bold" fill="#212529"`, nodeTitle(l.node.ID.Or(-1))+": "+nodeSummary(l.node))
	cy := y + svgTitleH
	for r, row := range l.rows {
		cx := x + svgPad
		for _, c := range row {
			ch := coreH(len(c.Threads))
			s.rect(cx, cy, svgCellW+2*svgCorePad, ch, "#e9ecef", "#ced4da", 1, false, 4)
			for t, th := range c.Threads {
				s.cell(th, cx+svgCorePad, cy+svgCorePad+float64(t)*(svgCellH+2))
			}
			cx += svgCellW + 2*svgCorePad + svgCoreGap
		}
		cy += l.rowH[r] + svgCoreGap
	}
	if len(l.nicText) > 0 {
		nh := float64(len(l.nicText))*svgLineH + 6
		s.rect(x+svgPad, cy, w-2*svgPad, nh, "#fff9db", "#f08c00", 1, false, 4)
		for i, t := range l.nicText {
			s.nicText(x+svgPad+6, cy+float64(i)*svgLineH+16, t)
		}
	}
}

// nicText draws a line of nicLines: the head in bold, the indented
// detail line indented.
func (s *svgWriter) nicText(x, y float64, t string) {
	if rest, ok := strings.CutPrefix(t, "  "); ok {
		s.text(x+16, y, 12, ` fill="#212529"`, rest)
		return
	}
	s.text(x, y, 12, ` font-weight="bold" fill="#212529"`, t)
}

// cell draws one CPU with its id, label and a tooltip.
func (s *svgWriter) cell(c CPU, x, y float64) {
	st := svgStyle(c)
	fmt.Fprintf(&s.b, "<g>\n<title>%s</title>\n", esc(cellTooltip(c)))
	s.rect(x, y, svgCellW, svgCellH, st.fill, st.stroke, st.width, st.dash, 3)
	s.text(x+4, y+11, 9, ` fill="#495057"`, "CPU "+strconv.Itoa(c.ID))
	weight := ` font-weight="bold"`
	if c.Label == "." {
		weight = ""
	}
	s.text(x+svgCellW/2, y+27, 13, ` text-anchor="middle" fill="#212529"`+weight, c.Label)
	s.b.WriteString("</g>\n")
}

// cellTooltip says in words what lands on a CPU.
func cellTooltip(c CPU) string {
	parts := []string{"CPU " + strconv.Itoa(c.ID)}
	if !c.Online {
		parts = append(parts, "offline")
	}
	if c.Isolated {
		parts = append(parts, "isolated")
	}
	for _, q := range c.IRQs {
		t := fmt.Sprintf("IRQ %d: %s queue %d", q.IRQ, q.NIC, q.Queue)
		if q.Dir != "" {
			t += " " + string(q.Dir)
		}
		if q.Remote {
			t += " (remote)"
		}
		if q.Requested {
			t += " (requested affinity; effective unknown)"
		}
		parts = append(parts, t)
	}
	if len(c.LastRan) > 0 {
		parts = append(parts, "watched threads last ran here: "+units.Ints(c.LastRan, ", "))
	}
	if c.MayRun > 0 {
		parts = append(parts, mapCount(c.MayRun, "watched thread", "watched threads")+" may run here")
	}
	if c.Conflict {
		parts = append(parts, "conflict")
	}
	return strings.Join(parts, "; ")
}

// legend draws a swatch and a word for each kind of cell, then the
// markers, and returns the y below it.
func (s *svgWriter) legend(m *Map, x, y float64) float64 {
	swatches := []struct {
		c    CPU
		text string
	}{
		{CPU{Online: true, Label: "q3", IRQs: []IRQ{{}}}, "a NIC queue IRQ lands here"},
		{CPU{Online: true, Label: "2q!", IRQs: []IRQ{{}, {}}, Conflict: true}, "conflict (!)"},
		{CPU{Online: true, Label: "q7*", IRQs: []IRQ{{}}, Remote: true}, "remote (*): off the NIC's node"},
		{CPU{Online: true, Label: "P", LastRan: []int{1}}, "watched thread (P last ran, p may run)"},
		{CPU{Online: true, Label: "i", Isolated: true}, "isolated (i)"},
		{CPU{Online: false, Label: "x"}, "offline (x)"},
		{CPU{Online: true, Label: "."}, "nothing lands here"},
	}
	var procs, isolated, offline bool
	procs = len(m.Processes) > 0
	for _, p := range m.Packages {
		for _, n := range p.Nodes {
			for _, c := range n.Cores {
				for _, th := range c.Threads {
					isolated = isolated || th.Isolated
					offline = offline || !th.Online
				}
			}
		}
	}
	show := map[string]bool{"P": procs, "i": isolated, "x": offline}
	s.text(x, y+13, 12, ` font-weight="bold" fill="#212529"`, "legend")
	y += svgLineH + 2
	cx := x
	for _, sw := range swatches {
		if shown, ok := show[sw.c.Label]; ok && !shown {
			continue
		}
		st := svgStyle(sw.c)
		s.rect(cx, y, 34, 20, st.fill, st.stroke, st.width, st.dash, 3)
		s.text(cx+17, y+15, 12, ` text-anchor="middle" font-weight="bold" fill="#212529"`, sw.c.Label)
		s.text(cx+40, y+15, 11, ` fill="#212529"`, sw.text)
		cx += 40 + float64(len(sw.text))*svgCharW*11/12 + 18
		if cx > 1000 {
			cx = x
			y += 26
		}
	}
	if cx != x {
		y += 26
	}
	line := ""
	for _, it := range legendItems(m) {
		if line != "" && len(line)+2+len(it) > 140 {
			s.text(x, y+13, 12, ` fill="#212529"`, line)
			y += svgLineH
			line = ""
		}
		if line != "" {
			line += "; "
		}
		line += it
	}
	if line != "" {
		s.text(x, y+13, 12, ` fill="#212529"`, line)
		y += svgLineH
	}
	return y + 4
}
