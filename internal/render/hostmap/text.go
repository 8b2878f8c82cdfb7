package hostmap

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Style says how WriteText draws the picture.
type Style struct {
	// Width is the number of columns to fit; 0 means 80. Nodes with up to
	// 64 CPUs fit 80 columns by wrapping their cores onto several rows.
	Width int
	// Color adds ANSI colours. The markers carry the same meaning, so it
	// is only for a terminal.
	Color bool
}

// DefaultWidth is the width WriteText fits when Style.Width is 0.
const DefaultWidth = 80

// MinWidth is the narrowest width WriteText accepts.
const MinWidth = 40

// ANSI colours of the cells and marker lines.
const (
	colorConflict = "1;31"
	colorRemote   = "33"
	colorQueue    = "32"
	colorThread   = "36"
	colorIsolated = "35"
	colorOffline  = "2"
)

// span is a run of text in one colour ("" for none).
type span struct{ text, color string }

// tline is one line of the picture.
type tline []span

func (l tline) width() int {
	n := 0
	for _, s := range l {
		n += utf8.RuneCountInString(s.text)
	}
	return n
}

func plain(s string) tline { return tline{{text: s}} }

// render writes the line, colours only with color. Runes a terminal
// would act on rather than print (escape sequences in a process or NIC
// name) become '?'.
func (l tline) render(color bool) string {
	var b strings.Builder
	for _, s := range l {
		text := strings.Map(printable, s.text)
		if color && s.color != "" && text != "" {
			b.WriteString("\x1b[" + s.color + "m" + text + "\x1b[0m")
		} else {
			b.WriteString(text)
		}
	}
	return b.String()
}

func printable(r rune) rune {
	if unicode.IsPrint(r) {
		return r
	}
	return '?'
}

// cellColor is the colour of a cell: the most pressing thing on it.
func cellColor(c CPU) string {
	switch {
	case c.Conflict:
		return colorConflict
	case c.Remote:
		return colorRemote
	case len(c.IRQs) > 0:
		return colorQueue
	case len(c.LastRan) > 0 || c.MayRun > 0:
		return colorThread
	case c.Isolated:
		return colorIsolated
	case !c.Online:
		return colorOffline
	}
	return ""
}

