package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/audit"
	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/irq"
	"github.com/irqnuma/irqnuma/topology"
)

// WriteAudit writes the human form of an audit: for each NIC (host-wide
// findings last) a header line and a table of its findings, worst first,
// each finding's fix on the line below it; then a one-line verdict
// against failOn ("" for --fail-on never).
func WriteAudit(w io.Writer, doc AuditDoc, failOn audit.Severity) error {
	if len(doc.Processes) > 0 {
		if err := writeProcessNICs(w, doc.Processes); err != nil {
			return err
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	// Every NIC checked has its group, "no findings" when clean, so a
	// clean NIC is seen to be checked; host-wide findings come last.
	byGroup := map[string][]audit.Finding{}
	groups := slices.Clone(doc.Checked)
	for _, f := range doc.Findings {
		if _, ok := byGroup[f.NIC]; !ok && f.NIC != "" && !slices.Contains(groups, f.NIC) {
			groups = append(groups, f.NIC)
		}
		byGroup[f.NIC] = append(byGroup[f.NIC], f)
	}
	slices.Sort(groups)
	if len(byGroup[""]) > 0 {
		groups = append(groups, "")
	}
	for i, g := range groups {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		title := "host"
		if g != "" {
			title = g
			if h := doc.Headers[g]; h != "" {
				title += ": " + h
			}
		}
		if _, err := fmt.Fprintln(w, title); err != nil {
			return err
		}
		if len(byGroup[g]) == 0 {
			if _, err := io.WriteString(w, "no findings\n"); err != nil {
				return err
			}
			continue
		}
		var rows [][]string
		for _, f := range groupFindings(byGroup[g]) {
			rows = append(rows, []string{string(f.Severity), string(f.Check), f.Subject, f.Message})
			if f.Fix != "" {
				rows = append(rows, []string{"", "", "", "fix: " + f.Fix})
			}
		}
		if err := writeTable(w, []string{"SEVERITY", "CHECK", "SUBJECT", "MESSAGE"}, rows); err != nil {
			return err
		}
	}
	if len(groups) > 0 {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, Verdict(doc.Findings, failOn))
	return err
}

// writeProcessNICs writes which NIC each watched process uses, which the
// audit judged it against, and how its sockets showed it, one line of
// how per row.
func writeProcessNICs(w io.Writer, pns []audit.ProcessNIC) error {
	if _, err := fmt.Fprintln(w, "processes"); err != nil {
		return err
	}
	var rows [][]string
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
	return writeTable(w, []string{"PID", "COMM", "USES", "JUDGED AGAINST", "HOW"}, rows)
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

// Verdict is the audit's one-line answer: whether anything is at or
// above failOn ("" for never), with the counts.
func Verdict(fs []audit.Finding, failOn audit.Severity) string {
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
