package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The reader role (internal/host/...) reads a host and never changes one:
// the tuner (internal/tune) holds every write. readerWrites finds in a
// reader's source what would change a host:
//   - a write method of kfile.FS (MkdirAll, CreateFile, CreateTemp, Link,
//     Rename, Remove, SyncDir, OpenKernelFile), or its OpenFile or
//     os.OpenFile with flags other than O_RDONLY;
//   - os.WriteFile, os.Create and the other calls of os that make, change
//     or remove a file, and any call of atomicfile;
//   - an ethtool or netdev request that sets (a constant named like
//     ethnlMsgChannelsSet, netdevCmdNapiSet, ethtoolSRXClsRlIns,
//     ETHTOOL_MSG_RSS_SET, ETHTOOL_SRSSH).
//
// The snapshot reader writes its own product and scratch, not the host it
// reads: the archive (atomicfile), the spill file of a large capture and
// the folder a snapshot unpacks into. Those calls, by file and function,
// are the only ones allowed (readerScratch).

// kfileWrites are kfile.FS's methods that change the tree under its root.
var kfileWrites = []string{"MkdirAll", "CreateFile", "CreateTemp", "Link", "Rename", "Remove", "SyncDir", "OpenKernelFile"}

// osWrites are the functions of os that make, change or remove a file.
var osWrites = []string{
	"WriteFile", "Create", "CreateTemp", "Mkdir", "MkdirAll", "MkdirTemp",
	"Remove", "RemoveAll", "Rename", "Symlink", "Link", "Chmod", "Chown",
	"Lchown", "Chtimes", "Truncate", "CopyFS",
}

// setRequest matches the name of a constant for a request that changes a
// NIC: ethtool netlink and netdev SET commands and the ethtool ioctl's
// set commands (ETHTOOL_S*), in the kernel's spelling or ours.
var setRequest = regexp.MustCompile(`^(ethnl|ethtool|netdev)(Msg|Cmd)\w*Set$|^ETHTOOL_(MSG_\w+_SET|S[A-Z]\w*)$|^NETDEV_CMD_\w+_SET$|^ethtoolS[A-Z]|^SRXCLSRL(INS|DEL)$`)

// readerScratch are the calls a reader may make that write: "file:func"
// of the calling function, and the call.
var readerScratch = map[string][]string{
	// The archive snapshot writes, into the user's file (-o), whole or
	// not at all.
	"internal/host/snapshot/snapshot.go:Create": {"atomicfile.Write"},
	// A capture larger than its memory budget spills to a temporary file
	// of its own, removed when the capture ends.
	"internal/host/snapshot/capture.go:readContent": {"os.CreateTemp"},
	"internal/host/snapshot/capture.go:close":       {"os.Remove"},
	// A snapshot is unpacked into a temporary folder of its own, removed
	// when it is closed; the folders earlier runs left behind are
	// cleaned up.
	"internal/host/snapshot/unpack.go:Open":       {"os.MkdirTemp", "os.RemoveAll"},
	"internal/host/snapshot/unpack.go:cleanStale": {"os.Rename"},
	"internal/host/snapshot/unpack.go:removeSome": {"os.Remove"},
}

// readerWrites returns, for the Go files of one package (name to source),
// every call or constant of a write, as "file:line: what (in func)".
// allowed says which calls of a function are its scratch.
func readerWrites(fset *token.FileSet, files map[string]*ast.File, allowed func(file, fn, call string) bool) []string {
	var out []string
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		f := files[name]
		for _, d := range f.Decls {
			fn := ""
			if fd, ok := d.(*ast.FuncDecl); ok {
				fn = fd.Name.Name
			}
			ast.Inspect(d, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					if setRequest.MatchString(n.Name) {
						out = append(out, fmt.Sprintf("%s: the set request %s", fset.Position(n.Pos()), n.Name))
					}
				case *ast.CallExpr:
					if what := writeCall(n); what != "" && !allowed(name, fn, what) {
						out = append(out, fmt.Sprintf("%s: %s (in %s)", fset.Position(n.Pos()), what, fn))
					}
				}
				return true
			})
		}
	}
	return out
}

// writeCall names the write a call makes ("os.WriteFile", ".Remove",
// ".OpenFile with O_RDWR"), or "" for a call that writes nothing.
func writeCall(c *ast.CallExpr) string {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	method := sel.Sel.Name
	pkg := ""
	if id, ok := sel.X.(*ast.Ident); ok {
		pkg = id.Name
	}
	switch {
	case pkg == "atomicfile":
		return "atomicfile." + method
	case method == "OpenFile":
		// os.OpenFile(name, flag, perm) and kfile's FS.OpenFile(p, flag).
		if len(c.Args) > 1 && !readOnly(c.Args[1]) {
			return pkg + ".OpenFile for writing"
		}
		return ""
	case pkg == "os":
		if slices.Contains(osWrites, method) {
			return "os." + method
		}
		return ""
	case pkg == "unix" || pkg == "syscall":
		if method == "Write" || method == "Pwrite" || method == "Open" || method == "Openat" {
			return pkg + "." + method
		}
		return ""
	case slices.Contains(kfileWrites, method):
		return "." + method
	}
	return ""
}

