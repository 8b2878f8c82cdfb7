package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLiveTestsInMakefile: every test that changes the live host (it
// calls hosttest.Writes, itself or through a helper of its package or
// of hosttest, such as hosttest.MacvlanProc) is one make test-live runs:
// its name matches the Makefile's LIVE_RUN. Without this a new writing
// test would skip under make test and run nowhere. The calls are found
// in the source (go/ast), helper by helper, so none is listed by hand.
func TestLiveTestsInMakefile(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LIVE_RUN = (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile has no LIVE_RUN = line")
	}
	run, err := regexp.Compile(strings.ReplaceAll(string(m[1]), "$$", "$"))
	if err != nil {
		t.Fatalf("LIVE_RUN %q: %v", m[1], err)
	}
	if !regexp.MustCompile(`(?m)^test-live:\n\t.*IRQNUMA_TEST_LIVE=1 .*-run '\$\(LIVE_RUN\)' \./\.\.\.$`).Match(mk) {
		t.Error("the Makefile's test-live does not run IRQNUMA_TEST_LIVE=1 go test -run '$(LIVE_RUN)' ./...")
	}

	// calls[pkg dir][func] are the functions it calls: "name" in its own
	// package, "hosttest.Name" in hosttest's.
	calls := map[string]map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.Dir(p)
		if calls[dir] == nil {
			calls[dir] = map[string][]string{}
		}
		hosttestPkg := strings.HasSuffix(filepath.ToSlash(dir), "internal/testsupport/hosttest")
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := fn.Name.Name
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.Ident:
					calls[dir][name] = append(calls[dir][name], x.Name)
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && id.Name == "hosttest" {
						calls[dir][name] = append(calls[dir][name], "hosttest."+x.Sel.Name)
						return false
					}
				}
				return true
			})
			if hosttestPkg {
				// hosttest's own functions, as its importers name them.
				calls[dir]["hosttest."+name] = calls[dir][name]
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// writes: the functions that reach hosttest.Writes, to a fixed point.
	writes := func(dir string, known map[string]bool) map[string]bool {
		w := map[string]bool{"hosttest.Writes": true}
		for k := range known {
			w[k] = true
		}
		for changed := true; changed; {
			changed = false
			for fn, cs := range calls[dir] {
				if w[fn] {
					continue
				}
				if slices.ContainsFunc(cs, func(c string) bool { return w[c] }) {
					w[fn], changed = true, true
				}
			}
		}
		return w
	}
	var hosttestDir string
	for dir := range calls {
		if strings.HasSuffix(filepath.ToSlash(dir), "internal/testsupport/hosttest") {
			hosttestDir = dir
		}
	}
	hw := map[string]bool{}
	for fn := range writes(hosttestDir, map[string]bool{"Writes": true}) {
		if strings.HasPrefix(fn, "hosttest.") {
			hw[fn] = true
		}
	}
	if !hw["hosttest.MacvlanProc"] {
		t.Errorf("the walk misses that hosttest.MacvlanProc makes a namespace (found %v)", hw)
	}
	var found []string
	for dir := range calls {
		for fn := range writes(dir, hw) {
			if strings.HasPrefix(fn, "Test") {
				rel, _ := filepath.Rel(root, dir)
				found = append(found, rel+" "+fn)
				if !run.MatchString(fn) {
					t.Errorf("%s (%s) changes the live host but make test-live does not run it: its name does not match LIVE_RUN %s", fn, rel, m[1])
				}
			}
		}
	}
	for _, want := range []string{"cmd/irqnuma TestPinLive", "cmd/irqnuma TestBenchLive", "internal/tune TestLiveThreads"} {
		if !slices.Contains(found, want) {
			t.Errorf("the walk did not find %s among the tests that write (found %v)", want, found)
		}
	}
}
