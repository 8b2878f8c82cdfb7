package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// columns returns the process facts of runCLI with $COLUMNS set to n.
func columns(n string) sys {
	s := hostSys()
	s.getenv = func(k string) string {
		if k == "COLUMNS" {
			return n
		}
		return ""
	}
	return s
}

// TestAuditOutputDell: the audit of a 74-NIC host leads with its verdict
// and a summary, says a finding that repeats across NICs once per check
// with the NICs listed compactly, and fits the terminal's width.
func TestAuditOutputDell(t *testing.T) {
	t.Parallel()
	root := realhosts.Root(t, realhosts.MustLookup(t, "dell-2numa"))
	doc, code := auditJSON(t, root)
	if code != 3 || doc.Summary.Warning != 15 || doc.Summary.Info != 144 || len(doc.Findings) != 159 {
		t.Fatalf("dell-2numa JSON: exit %d, summary %+v, %d findings; want 3, 15 warnings, 144 info, 159", code, doc.Summary, len(doc.Findings))
	}
	for _, width := range []int{100, 72} {
		stdout, stderr, code := runCLISys(t, columns(strconv.Itoa(width)), "--root", root, "audit")
		if code != 3 {
			t.Fatalf("COLUMNS=%d audit: exit %d: %s", width, code, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		for i, l := range lines {
			if len(l) > width {
				t.Errorf("COLUMNS=%d: line %d is %d wide: %q", width, i+1, len(l), l)
			}
		}
		// The verdict comes last too (wrapped at 72), for scripts that
		// tail it.
		const verdict = "verdict: NOT READY: 15 warnings at or above warning (15 warnings, 144 info in all)"
		if end := strings.Join(strings.Fields(strings.Join(lines[len(lines)-2:], " ")), " "); !strings.HasSuffix(end, verdict) {
			t.Errorf("COLUMNS=%d: the output ends %q, not with the verdict", width, end)
		}
		head := strings.Join(lines[:10], "\n")
		flatHead := strings.Join(strings.Fields(head), " ")
		for _, want := range []string{
			verdict,
			"warning irq-shared-cpu 15 15 NICs",
			"info queues-vs-cpus 70 70 NICs",
			"info not-checked 74 70 NICs, host",
		} {
			if !strings.Contains(flatHead, want) {
				t.Errorf("COLUMNS=%d: the first 10 lines lack %q:\n%s", width, want, head)
			}
		}
		// One row per check for what repeats across NICs, with the count;
		// the NICs listed compactly, each once.
		for _, check := range []string{"queues-vs-cpus", "not-checked"} {
			rows := regexp.MustCompile(`(?m)^info +`+check+` +(\d+ NICs)?`).FindAllStringSubmatch(stdout, -1)
			nicRows := 0
			for _, r := range rows {
				if r[1] != "" {
					nicRows++
					if r[1] != "70 NICs" {
						t.Errorf("COLUMNS=%d: %s on %s, want 70 NICs", width, check, r[1])
					}
				}
			}
			// queues-vs-cpus: the summary and the shared row; not-checked
			// has the host's four rows as well (the capture holds no
			// steering).
			if want := map[string]int{"queues-vs-cpus": 2, "not-checked": 6}[check]; len(rows) != want || nicRows != 1 {
				t.Errorf("COLUMNS=%d: %d rows of %s (%d with a NIC count), want %d and 1:\n%s", width, len(rows), check, nicRows, want, stdout)
			}
		}
		flat := strings.Join(strings.Fields(stdout), " ")
		for _, want := range []string{
			"on 64 NICs: ens1f0v0-15, ens1f1v0-15, ens3f0v0-15, ens3f1v0-15",
			"on 70 NICs: 0000:19:00.0, 0000:19:00.1, ens1f0, ens1f0v0-15, ens1f1, ens1f1v0-15, ens3f0, ens3f0v0-15, ens3f1, ens3f1v0-15",
			"<nic> has 4 queues for 26 local online cores (52 CPUs)",
		} {
			if !strings.Contains(flat, want) {
				t.Errorf("COLUMNS=%d: no %q in\n%s", width, want, stdout)
			}
		}
		// A VF whose findings are all shared has no block of its own.
		if strings.Contains(stdout, "\nens1f0v0: ") {
			t.Errorf("COLUMNS=%d: ens1f0v0 has a block, though all its findings are shared", width)
		}
		// 530 lines, 232 of them wider than 120, before.
		if max := map[int]int{100: 250, 72: 350}[width]; len(lines) > max {
			t.Errorf("COLUMNS=%d: %d lines, want at most %d", width, len(lines), max)
		}
	}
	// Into a pipe with no COLUMNS: not wrapped, each finding on one line.
	stdout, _, _ := runCLI(t, "--root", root, "audit")
	want := "ens1f1 has 104 queues for 52 local CPUs, so an even spread puts at most 2 on each; instead CPU 98 takes 9"
	if !regexp.MustCompile(`(?m)^warning +irq-shared-cpu +104 queues on 52 local CPUs +` + regexp.QuoteMeta(want) + `.*\(0,16,18,58,66,70\)$`).MatchString(stdout) {
		t.Errorf("unwrapped audit has no one-line finding %q:\n%s", want, stdout)
	}
}
