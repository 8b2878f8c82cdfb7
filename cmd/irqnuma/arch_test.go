package main

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportRules holds the layering ARCHITECTURE.md describes: the
// roles in order (host readers, judges, the tuner, runners, renderers), the
// exporter links no renderer and no planner, watch links no planner and no
// renderer, bench links no renderer and nothing below it links bench,
// rsshash links only the standard library,
// only cmd/irqnuma imports cobra (and pflag, whose errors
// internal/cli also words), no library imports
// flag, and test support never reaches a non-test build.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,Deps,Standard", "github.com/irqnuma/irqnuma/...").Output()
	if err != nil {
		// A failed go list is a broken module or toolchain, not a
		// reason to stop holding the layering.
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/irqnuma/irqnuma/"
	type pkg struct {
		ImportPath    string
		Imports, Deps []string
		Standard      bool
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, mod)] = p
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list gave %d packages", len(pkgs))
	}
	links := func(from, to string) bool {
		return slices.Contains(pkgs[from].Deps, mod+to) || slices.Contains(pkgs[from].Deps, to)
	}
	for _, r := range []struct{ from, to string }{
		{"internal/run/exporter", "internal/render/report"}, {"internal/run/exporter", "internal/render/hostmap"}, {"internal/run/exporter", "internal/tune"},
		{"internal/run/watch", "internal/tune"}, {"internal/run/watch", "internal/render/report"}, {"internal/run/watch", "internal/judge/audit"},
		{"internal/judge/audit", "internal/tune"}, {"internal/judge/audit", "internal/render/report"},
		// The tuner plans from the audit's findings (tune.Tune), as the
		// roles allow; the audit never links the tuner.
		{"internal/tune", "internal/render/report"},
		{"internal/host/topology", "internal/host/irq"}, {"internal/host/irq", "internal/tune"}, {"internal/host/proc", "internal/host/topology"}, {"internal/host/topology", "internal/host/proc"},
		{"internal/judge/nicuse", "internal/judge/audit"}, {"internal/judge/nicuse", "internal/run/watch"}, {"internal/host/proc", "internal/judge/nicuse"},
		{"internal/run/bench", "internal/render/report"}, {"internal/run/bench", "internal/render/hostmap"}, {"internal/run/bench", "internal/host/snapshot"},
		{"internal/tune", "internal/run/bench"}, {"internal/run/watch", "internal/run/bench"}, {"internal/judge/audit", "internal/run/bench"}, {"internal/run/exporter", "internal/run/bench"},
	} {
		if _, ok := pkgs[r.from]; !ok {
			t.Errorf("no package %s", r.from)
		}
		if links(r.from, r.to) {
			t.Errorf("%s links %s", r.from, r.to)
		}
	}
	// The roles point one way: readers of the host, then judges, the
	// tuner, runners and renderers; none imports a role after it.
	roles := []string{"internal/host/", "internal/judge/", "internal/tune", "internal/run/", "internal/render/"}
	role := func(name string) int {
		for i, r := range roles {
			if strings.HasPrefix(name, r) {
				return i
			}
		}
		return -1
	}
	for name, p := range pkgs {
		from := role(name)
		if from < 0 {
			continue
		}
		for _, imp := range p.Imports {
			if to := role(strings.TrimPrefix(imp, mod)); to > from {
				t.Errorf("%s imports %s: the %s role comes after %s's", name, imp, roles[to], roles[from])
			}
		}
	}
	// rsshash is pure: the standard library only.
	if _, ok := pkgs["rsshash"]; !ok {
		t.Error("no package rsshash")
	}
	for _, d := range pkgs["rsshash"].Deps {
		if p, ok := pkgs[strings.TrimPrefix(d, mod)]; ok && !p.Standard {
			t.Errorf("rsshash links %s: it uses the standard library only", d)
		}
	}
	for name, p := range pkgs {
		if p.Standard || !strings.HasPrefix(p.ImportPath, mod) {
			continue
		}
		cli := name == "cmd/irqnuma" || name == "cmd/irqnuma-exporter" || strings.HasPrefix(name, "lab") || strings.HasPrefix(name, "internal/testsupport/hosttest/gen")
		for _, imp := range p.Imports {
			switch {
			case imp == "github.com/spf13/cobra" && name != "cmd/irqnuma",
				imp == "github.com/spf13/pflag" && name != "cmd/irqnuma" && name != "cmd/irqnuma-exporter" && name != "internal/cli":
				t.Errorf("%s imports %s: only the binaries parse flags (internal/cli words pflag's errors)", name, imp)
			case imp == "flag" && !cli:
				t.Errorf("%s imports flag: libraries never read flags", name)
			case strings.HasPrefix(imp, mod+"internal/testsupport/") &&
				!strings.HasPrefix(name, "internal/testsupport/") && !strings.HasPrefix(name, "lab"):
				t.Errorf("%s imports test support %s", name, imp)
			}
		}
	}
}
