package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSizeBudgets holds the sizes ARCHITECTURE.md's layering relies on:
// cmd/irqnuma stays wiring (at most 1,200 non-test lines), no package
// grows past 2,500 non-test lines, and no function past 100 lines.
func TestSizeBudgets(t *testing.T) {
	root := moduleRoot(t)
	lines := map[string]int{} // package folder -> non-test lines
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		lines[rel] += strings.Count(string(b), "\n")
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, b, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			switch x := n.(type) {
			case *ast.FuncDecl:
				body = x.Body
			case *ast.FuncLit:
				body = x.Body
			}
			if body != nil {
				start, end := fset.Position(body.Pos()), fset.Position(body.End())
				if n := end.Line - start.Line + 1; n > 100 {
					t.Errorf("%s:%d: a function of %d lines, over 100", filepath.Join(rel, filepath.Base(p)), start.Line, n)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := lines[filepath.Join("cmd", "irqnuma")]; n > 1200 || n == 0 {
		t.Errorf("cmd/irqnuma has %d non-test lines; the budget is 1,200", n)
	}
	for pkg, n := range lines {
		if n > 2500 {
			t.Errorf("%s has %d non-test lines, over 2,500", pkg, n)
		}
	}
}