// WriteText draws m for a terminal: one box per package holding a box per
// node with its cores as a grid (a core's threads one under the other),
// the NICs under the node they are local to, then the conflicts, remote
// placements, watched processes, a legend and notes.
func WriteText(w io.Writer, m *Map, st Style) error {
	width := st.Width
	if width == 0 {
		width = DefaultWidth
	}
	if width < MinWidth {
		return fmt.Errorf("map width %d: want at least %d columns", width, MinWidth)
	}
	out := nodeBoxes(m, width)
	out = append(out, trailer(m, width)...)
	var b strings.Builder
	for _, l := range out {
		b.WriteString(strings.TrimRight(l.render(st.Color), " "))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// nodeBody is the body of a node box, its unwrapped text kept apart so
// the box width can be chosen first.
type nodeBody struct {
	title string
	grid  []tline
	text  []string
}

// nodeBoxes draws a box per package holding a box per node, and a box
// for the NICs on no known node, fitted to width.
func nodeBoxes(m *Map, width int) []tline {
	idw, lw := 1, 1
	for _, p := range m.Packages {
		for _, n := range p.Nodes {
			for _, c := range n.Cores {
				for _, th := range c.Threads {
					idw = max(idw, len(strconv.Itoa(th.ID)))
					lw = max(lw, len(th.Label))
				}
			}
		}
	}
	cellW := idw + 1 + lw
	const gap = 2
	avail := width - 8 // package frame and node frame, "| " and " |" each

	var bodies [][]nodeBody
	inner := 0
	for _, p := range m.Packages {
		var bs []nodeBody
		for _, n := range p.Nodes {
			nb := nodeBody{title: nodeTitle(n.ID.Or(-1))}
			nb.text = append(nb.text, nodeSummary(n))
			nb.grid = coreGrid(n.Cores, idw, cellW, gap, avail)
			for _, g := range nb.grid {
				inner = max(inner, g.width())
			}
			for _, name := range n.NICs {
				nic, _ := m.NIC(name)
				nb.text = append(nb.text, nicLines(nic)...)
			}
			for _, s := range nb.text {
				inner = max(inner, utf8.RuneCountInString(s))
			}
			inner = max(inner, len(nb.title)+4)
			bs = append(bs, nb)
		}
		bodies = append(bodies, bs)
	}
	var unknownText []string
	for _, name := range m.UnknownNICs {
		nic, _ := m.NIC(name)
		unknownText = append(unknownText, nicLines(nic)...)
	}
	for _, s := range unknownText {
		inner = max(inner, utf8.RuneCountInString(s))
	}
	inner = min(inner, avail)

	var out []tline
	for pi, p := range m.Packages {
		var pkgBody []tline
		for _, nb := range bodies[pi] {
			pkgBody = append(pkgBody, frame(nb.title, nb.lines(inner), inner, '-')...)
		}
		out = append(out, frame(packageTitle(p.Packages), pkgBody, inner+4, '=')...)
	}
	if len(unknownText) > 0 {
		var body []tline
		for _, s := range unknownText {
			for _, l := range wrapText(s, inner+4) {
				body = append(body, plain(l))
			}
		}
		out = append(out, frame("NICs on no known node", body, inner+4, '=')...)
	}
	return out
}

// lines is the node box's body: the summary, the core grid, then its
// NICs, wrapped to inner columns.
func (nb nodeBody) lines(inner int) []tline {
	var body []tline
	for i, s := range nb.text {
		if i == 1 {
			body = append(body, nb.grid...)
			body = append(body, plain(""))
		}
		for _, l := range wrapText(s, inner) {
			body = append(body, plain(l))
		}
	}
	if len(nb.text) == 1 {
		body = append(body, nb.grid...)
	}
	return body
}

// trailer is what follows the boxes: conflicts, remote placements and
// watched processes, the legend and the notes.
func trailer(m *Map, full int) []tline {
	var out, after []tline
	for _, s := range conflictLines(m) {
		after = append(after, markerLines(s, full, colorConflict)...)
	}
	for _, s := range remoteLines(m) {
		after = append(after, markerLines(s, full, colorRemote)...)
	}
	for _, s := range processLines(m) {
		after = append(after, markerLines(s, full, colorThread)...)
	}
	if len(after) > 0 {
		out = append(out, plain(""))
		out = append(out, after...)
	}
	out = append(out, plain(""))
	out = append(out, legend(m, full)...)
	if len(m.Notes) > 0 {
		out = append(out, plain(""))
		for _, n := range m.Notes {
			for i, l := range wrapText(n, full-6) {
				if i == 0 {
					out = append(out, plain("note: "+l))
				} else {
					out = append(out, plain("      "+l))
				}
			}
		}
	}
	return out
}

func nodeTitle(id int) string {
	if id < 0 {
		return "node unknown"
	}
	return "node " + strconv.Itoa(id)
}

func packageTitle(pkgs []int) string {
	switch len(pkgs) {
	case 0:
		return "package unknown"
	case 1:
		return "package " + strconv.Itoa(pkgs[0])
	}
	return "packages " + units.Ints(pkgs, ",")
}

// nodeSummary is "CPUs 16-31,48-63 (32), 125.8 GiB".
func nodeSummary(n Node) string {
	s := "no CPUs"
	if !n.CPUs.IsEmpty() {
		s = fmt.Sprintf("CPUs %s (%d)", n.CPUs.List(), n.CPUs.Len())
	}
	if mem, ok := n.MemoryBytes.Get(); ok {
		s += ", " + units.Bytes(mem)
	}
	return s
}

// coreGrid lays out cores left to right, wrapping into balanced rows that
// fit avail columns; each core's threads are stacked, so an SMT-2 row of
// cores takes two lines. Rows of multi-thread cores are separated by a
// blank line.
func coreGrid(cores []Core, idw, cellW, gap, avail int) []tline {
	if len(cores) == 0 {
		return nil
	}
	perRow := max(1, (avail+gap)/(cellW+gap))
	rows := (len(cores) + perRow - 1) / perRow
	perRow = (len(cores) + rows - 1) / rows
	var out []tline
	for r := 0; r < rows; r++ {
		row := cores[r*perRow : min(len(cores), (r+1)*perRow)]
		depth := 0
		for _, c := range row {
			depth = max(depth, len(c.Threads))
		}
		if r > 0 && depth > 1 {
			out = append(out, plain(""))
		}
		for t := 0; t < depth; t++ {
			var l tline
			for i, c := range row {
				if i > 0 {
					l = append(l, span{text: strings.Repeat(" ", gap)})
				}
				if t >= len(c.Threads) {
					l = append(l, span{text: strings.Repeat(" ", cellW)})
					continue
				}
				th := c.Threads[t]
				text := fmt.Sprintf("%*d %s", idw, th.ID, th.Label)
				l = append(l, span{text: text, color: cellColor(th)})
				if pad := cellW - len(text); pad > 0 {
					l = append(l, span{text: strings.Repeat(" ", pad)})
				}
			}
			out = append(out, l)
		}
	}
	return out
}

// frame draws a box of the given inner width around body, its title in
// the top border.
func frame(title string, body []tline, inner int, rule byte) []tline {
	r := string(rule)
	top := "+" + r + " " + title + " "
	top += strings.Repeat(r, max(0, inner+3-len(top))) + "+"
	out := []tline{plain(top)}
	for _, l := range body {
		row := tline{{text: "| "}}
		row = append(row, l...)
		row = append(row, span{text: strings.Repeat(" ", max(0, inner-l.width())) + " |"})
		out = append(out, row)
	}
	out = append(out, plain("+"+strings.Repeat(r, inner+2)+"+"))
	return out
}

// nicLines describes a NIC in its node's box.
func nicLines(n NIC) []string {
	head := "NIC " + n.Name
	if n.Key != "" {
		head += " [" + n.Key + "]"
	}
	var parts []string
	if n.Driver != "" {
		parts = append(parts, n.Driver)
	}
	if n.PCI != "" {
		parts = append(parts, n.PCI)
	}
	desc := strings.Join(parts, " ")
	if n.Inferred {
		known := "known from IRQ names, queues unknown"
		if n.PCIAbsent {
			known = "PCI function not in the tree; " + known
		}
		desc = strings.TrimSpace(desc + " (" + known + ")")
	} else {
		if desc != "" {
			desc += ", "
		}
		rx, rxOK := n.RxQueues.Get()
		tx, txOK := n.TxQueues.Get()
		if !rxOK || !txOK {
			desc += "queues unknown"
		} else {
			desc += fmt.Sprintf("%d rx/%d tx queues", rx, tx)
		}
	}
	switch {
	case !n.Node.Known() && unknown.Is(n.Locality, topology.LocalitySourceLocalCPUList):
		desc += ", local CPUs " + n.LocalCPUs.List() + " (from local_cpulist)"
	case !n.Node.Known():
		desc += ", node unknown"
	case unknown.Is(n.Locality, topology.LocalitySourceSingleNode):
		desc += " (the only node)"
	case unknown.Is(n.Locality, topology.LocalitySourceIRQNode):
		desc += " (node from its IRQs' /proc/irq/N/node)"
	case !unknown.Is(n.Locality, topology.LocalitySourceNumaNode):
		desc += " (node from " + n.Locality.String() + ")"
	}
	lines := []string{head + ": " + desc}

	var s string
	switch len(n.QueueIRQs) {
	case 0:
		s = "no queue IRQs"
	default:
		s = countedList(cpuset.New(n.QueueIRQs...), "queue IRQ", "queue IRQs")
		if !n.QueueCPUs.IsEmpty() {
			s += " on " + countedList(n.QueueCPUs, "CPU", "CPUs")
		}
	}
	var notes []string
	if k := len(n.SharedIRQs); k > 0 {
		notes = append(notes, fmt.Sprintf("%d share a CPU (!)", k))
	}
	if k := len(n.RemoteIRQs); k > 0 {
		notes = append(notes, fmt.Sprintf("%d remote (*)", k))
	}
	if k := len(n.NoRSSIRQs); k > 0 {
		notes = append(notes, fmt.Sprintf("%d get no RSS traffic (-)", k))
	}
	if k := len(n.UnplacedIRQs); k > 0 {
		notes = append(notes, fmt.Sprintf("%d with unknown affinity (%s)", k, irqList(n.UnplacedIRQs)))
	}
	if len(n.OtherIRQs) > 0 {
		notes = append(notes, fmt.Sprintf("other %s %s", mapWord(len(n.OtherIRQs), "IRQ", "IRQs"), irqList(n.OtherIRQs)))
	}
	if len(notes) > 0 {
		s += "; " + strings.Join(notes, "; ")
	}
	return append(lines, "  "+s)
}

// irqList is "284-299" or "141-144,150".
func irqList(ns []int) string { return cpuset.New(ns...).List() }

// conflictLines says each conflict in words. Thread conflicts are grouped
// per process: last ran on, then may run on, the queue CPUs.
func conflictLines(m *Map) []string {
	var out []string
	type procCPUs struct{ last, may []int }
	byPID := map[int]*procCPUs{}
	for _, c := range m.Conflicts {
		switch c.Kind {
		case ConflictKindSharedCPU:
			out = append(out, fmt.Sprintf("! CPU %d (%s): %s queues %s (IRQs %s) share it",
				c.CPU, nodeTitle(c.Node.Or(-1)), c.NIC, mapAndList(c.Queues), units.Ints(c.IRQs, ", ")))
		case ConflictKindThread:
			for _, pid := range c.PIDs {
				pc := byPID[pid]
				if pc == nil {
					pc = &procCPUs{}
					byPID[pid] = pc
				}
				if len(c.LastRan) > 0 {
					pc.last = append(pc.last, c.CPU)
				} else {
					pc.may = append(pc.may, c.CPU)
				}
			}
		}
	}
	for _, p := range m.Processes {
		pc := byPID[p.PID]
		if pc == nil {
			continue
		}
		who := fmt.Sprintf("%s (pid %d)", p.Comm, p.PID)
		if len(pc.last) > 0 {
			out = append(out, fmt.Sprintf("! %s last ran on queue %s %s", who,
				mapWord(len(pc.last), "CPU", "CPUs"), irqList(pc.last)))
		}
		if len(pc.may) > 0 {
			out = append(out, fmt.Sprintf("! %s may run on queue %s %s", who,
				mapWord(len(pc.may), "CPU", "CPUs"), irqList(pc.may)))
		}
	}
	return out
}

// remoteLines says each remote placement.
func remoteLines(m *Map) []string {
	var out []string
	for _, r := range m.Remote {
		where := "no known node"
		if len(r.Nodes) > 0 {
			where = mapWord(len(r.Nodes), "node ", "nodes ") + units.Ints(r.Nodes, ",")
		}
		nicAt := "whose local CPUs are elsewhere"
		if node, ok := r.NICNode.Get(); ok {
			nicAt = fmt.Sprintf("on node %d", node)
		}
		cpus := mapWord(r.CPUs.Len(), "CPU", "CPUs")
		out = append(out, fmt.Sprintf("* %s %s (%s): %s queue %d (IRQ %d) is remote; %s is %s",
			cpus, r.CPUs.List(), where, r.NIC, r.Queue, r.IRQ, r.NIC, nicAt))
	}
	return out
}

// processLines describes each watched process.
func processLines(m *Map) []string {
	var out []string
	for _, p := range m.Processes {
		s := fmt.Sprintf("P %s (pid %d): %s, may run on %s", p.Comm, p.PID,
			mapCount(p.Threads, "thread", "threads"), units.OrDash(p.Allowed.List()))
		if !p.LastCPUs.IsEmpty() {
			s += ", last ran on " + p.LastCPUs.List()
		}
		if u := (nicuse.Use{NICs: p.NICs, Attribution: p.Attribution}); !u.Attribution.Known() {
			s += "; NIC unknown"
		} else {
			s += "; uses " + u.Summary()
		}
		if len(p.How) > 0 {
			s += ": " + p.How[0]
		}
		out = append(out, s)
	}
	return out
}

// markerLines wraps a line that starts with a marker character, colouring
// the marker and indenting the continuation under the text.
func markerLines(s string, width int, color string) []tline {
	marker, text, _ := strings.Cut(s, " ")
	var out []tline
	for i, l := range wrapText(text, width-2) {
		if i == 0 {
			out = append(out, tline{{text: marker, color: color}, {text: " " + l}})
		} else {
			out = append(out, plain("  "+l))
		}
	}
	return out
}

// legend explains the cell text, wrapped to width.
func legend(m *Map, width int) []tline {
	items := legendItems(m)
	const lead = "legend: "
	indent := strings.Repeat(" ", len(lead))
	var out []tline
	line := lead
	flush := func() {
		if strings.TrimSpace(line) != "" && line != lead {
			out = append(out, plain(line))
			line = indent
		}
	}
	for _, it := range items {
		n := utf8.RuneCountInString(it)
		switch {
		case line == lead || line == indent:
		case utf8.RuneCountInString(line)+3+n <= width:
			line += "   "
		default:
			flush()
		}
		if len(indent)+n <= width {
			line += it
			continue
		}
		for i, l := range wrapText(it, width-len(indent)) {
			if i > 0 {
				flush()
			}
			line += l
		}
	}
	if strings.TrimSpace(line) != "" && line != lead {
		out = append(out, plain(line))
	}
	return out
}

// legendItems are the entries of the legend. The queue, conflict and
// remote entries are always there; the others when the picture has them.
func legendItems(m *Map) []string {
	var items []string
	var keyed []NIC
	for _, n := range m.NICs {
		if n.Key != "" {
			keyed = append(keyed, n)
		}
	}
	switch len(keyed) {
	case 0:
		items = append(items, "q3 = queue 3's IRQ lands here")
	case 1:
		n := keyed[0].Name
		items = append(items, "q3 = "+n+" queue 3's IRQ lands here", "2q = two of "+n+"'s queue IRQs")
	default:
		k := keyed[0].Key
		items = append(items, k+"3 = queue 3 of NIC "+k+" lands here", "2"+k+" = two of its queue IRQs",
			"2+ = queue IRQs of several NICs")
		var names []string
		for _, n := range keyed {
			names = append(names, n.Key+" = "+n.Name)
		}
		items = append(items, "NICs: "+strings.Join(names, ", "))
	}
	var procs, requested, isolated, offline, noRSS bool
	procs = len(m.Processes) > 0
	for _, p := range m.Packages {
		for _, n := range p.Nodes {
			for _, c := range n.Cores {
				for _, th := range c.Threads {
					requested = requested || th.Requested
					isolated = isolated || th.Isolated
					offline = offline || !th.Online
					noRSS = noRSS || th.NoRSS
				}
			}
		}
	}
	if noRSS {
		items = append(items, "- = its queues get no RSS traffic (the RSS table leaves them out)")
	}
	if procs {
		items = append(items, "P = a watched thread last ran here", "p = a watched thread may run here")
	}
	items = append(items, "! = conflict: queues share a CPU, or a watched thread on a queue CPU",
		"* = remote: queue IRQ off its NIC's node")
	if requested {
		items = append(items, "? = placed by requested affinity (effective unknown or move pending)")
	}
	if isolated {
		items = append(items, "i = isolated (isolcpus/nohz_full)")
	}
	if offline {
		items = append(items, "x = offline")
	}
	items = append(items, ". = no queue IRQ")
	return items
}

// wrapText breaks s into lines of at most width runes, at spaces or after
// commas; a word longer than width is cut.
func wrapText(s string, width int) []string {
	if width < 1 {
		width = 1
	}
	var out []string
	for utf8.RuneCountInString(s) > width {
		r := []rune(s)
		cut := -1
		for i := width; i > 0; i-- {
			if r[i] == ' ' {
				cut = i
				break
			}
			if r[i-1] == ',' {
				cut = i
				break
			}
		}
		if cut <= 0 {
			cut = width
		}
		line := strings.TrimRight(string(r[:cut]), " ")
		out = append(out, line)
		rest := string(r[cut:])
		indent := ""
		if strings.HasPrefix(s, "  ") {
			indent = "  "
		}
		s = indent + strings.TrimLeft(rest, " ")
		if strings.TrimSpace(s) == "" {
			s = ""
			break
		}
	}
	if s != "" || len(out) == 0 {
		out = append(out, s)
	}
	return out
}

// countedList is "queue IRQ 38", "queue IRQs 38-45", "CPUs 0,2-3 (3)":
// the word agreeing with the list, whose length is said when it is more
// than two and not one range, too many to count at a glance.
func countedList(set cpuset.Set, one, many string) string {
	switch n, list := set.Len(), set.List(); {
	case n == 1:
		return one + " " + list
	case n == 2 || !strings.Contains(list, ","):
		return many + " " + list
	default:
		return fmt.Sprintf("%s %s (%d)", many, list, n)
	}
}

// mapCount is "1 queue IRQ", "16 queue IRQs".
func mapCount(n int, one, many string) string { return strconv.Itoa(n) + " " + mapWord(n, one, many) }

// mapWord is one for 1, many otherwise.
func mapWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// mapAndList is "2 and 6", "1, 2 and 3".
func mapAndList(v []int) string {
	if len(v) < 2 {
		return units.Ints(v, ", ")
	}
	return units.Ints(v[:len(v)-1], ", ") + " and " + strconv.Itoa(v[len(v)-1])
}