// readOnly reports whether an open's flag argument is O_RDONLY alone.
func readOnly(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "O_RDONLY"
}

// parseDir parses the non-test Go files of one folder.
func parseDir(t *testing.T, fset *token.FileSet, dir string) map[string]*ast.File {
	t.Helper()
	ents, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, p := range ents {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.ToSlash(p)] = f
	}
	return files
}

func TestReadersDoNotWrite(t *testing.T) {
	root := filepath.Join("..", "..")
	host := filepath.Join(root, "internal", "host")
	used := map[string]bool{}
	allowed := func(file, fn, call string) bool {
		rel, err := filepath.Rel(root, file)
		if err != nil {
			return false
		}
		key := filepath.ToSlash(rel) + ":" + fn
		if slices.Contains(readerScratch[key], call) {
			used[key+" "+call] = true
			return true
		}
		return false
	}
	pkgs := 0
	err := filepath.WalkDir(host, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() == "testdata" {
			if d != nil && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return err
		}
		fset := token.NewFileSet()
		files := parseDir(t, fset, p)
		if len(files) == 0 {
			return nil
		}
		pkgs++
		for _, w := range readerWrites(fset, files, allowed) {
			t.Errorf("a reader writes: %s: the tuner (internal/tune) makes every change to a host", w)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pkgs < 9 {
		t.Fatalf("found %d reader packages under %s, want the 9 or more ARCHITECTURE.md names", pkgs, host)
	}
	// Every allowance is still needed: a stale one would let a write in.
	for key, calls := range readerScratch {
		for _, c := range calls {
			if !used[key+" "+c] {
				t.Errorf("readerScratch allows %s in %s, which no longer makes it: remove the allowance", c, key)
			}
		}
	}
}

// TestReaderWritesFinds holds the scanner itself: each kind of write put
// back into a reader is found.
func TestReaderWritesFinds(t *testing.T) {
	tests := []struct {
		give string
		want string // "" for nothing found
	}{
		{`f.fsys.MkdirAll("/var/lib/x", 0o755)`, ".MkdirAll"},
		{`fsys.CreateFile(p, os.O_CREATE|os.O_WRONLY, 0o644)`, ".CreateFile"},
		{`fsys.OpenKernelFile("/proc/irq/5/smp_affinity_list")`, ".OpenKernelFile"},
		{`fsys.OpenFile(p, os.O_WRONLY)`, ".OpenFile for writing"},
		{`os.OpenFile(p, os.O_RDWR, 0)`, "os.OpenFile for writing"},
		{`os.WriteFile("/proc/irq/5/smp_affinity_list", b, 0)`, "os.WriteFile"},
		{`os.Create(p)`, "os.Create"},
		{`atomicfile.Write(p, 0o644, nil)`, "atomicfile.Write"},
		{`unix.Write(fd, b)`, "unix.Write"},
		{`ask(ethnlMsgChannelsSet)`, "the set request ethnlMsgChannelsSet"},
		{`ask(netdevCmdNapiSet)`, "the set request netdevCmdNapiSet"},
		{`ioctl(ethtoolSRXClsRlIns)`, "the set request ethtoolSRXClsRlIns"},
		{`ioctl(ETHTOOL_SRSSH)`, "the set request ETHTOOL_SRSSH"},
		{`ask(ETHTOOL_MSG_RSS_SET)`, "the set request ETHTOOL_MSG_RSS_SET"},
		// Reads stay allowed.
		{`fsys.OpenFile(p, os.O_RDONLY)`, ""},
		{`os.ReadFile(p)`, ""},
		{`ask(ethnlMsgChannelsGet)`, ""},
		{`fsys.ReadDir(p)`, ""},
	}
	for _, tt := range tests {
		src := "package r\nfunc f() { " + tt.give + " }\n"
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "r.go", src, 0)
		if err != nil {
			t.Fatalf("parse %q: %v", tt.give, err)
		}
		got := readerWrites(fset, map[string]*ast.File{"r.go": f}, func(string, string, string) bool { return false })
		switch {
		case tt.want == "" && len(got) != 0:
			t.Errorf("readerWrites(%q) = %q, want nothing", tt.give, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
			t.Errorf("readerWrites(%q) = %q, want one finding naming %q", tt.give, got, tt.want)
		}
	}
}
