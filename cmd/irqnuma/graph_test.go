package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// archGraph is the import graph ARCHITECTURE.md's block writes: for each
// package (this module's, by path below it) the packages it imports that
// are not the standard library, in the page's order.
type archGraph struct {
	order []string
	deps  map[string][]string
}

// parseArchGraph reads the fenced block under "## The import graph".
// Each line is "PKG" or "PKG ← DEP, DEP, prefix/{a,b}", with an optional
// "# comment".
func parseArchGraph(r io.Reader) (archGraph, error) {
	g := archGraph{deps: map[string][]string{}}
	sc := bufio.NewScanner(r)
	section, in, done := false, false, false
	line := 0
	for sc.Scan() && !done {
		line++
		s := sc.Text()
		switch {
		case strings.HasPrefix(s, "## "):
			section = s == "## The import graph"
			continue
		case !section:
			continue
		case s == "```":
			done = in
			in = !in
			continue
		case !in:
			continue
		}
		if i := strings.Index(s, "#"); i >= 0 {
			s = s[:i]
		}
		name, list, _ := strings.Cut(s, "←")
		name = strings.TrimSpace(name)
		if name == "" || strings.ContainsAny(name, " ,{}") {
			return g, fmt.Errorf("ARCHITECTURE.md graph line %d: %q is not a package", line, name)
		}
		if _, dup := g.deps[name]; dup {
			return g, fmt.Errorf("ARCHITECTURE.md graph line %d: %s is listed twice", line, name)
		}
		g.order = append(g.order, name)
		g.deps[name] = []string{}
		if strings.TrimSpace(list) == "" {
			continue
		}
		items, err := expandBraces(list)
		if err != nil {
			return g, fmt.Errorf("ARCHITECTURE.md graph line %d: %v", line, err)
		}
		g.deps[name] = items
	}
	if err := sc.Err(); err != nil {
		return g, err
	}
	if !done {
		return g, errors.New("ARCHITECTURE.md has no closed code block under \"## The import graph\"")
	}
	return g, nil
}

// expandBraces splits "a, b/{c,d}" into a, b/c and b/d.
func expandBraces(list string) ([]string, error) {
	var out []string
	for rest := list; strings.TrimSpace(rest) != ""; {
		var item string
		if i := strings.IndexAny(rest, ",{"); i >= 0 && rest[i] == '{' {
			j := strings.IndexByte(rest, '}')
			if j < i {
				return nil, fmt.Errorf("unclosed { in %q", list)
			}
			pre := strings.TrimSpace(rest[:i])
			for _, last := range strings.Split(rest[i+1:j], ",") {
				out = append(out, pre+strings.TrimSpace(last))
			}
			rest = strings.TrimPrefix(strings.TrimSpace(rest[j+1:]), ",")
			continue
		} else if i >= 0 {
			item, rest = rest[:i], rest[i+1:]
		} else {
			item, rest = rest, ""
		}
		item = strings.TrimSpace(item)
		if item == "" || strings.ContainsAny(item, " }") {
			return nil, fmt.Errorf("%q is not a package in %q", item, list)
		}
		out = append(out, item)
	}
	return out, nil
}

// thirdPartyName is how the page names an import of another module:
// its path without the host, any package of prometheus/client_golang as
// the module.
func thirdPartyName(imp string) string {
	host, rest, _ := strings.Cut(imp, "/")
	if host == "go.yaml.in" {
		return imp
	}
	if strings.HasPrefix(rest, "prometheus/client_golang") {
		return "prometheus/client_golang"
	}
	return rest
}

// goListGraph is the module's import graph as go list gives it, in the
// page's terms.
func goListGraph(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "github.com/irqnuma/irqnuma/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/irqnuma/irqnuma/"
	graph := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, mod)
		deps := []string{}
		for _, imp := range p.Imports {
			switch {
			case strings.HasPrefix(imp, mod):
				deps = append(deps, strings.TrimPrefix(imp, mod))
			case strings.Contains(strings.Split(imp, "/")[0], "."):
				if n := thirdPartyName(imp); !slices.Contains(deps, n) {
					deps = append(deps, n)
				}
			}
		}
		graph[name] = deps
	}
	return graph
}

