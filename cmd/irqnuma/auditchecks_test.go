package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/judge/audit"
)

// registryIDs are the ids irqnuma-audit(1) must list: every registered
// check's, then not-checked, the audit's own.
func registryIDs() []string {
	var ids []string
	for _, c := range audit.Catalogue() {
		ids = append(ids, string(c.ID))
	}
	return append(ids, string(audit.CheckNotChecked))
}

// TestManAuditChecks: the CHECKS section of the irqnuma-audit(1) that
// __man writes lists exactly the registry's check ids, in its order, and
// the registry's ids are exactly those with words (checkDocs), both ways:
// a check registered without words, or words left for an id the registry
// no longer has, fails here. Each entry says the check's severity and
// what it needs, as the registry says it.
func TestManAuditChecks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, stderr, code := runCLI(t, "__man", dir); code != 0 {
		t.Fatalf("__man: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "irqnuma-audit.1"))
	if err != nil {
		t.Fatal(err)
	}
	_, checks, ok := strings.Cut(string(b), ".SH \"CHECKS\"\n")
	checks, _, _ = strings.Cut(checks, "\n.SH ")
	if !ok {
		t.Fatalf("irqnuma-audit.1 has no CHECKS section:\n%s", b)
	}
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^\.TP\n\\fB(.+?)\\fR\n`).FindAllStringSubmatch(checks, -1) {
		listed = append(listed, strings.ReplaceAll(m[1], `\-`, "-"))
	}
	want := registryIDs()
	for _, id := range want {
		if !slices.Contains(listed, id) {
			t.Errorf("irqnuma-audit(1) does not list %s, which the registry has", id)
		}
	}
	for _, id := range listed {
		if !slices.Contains(want, id) {
			t.Errorf("irqnuma-audit(1) lists %s, which the registry has not", id)
		}
	}
	if !slices.Equal(listed, want) && !t.Failed() {
		t.Errorf("irqnuma-audit(1) lists the checks in the order %v, want the registry's %v", listed, want)
	}
	for _, id := range want {
		if _, ok := checkDocs[audit.Check(id)]; !ok {
			t.Errorf("check %s has no words in checkDocs (auditchecks.go)", id)
		}
	}
	for id := range checkDocs {
		if !slices.Contains(want, string(id)) {
			t.Errorf("checkDocs has words for %s, which the registry has not", id)
		}
	}
	if strings.Contains(checks, "undocumented") {
		t.Errorf("irqnuma-audit(1) has an undocumented check")
	}
	for _, c := range audit.Catalogue() {
		_, entry, _ := strings.Cut(checks, `\fB`+strings.ReplaceAll(string(c.ID), "-", `\-`)+`\fR`)
		entry, _, _ = strings.Cut(entry, ".TP\n")
		for _, need := range c.Needs {
			if !strings.Contains(entry, strings.ReplaceAll(need, "-", `\-`)) {
				t.Errorf("irqnuma-audit(1) on %s does not say it needs %q:\n%s", c.ID, need, entry)
			}
		}
		if !strings.Contains(entry, "Severity: ") {
			t.Errorf("irqnuma-audit(1) on %s gives no severity:\n%s", c.ID, entry)
		}
	}
}

// TestDocsAuditChecks: docs/audit.md's "The checks" names every check id
// the registry has, and each id it lists as a bullet is the registry's.
func TestDocsAuditChecks(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "audit.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## The checks\n")
	if !ok {
		t.Fatal("docs/audit.md has no \"## The checks\"")
	}
	want := registryIDs()
	for _, id := range want {
		if !strings.Contains(sec, "`"+id+"`") {
			t.Errorf("docs/audit.md's checks do not name %s", id)
		}
	}
	for _, m := range regexp.MustCompile("(?m)^- `([a-z0-9-]+)`").FindAllStringSubmatch(sec, -1) {
		if !slices.Contains(want, m[1]) {
			t.Errorf("docs/audit.md lists %s, which the registry has not", m[1])
		}
	}
}
