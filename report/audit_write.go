package report

import (
	"fmt"
	"io"
	"strings"
)

// WriteAudit writes the human form of an audit: for each NIC (host-wide
// findings last) a header line and a table of its findings, worst first,
// each finding's fix on the line below it; then a one-line verdict
// against failOn ("" for --fail-on never).
func WriteAudit(w io.Writer, doc AuditDoc, failOn Severity) error {
	var groups []string
	byGroup := map[string][]Finding{}
	for _, f := range doc.Findings {
		if _, ok := byGroup[f.NIC]; !ok {
			groups = append(groups, f.NIC)
		}
		byGroup[f.NIC] = append(byGroup[f.NIC], f)
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
		var rows [][]string
		for _, f := range byGroup[g] {
			rows = append(rows, []string{string(f.Severity), f.Check, f.Subject, f.Message})
			if f.Fix != "" {
				rows = append(rows, []string{"", "", "", "fix: " + f.Fix})
			}
		}
		if err := WriteTable(w, []string{"SEVERITY", "CHECK", "SUBJECT", "MESSAGE"}, rows); err != nil {
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

// Verdict is the audit's one-line answer: whether anything is at or
// above failOn ("" for never), with the counts.
func Verdict(fs []Finding, failOn Severity) string {
	s := Summarize(fs)
	counts := countWords(s)
	if len(fs) == 0 {
		return "verdict: ready: no findings"
	}
	if failOn.Rank() == 0 {
		return fmt.Sprintf("verdict: %s (--fail-on never)", counts)
	}
	failing := Summarize(AtOrAbove(fs, failOn))
	if n := failing.Error + failing.Warning + failing.Info; n > 0 {
		return fmt.Sprintf("verdict: NOT READY: %s at or above %s (%s in all)", countWords(failing), failOn, counts)
	}
	return fmt.Sprintf("verdict: ready: nothing at or above %s (%s)", failOn, counts)
}

// countWords is "1 error, 2 warnings, 3 info", leaving out zeros.
func countWords(s AuditSummary) string {
	var parts []string
	if s.Error > 0 {
		parts = append(parts, plural(s.Error, "error", "errors"))
	}
	if s.Warning > 0 {
		parts = append(parts, plural(s.Warning, "warning", "warnings"))
	}
	if s.Info > 0 {
		parts = append(parts, fmt.Sprintf("%d info", s.Info))
	}
	if len(parts) == 0 {
		return "no findings"
	}
	return strings.Join(parts, ", ")
}