// TestArchitectureGraph: ARCHITECTURE.md's import graph is the code's.
// Every package go list knows has its line, every import its edge, every
// edge an import, and every import of this module points up the page
// (to a package listed before its importer).
func TestArchitectureGraph(t *testing.T) {
	f, err := os.Open("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	page, err := parseArchGraph(f)
	if err != nil {
		t.Fatal(err)
	}
	code := goListGraph(t)
	if len(code) < 20 {
		t.Fatalf("go list gave %d packages", len(code))
	}
	for _, d := range archGraphDiff(page, code) {
		t.Error(d)
	}
}

// archGraphDiff names each way page and code differ.
func archGraphDiff(page archGraph, code map[string][]string) []string {
	var out []string
	pos := map[string]int{}
	for i, p := range page.order {
		pos[p] = i
	}
	var names []string
	for p := range code {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		if _, ok := page.deps[p]; !ok {
			out = append(out, fmt.Sprintf("ARCHITECTURE.md has no line for package %s", p))
			continue
		}
		for _, d := range code[p] {
			if !slices.Contains(page.deps[p], d) {
				out = append(out, fmt.Sprintf("%s imports %s: the edge is not in ARCHITECTURE.md", p, d))
			}
			if i, ok := pos[d]; ok && i > pos[p] {
				out = append(out, fmt.Sprintf("%s imports %s, which ARCHITECTURE.md lists after it", p, d))
			}
		}
	}
	for _, p := range page.order {
		deps, ok := code[p]
		if !ok {
			out = append(out, fmt.Sprintf("ARCHITECTURE.md lists %s, which go list does not know", p))
			continue
		}
		for _, d := range page.deps[p] {
			if !slices.Contains(deps, d) {
				out = append(out, fmt.Sprintf("ARCHITECTURE.md says %s imports %s; the code does not", p, d))
			}
		}
	}
	return out
}

// TestArchGraphDiff: the comparison fails on an edge the page lacks, one
// the code lacks, a package out of order and a package missing, naming
// each.
func TestArchGraphDiff(t *testing.T) {
	page, err := parseArchGraph(strings.NewReader("## The import graph\n\n```\ncpuset  # the type\ntopology ← cpuset, internal/{kfile,pci}\nirq ← topology\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"cpuset", "internal/kfile", "internal/pci"}; !slices.Equal(page.deps["topology"], want) {
		t.Fatalf("topology's deps %q, want %q", page.deps["topology"], want)
	}
	tests := []struct {
		name string
		give map[string][]string
		want []string
	}{
		{"equal", map[string][]string{"cpuset": {}, "topology": {"cpuset", "internal/kfile", "internal/pci"}, "irq": {"topology"}}, nil},
		{"an edge added to the code", map[string][]string{"cpuset": {}, "topology": {"cpuset", "internal/kfile", "internal/pci"}, "irq": {"topology", "x/sys/unix"}},
			[]string{"irq imports x/sys/unix: the edge is not in ARCHITECTURE.md"}},
		{"an edge gone from the code", map[string][]string{"cpuset": {}, "topology": {"cpuset", "internal/kfile"}, "irq": {"topology"}},
			[]string{"ARCHITECTURE.md says topology imports internal/pci; the code does not"}},
		{"an import down the page", map[string][]string{"cpuset": {"irq"}, "topology": {"cpuset", "internal/kfile", "internal/pci"}, "irq": {"topology"}},
			[]string{"cpuset imports irq: the edge is not in ARCHITECTURE.md", "cpuset imports irq, which ARCHITECTURE.md lists after it"}},
		{"a package the page lacks", map[string][]string{"cpuset": {}, "topology": {"cpuset", "internal/kfile", "internal/pci"}, "irq": {"topology"}, "zc": {}},
			[]string{"ARCHITECTURE.md has no line for package zc"}},
	}
	for _, tt := range tests {
		if got := archGraphDiff(page, tt.give); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	for _, bad := range []string{"## The import graph\n\n```\ntopology ← cpuset, internal/{kfile\n```\n", "## The import graph\n\n```\nirq\nirq\n```\n", "## The import graph\n\n```\nirq\n"} {
		if _, err := parseArchGraph(strings.NewReader(bad)); err == nil {
			t.Errorf("parseArchGraph(%q) accepted it", bad)
		}
	}
}
