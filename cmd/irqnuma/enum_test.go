package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// enumPrefixExempt are the enums whose constants carry another prefix,
// with why.
var enumPrefixExempt = map[string]string{
	"topology.IRQMatch": "IRQNoMatch, IRQByVirtio...: how an IRQ matches, read as one word",
}

// TestEnumPrefix holds ARCHITECTURE.md's convention that a typed enum's
// constants are named with the type's name first (irq.KindQueue,
// nicuse.AttributionSockets), so a reader knows the set a word belongs
// to and a new member cannot collide with another set's.
func TestEnumPrefix(t *testing.T) {
	root := moduleRoot(t)
	type constDecl struct {
		typ, name string
		pos       token.Position
	}
	enums := map[string]bool{} // "pkg.Type" of every exported type over string or int
	var consts []constDecl
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := f.Name.Name
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			typ := ""
			for _, spec := range g.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if id, ok := s.Type.(*ast.Ident); ok && (id.Name == "string" || id.Name == "int") && s.Name.IsExported() {
						enums[pkg+"."+s.Name.Name] = true
					}
				case *ast.ValueSpec:
					if g.Tok != token.CONST {
						continue
					}
					switch x := s.Type.(type) {
					case *ast.Ident:
						typ = pkg + "." + x.Name
					case *ast.SelectorExpr:
						if q, ok := x.X.(*ast.Ident); ok {
							typ = q.Name + "." + x.Sel.Name
						}
					case nil:
						if len(s.Values) > 0 {
							typ = "" // untyped, or typed by its value: not an enum member
						}
					}
					for _, n := range s.Names {
						consts = append(consts, constDecl{typ, n.Name, fset.Position(n.Pos())})
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range consts {
		if !enums[c.typ] || enumPrefixExempt[c.typ] != "" || c.name == "_" {
			continue
		}
		checked++
		want := c.typ[strings.LastIndex(c.typ, ".")+1:]
		if !strings.HasPrefix(c.name, want) {
			rel, _ := filepath.Rel(root, c.pos.Filename)
			t.Errorf("%s:%d: %s is a %s: name it %s…", rel, c.pos.Line, c.name, c.typ, want)
		}
	}
	if checked < 30 {
		t.Fatalf("checked %d enum constants; the module has well over 30", checked)
	}
}
