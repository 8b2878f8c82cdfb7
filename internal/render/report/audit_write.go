package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/units"
)

// WriteAudit writes the human form of an audit, worst first: the
// verdict against failOn ("" for --fail-on never) and a summary of the
// findings per check and severity; which NIC each watched process uses;
// for each NIC (the worst findings first) a header line and a table of
// its findings, each finding's fix on the line below it; one table of
// what several NICs share, each such finding said once with the NICs it
// was found on; host-wide findings; the NICs with no findings; and the
// verdict again, last, as scripts that tail the output expect. width
// is the terminal's: every line fits it (a table's last column and long
// cells wrap); 0 writes each finding on one line, for grep.
func WriteAudit(w io.Writer, doc AuditDoc, failOn audit.Severity, width int) error {
	var b strings.Builder
	b.WriteString(wrapLine(verdict(doc.Findings, failOn), width))
	if len(doc.Findings) > 0 {
		putTable(&b, width, []string{"SEVERITY", "CHECK", "FINDINGS", "ON"}, summaryRows(doc.Findings))
	}
	if len(doc.Processes) > 0 {
		b.WriteString("\nprocesses\n")
		header, rows := processNICRows(doc.Processes)
		putTable(&b, width, header, rows, 2, 3)
	}
	// Every NIC checked has its block, "no findings" when clean, so a
	// clean NIC is seen to be checked.
	byNIC := map[string][]audit.Finding{}
	nics := slices.Clone(doc.Checked)
	for _, f := range doc.Findings {
		if f.NIC != "" && !slices.Contains(nics, f.NIC) {
			nics = append(nics, f.NIC)
		}
		byNIC[f.NIC] = append(byNIC[f.NIC], f)
	}
	slices.Sort(nics)
	var merged []audit.Finding
	for _, n := range nics {
		merged = append(merged, groupFindings(byNIC[n])...)
	}
	shared, alone := shareAcrossNICs(merged)
	aloneBy := map[string][]audit.Finding{}
	for _, f := range alone {
		aloneBy[f.NIC] = append(aloneBy[f.NIC], f)
	}

	type block struct {
		rank, order int // worst severity; NICs, shared, host, clean
		write       func()
	}
	var blocks []block
	findingRows := func(fs []audit.Finding) [][]string {
		var rows [][]string
		for _, f := range fs {
			rows = append(rows, []string{string(f.Severity), string(f.Check), f.Subject, f.Message})
			if f.Fix != "" {
				rows = append(rows, []string{"", "", "", "fix: " + f.Fix})
			}
		}
		return rows
	}
	section := func(title string, fs []audit.Finding) func() {
		return func() {
			b.WriteString(wrapLine(title, width))
			if len(fs) == 0 {
				b.WriteString("no findings\n")
			} else {
				putTable(&b, width, findingHeader, findingRows(fs), 2)
			}
		}
	}
	for _, n := range nics {
		title := n
		if h := doc.Headers[n]; h != "" {
			title += ": " + h
		}
		switch fs := aloneBy[n]; {
		case len(fs) > 0:
			blocks = append(blocks, block{worst(fs), 0, section(title, fs)})
		case len(byNIC[n]) == 0:
			blocks = append(blocks, block{0, 3, section(title, nil)})
		}
	}
	if len(shared) > 0 {
		blocks = append(blocks, block{shared[0].severity.Rank(), 1, func() {
			b.WriteString(wrapLine(`on several NICs ("<nic>" stands for each NIC named)`, width))
			putTable(&b, width, []string{"SEVERITY", "CHECK", "NICS", "MESSAGE"}, sharedRows(shared))
		}})
	}
	if fs := byNIC[""]; len(fs) > 0 {
		blocks = append(blocks, block{worst(fs), 2, section("host", groupFindings(fs))})
	}
	slices.SortStableFunc(blocks, func(x, y block) int {
		return cmp.Or(cmp.Compare(y.rank, x.rank), cmp.Compare(x.order, y.order))
	})
	for _, bl := range blocks {
		b.WriteString("\n")
		bl.write()
	}
	if len(blocks) > 0 { // and last, for whoever reads the end (tail -n 1)
		b.WriteString("\n" + wrapLine(verdict(doc.Findings, failOn), width))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var findingHeader = []string{"SEVERITY", "CHECK", "SUBJECT", "MESSAGE"}

// worst is the rank of the most severe of fs, which are not none.
func worst(fs []audit.Finding) int {
	return slices.MaxFunc(fs, func(x, y audit.Finding) int { return cmp.Compare(x.Severity.Rank(), y.Severity.Rank()) }).Severity.Rank()
}

// summaryRows counts the findings per severity and check, worst first,
// saying on what they were found: a NIC or two by name, more as a count,
// and the host.
func summaryRows(fs []audit.Finding) [][]string {
	type key struct {
		sev   audit.Severity
		check audit.Check
	}
	count := map[key]int{}
	nics := map[key][]string{}
	host := map[key]bool{}
	var keys []key
	for _, f := range fs {
		k := key{f.Severity, f.Check}
		if count[k] == 0 {
			keys = append(keys, k)
		}
		count[k]++
		switch {
		case f.NIC == "":
			host[k] = true
		case !slices.Contains(nics[k], f.NIC):
			nics[k] = append(nics[k], f.NIC)
		}
	}
	slices.SortFunc(keys, func(x, y key) int {
		return cmp.Or(cmp.Compare(y.sev.Rank(), x.sev.Rank()), cmp.Compare(x.check.Place(), y.check.Place()))
	})
	var rows [][]string
	for _, k := range keys {
		var on []string
		switch n := nics[k]; {
		case len(n) > 0 && len(n) <= 2:
			on = append(on, units.Names(n))
		case len(n) > 2:
			on = append(on, fmt.Sprintf("%d NICs", len(n)))
		}
		if host[k] {
			on = append(on, "host")
		}
		rows = append(rows, []string{string(k.sev), string(k.check), strconv.Itoa(count[k]), strings.Join(on, ", ")})
	}
	return rows
}

// sharedFinding is one thing several NICs were found to have: the same
// check, severity, subject, message and fix once each NIC's name is
// replaced by "<nic>".
type sharedFinding struct {
	sharedKey
	nics []string
}

type sharedKey struct {
	severity              audit.Severity
	check                 audit.Check
	subject, message, fix string
}

// nicPlaceholder stands for each NIC's name in a shared finding.
const nicPlaceholder = "<nic>"

// shareAcrossNICs splits findings (of several NICs, grouped per NIC
// already) into what at least two NICs share, worst first, and the rest,
// in their order. Host-wide findings are never shared.
func shareAcrossNICs(fs []audit.Finding) (shared []*sharedFinding, alone []audit.Finding) {
	byKey := map[sharedKey]*sharedFinding{}
	of := make([]*sharedFinding, len(fs)) // nil for the host's
	for i, f := range fs {
		k := sharedKey{f.Severity, f.Check, units.ReplaceName(f.Subject, f.NIC, nicPlaceholder),
			units.ReplaceName(f.Message, f.NIC, nicPlaceholder), units.ReplaceName(f.Fix, f.NIC, nicPlaceholder)}
		if f.NIC == "" {
			continue
		}
		if byKey[k] == nil {
			byKey[k] = &sharedFinding{sharedKey: k}
			shared = append(shared, byKey[k])
		}
		if of[i] = byKey[k]; !slices.Contains(of[i].nics, f.NIC) {
			of[i].nics = append(of[i].nics, f.NIC)
		}
	}
	for i, f := range fs {
		if of[i] == nil || len(of[i].nics) < 2 {
			alone = append(alone, f)
		}
	}
	shared = slices.DeleteFunc(shared, func(s *sharedFinding) bool { return len(s.nics) < 2 })
	slices.SortStableFunc(shared, func(x, y *sharedFinding) int {
		return cmp.Or(cmp.Compare(y.severity.Rank(), x.severity.Rank()), cmp.Compare(x.check.Place(), y.check.Place()),
			cmp.Compare(len(y.nics), len(x.nics)))
	})
	return shared, alone
}

// sharedRows are the rows of the shared findings: one row per check and
// severity, with how many NICs it was found on, then each form of it
// (its message, its fix and the NICs it was found on) below.
func sharedRows(shared []*sharedFinding) [][]string {
	var rows [][]string
	for i := 0; i < len(shared); {
		j := i
		var all []string
		for ; j < len(shared) && shared[j].check == shared[i].check && shared[j].severity == shared[i].severity; j++ {
			all = append(all, shared[j].nics...)
		}
		slices.Sort(all)
		all = slices.Compact(all)
		for k, s := range shared[i:j] {
			lead := []string{"", "", ""}
			if k == 0 {
				lead = []string{string(s.severity), string(s.check), units.Plural(len(all), "NIC", "NICs")}
			}
			rows = append(rows, append(lead, s.message))
			if s.fix != "" {
				rows = append(rows, []string{"", "", "", "fix: " + s.fix})
			}
			rows = append(rows, []string{"", "", "", fmt.Sprintf("on %s: %s", units.Plural(len(s.nics), "NIC", "NICs"), units.Names(s.nics))})
		}
		i = j
	}
	return rows
}

// processNICRows are the rows of which NIC each watched process uses,
// which the audit judged it against, and how its sockets showed it, one
// line of how per row.
func processNICRows(pns []audit.ProcessNIC) (header []string, rows [][]string) {
	for _, pn := range pns {
		judged := "none"
		if len(pn.Judged) > 0 {
			judged = fmt.Sprintf("%s (%s)", strings.Join(pn.Judged, ", "), pn.JudgedBy)
		}
		how := pn.How
		if len(how) == 0 {
			how = []string{"-"}
		}
		rows = append(rows, []string{strconv.Itoa(pn.PID), pn.Comm, pn.Summary(), judged, how[0]})
		for _, h := range how[1:] {
			rows = append(rows, []string{"", "", "", "", h})
		}
	}
	return []string{"PID", "COMM", "USES", "JUDGED AGAINST", "HOW"}, rows
}

// groupFindings merges the findings of one NIC that say the same thing
// of different IRQs (same check, severity, fix and Group) into one, at
// the place of the first: "IRQs 62-65 (4) of eth0 are delivered to CPUs
// 4-7 (node 1), off the NIC's node 0". A finding alone is kept as it is.
func groupFindings(fs []audit.Finding) []audit.Finding {
	type key struct {
		check    audit.Check
		severity audit.Severity
		fix, grp string
	}
	members := map[key][]audit.Finding{}
	for _, f := range fs {
		if f.Group != "" && len(f.IRQ) > 0 {
			k := key{f.Check, f.Severity, f.Fix, f.Group}
			members[k] = append(members[k], f)
		}
	}
	var out []audit.Finding
	done := map[key]bool{}
	for _, f := range fs {
		k := key{f.Check, f.Severity, f.Fix, f.Group}
		m := members[k]
		if f.Group == "" || len(m) < 2 {
			out = append(out, f)
			continue
		}
		if done[k] {
			continue
		}
		done[k] = true
		g := m[0]
		var irqs []int
		var cpus cpuset.Set
		for _, x := range m {
			irqs = append(irqs, x.IRQ...)
			cpus = cpus.Union(x.CPUs)
		}
		list := cpuset.New(irqs...).List()
		g.IRQ = irqs
		g.CPUs = cpus
		g.Subject = fmt.Sprintf("IRQs %s (%d)", list, len(irqs))
		g.Message = fmt.Sprintf("IRQs %s of %s "+g.Group, list, g.NIC, cpusWord(cpus))
		out = append(out, g)
	}
	return out
}

// cpusWord is "CPU 3" or "CPUs 0-15".
func cpusWord(s cpuset.Set) string {
	if s.Len() == 1 {
		return "CPU " + s.List()
	}
	return "CPUs " + s.List()
}

// verdict is the audit's one-line answer: whether anything is at or
// above failOn ("" for never), with the counts.
func verdict(fs []audit.Finding, failOn audit.Severity) string {
	s := audit.Summarize(fs)
	counts := countWords(s)
	if len(fs) == 0 {
		return "verdict: ready: no findings"
	}
	if failOn.Rank() == 0 {
		return fmt.Sprintf("verdict: %s (--fail-on never)", counts)
	}
	failing := audit.Summarize(audit.AtOrAbove(fs, failOn))
	if n := failing.Error + failing.Warning + failing.Info; n > 0 {
		return fmt.Sprintf("verdict: NOT READY: %s at or above %s (%s in all)", countWords(failing), failOn, counts)
	}
	return fmt.Sprintf("verdict: ready: nothing at or above %s (%s)", failOn, counts)
}

// countWords is "1 error, 2 warnings, 3 info", leaving out zeros.
func countWords(s audit.Summary) string {
	var parts []string
	if s.Error > 0 {
		parts = append(parts, units.Plural(s.Error, "error", "errors"))
	}
	if s.Warning > 0 {
		parts = append(parts, units.Plural(s.Warning, "warning", "warnings"))
	}
	if s.Info > 0 {
		parts = append(parts, fmt.Sprintf("%d info", s.Info))
	}
	if len(parts) == 0 {
		return "no findings"
	}
	return strings.Join(parts, ", ")
}

// AuditDoc is the JSON document of `irqnuma audit`:
// {"findings":[...],"summary":{"error":N,"warning":N,"info":N},
// "checked_nics":["eth0",...],"processes":[...]}.
type AuditDoc struct {
	Findings []audit.Finding `json:"findings"`
	Summary  audit.Summary   `json:"summary"`
	// Checked names the NICs the audit looked at, with findings or not.
	Checked []string `json:"checked_nics"`
	// Processes says, per watched process, which NICs it uses, how that
	// was found and which NICs it was judged against; [] for none.
	Processes []audit.ProcessNIC `json:"processes"`
	// Headers describe each NIC group for the table ("mlx5_core
	// 0000:98:00.0, local node 1, 16 queue IRQs"); not part of the JSON.
	Headers map[string]string `json:"-"`
}

// NewAuditDoc builds the document of an audit, with a header line for
// each NIC it checked or has findings of.
func NewAuditDoc(st *audit.State) AuditDoc {
	fs := st.Findings
	if fs == nil {
		fs = []audit.Finding{}
	}
	procs := st.Processes
	if procs == nil {
		procs = []audit.ProcessNIC{}
	}
	doc := AuditDoc{Findings: fs, Summary: audit.Summarize(fs), Checked: []string{}, Processes: procs, Headers: map[string]string{}}
	names := []string{}
	for _, n := range audit.Audited(st.Host, st.IRQs, st.NICs) {
		doc.Checked = append(doc.Checked, n.Name)
		names = append(names, n.Name)
	}
	for _, f := range fs {
		names = append(names, f.NIC)
	}
	for _, name := range names {
		if n, ok := st.Host.NICByName(name); ok && name != "" && doc.Headers[name] == "" {
			doc.Headers[name] = nicHeader(st.Host, st.IRQs, n)
		}
	}
	return doc
}

// nicHeader is a NIC group's title: "mlx5_core 0000:98:00.0, local node
// 1, 16 queue IRQs".
func nicHeader(h *topology.Host, t *irq.Table, n *topology.NIC) string {
	var parts []string
	dev := strings.TrimSpace(n.Driver + " " + cmp.Or(n.PCI, n.Virtio))
	if dev != "" {
		parts = append(parts, dev)
	}
	if loc := h.Locality(n); loc.Known() {
		parts = append(parts, "local "+audit.NodeName(loc))
	} else {
		parts = append(parts, "locality unknown")
	}
	queues := 0
	for _, q := range t.ForNIC(n.Name) {
		if q.Owner.Kind == irq.KindQueue {
			queues++
		}
	}
	parts = append(parts, units.Plural(queues, "queue IRQ", "queue IRQs"))
	return strings.Join(parts, ", ")
}
