// Command gen regenerates the host trees under testdata/hosts from the
// models in internal/hosttest/hostgen. Run it from the module root:
//
//	go run ./internal/hosttest/gen            # every tree
//	go run ./internal/hosttest/gen seed arm64 # some trees
//
// Each tree's proc/, sys/, modes and README are replaced.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest/hostgen"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", filepath.Join("testdata", "hosts"), "folder that holds the host trees")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	names := fs.Args()
	if len(names) == 0 {
		names = hostgen.Names
	}
	for _, name := range names {
		n, err := generate(*out, name)
		if err != nil {
			fmt.Fprintln(stderr, "gen:", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s: %d files and links\n", filepath.Join(*out, name), n)
	}
	return 0
}

func generate(out, name string) (int, error) {
	h, err := hostgen.ByName(name)
	if err != nil {
		return 0, err
	}
	root := filepath.Join(out, name)
	for _, p := range []string{"proc", "sys", "modes", "README"} {
		if err := os.RemoveAll(filepath.Join(root, p)); err != nil {
			return 0, fmt.Errorf("clean %s: %w", root, err)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return 0, err
	}
	t := h.Render()
	t.File("README", []byte(h.Readme))
	if err := t.Write(root, hostgen.WriteOptions{ModesFile: true, KeepEmpty: true}); err != nil {
		return 0, err
	}
	return t.Len(), nil
}
