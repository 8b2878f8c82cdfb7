package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The ways of saying "unknown" that unknown.Value replaced, as the scan
// finds them in a field's type, name and comment.
var (
	minusOne   = regexp.MustCompile(`(^|[^0-9A-Za-z_-])-1\b`)
	closedSet  = regexp.MustCompile(`"[a-z0-9][a-z0-9_.-]*"\s*(,\s*)?or\s*"[a-z0-9]*"`)
	examples   = regexp.MustCompile(`\b(e\.g\.|such as|for example|like)\b`)
	nilUnknown = regexp.MustCompile(`\b(nil|null)\b[^.;]{0,40}\b(unknown|not known)\b`)
	intTypes   = map[string]bool{"int": true, "int8": true, "int16": true, "int32": true, "int64": true}
)

// unknownAllowed are the findings of the scan that are not an unknown:
// each says why.
var unknownAllowed = map[string]string{
	"internal/judge/audit.CheckProcNICUnknown": "an audit check id, a contract: the finding that a process's NIC is unknown",
	"internal/judge/audit.CheckZCUnknown":      "an audit check id, a contract: the finding that zero-copy readiness is unknown",
	"internal/judge/audit.CheckNICNodeUnknown": "an audit check id, a contract: the finding that a NIC's node is unknown",
	"internal/host/topology.OperStateUnknown":  "the kernel's own operstate word (IF_OPER_UNKNOWN), a state the host reports",
	"internal/tune.ActionSkipUnknown":          "a pin's action, a contract (\"skip-unknown\" in the pin document and its text): the outcome of a step that is not made because what it needs is unknown",
}

// TestOneUnknown: the exported types say "unknown" one way,
// unknown.Value. The scan of every non-test file of the module (but test
// support, which writes the kernel's own -1s into trees) fails on an
// integer field whose comment gives -1 a meaning, a Has…/…Known bool, a
// string field whose comment lists its values (a closed set wants a
// type), a free-text Why/Unknown string, a pointer or set that is nil
// when unknown, and a …Unknown member of a typed enum.
func TestOneUnknown(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	var found []string
	// A type that writes its reasons beside its Values (MarshalObject)
	// reads them back (UnmarshalObject): a decoded document keeps why.
	marshals, unmarshals := map[string]token.Pos{}, map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if rel == "testdata" || strings.HasSuffix(rel, "/testdata") || rel == "internal/testsupport" || rel == "lab" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		pkg := filepath.Dir(rel)
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv != nil && len(fd.Recv.List) == 1 {
				typ := fd.Recv.List[0].Type
				if st, ok := typ.(*ast.StarExpr); ok {
					typ = st.X
				}
				id, ok := typ.(*ast.Ident)
				if !ok {
					continue
				}
				key := pkg + "." + id.Name
				switch fd.Name.Name {
				case "MarshalJSON":
					ast.Inspect(fd.Body, func(n ast.Node) bool {
						if se, ok := n.(*ast.SelectorExpr); ok && se.Sel.Name == "MarshalObject" {
							marshals[key] = fd.Pos()
						}
						return true
					})
				case "UnmarshalJSON":
					unmarshals[key] = true
				}
				continue
			}
			g, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range g.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					st, ok := s.Type.(*ast.StructType)
					if !ok || !s.Name.IsExported() {
						continue
					}
					for _, fl := range st.Fields.List {
						for _, nm := range fl.Names {
							if !nm.IsExported() {
								continue
							}
							if why := unknownField(nm.Name, fl); why != "" {
								found = append(found, fmt.Sprintf("%s: %s.%s: %s", fset.Position(nm.Pos()), s.Name.Name, nm.Name, why))
							}
						}
					}
				case *ast.ValueSpec:
					if g.Tok != token.CONST || s.Type == nil {
						continue
					}
					for _, nm := range s.Names {
						if !nm.IsExported() || !strings.HasSuffix(nm.Name, "Unknown") {
							continue
						}
						if _, ok := unknownAllowed[pkg+"."+nm.Name]; ok {
							continue
						}
						found = append(found, fmt.Sprintf("%s: %s: an enum member for unknown: make the field an unknown.Value of the enum",
							fset.Position(nm.Pos()), nm.Name))
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key, pos := range marshals {
		if !unmarshals[key] {
			found = append(found, fmt.Sprintf("%s: %s writes its Values' reasons (unknown.MarshalObject) but has no UnmarshalJSON to read them back (unknown.UnmarshalObject)",
				fset.Position(pos), key))
		}
	}
	sort.Strings(found)
	for _, f := range found {
		t.Error(strings.TrimPrefix(f, root+"/"))
	}
}

// unknownField says how the field says unknown other than with
// unknown.Value, or "".
func unknownField(name string, fl *ast.Field) string {
	text := ""
	if fl.Doc != nil {
		text = fl.Doc.Text()
	}
	if fl.Comment != nil {
		text += " " + fl.Comment.Text()
	}
	text = strings.Join(strings.Fields(text), " ")
	typ := ""
	switch x := fl.Type.(type) {
	case *ast.Ident:
		typ = x.Name
	case *ast.StarExpr:
		typ = "*"
	}
	switch {
	case typ == "bool" && (strings.HasPrefix(name, "Has") && len(name) > 3 && name[3] >= 'A' && name[3] <= 'Z' || strings.HasSuffix(name, "Known")):
		return "a companion bool saying whether another field is known: make that field an unknown.Value"
	case intTypes[typ] && minusOne.MatchString(text):
		return "-1 as a value with a meaning: make it an unknown.Value (NotApplicable where it has none)"
	case typ == "string" && (name == "Why" || name == "Unknown" || strings.HasSuffix(name, "Why")):
		return "a free-text why: an unknown.Reason, or the Reason of the Value it is about"
	case typ == "string" && closedSet.MatchString(text) && !examples.MatchString(text):
		return "a string whose comment lists its values: a closed set wants a typed enum"
	case nilUnknown.MatchString(text):
		return "nil (or null) meaning unknown: make it an unknown.Value"
	}
	return ""
}
