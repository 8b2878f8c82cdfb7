// Package realhosts lets tests check irqnuma's readers against machines that
// were captured for real, not written for irqnuma: the archives and expected
// answers kept in ../shared/realhosts next to the module root (see the README
// there, and each capture's SOURCE.txt for where it came from).
//
// It is test support only: every function either takes a testing.TB or
// returns plain data, and nothing here is imported by the CLI. Root shares
// one read-only unpacked tree per capture among all tests of a run;
// Unpack gives a test its own writable copy. A test that needs the captures calls Require first, so
// it skips with a clear message on a machine that does not have them.
//
// Expected answers are other projects' answers for the same machine, read
// from the capture's expected/ folder (dell-2numa's NUMA nodes come from the
// machineinfo.json inside its archive, as nothing in expected/ states them),
// and are given in cpuset terms: a NUMA node id or an IRQ number maps to a
// cpuset.Set.
package realhosts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// ErrNoExpected says that a capture carries no expected answer of the kind
// asked for. Tests branch on it with errors.Is and skip that capture.
var ErrNoExpected = errors.New("no expected answer")

// Dir returns the realhosts folder, ../shared/realhosts relative to the module
// root, and whether it exists as a folder.
func Dir() (string, bool) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", false
	}
	// file is <module root>/internal/realhosts/realhosts.go.
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	dir := filepath.Join(root, "..", "shared", "realhosts")
	fi, err := os.Stat(dir)
	return dir, err == nil && fi.IsDir()
}

// Require returns the realhosts folder, or skips the test when it is
// absent or under -short (the captures are the slow part of the suite).
func Require(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("real-host captures (-short)")
	}
	dir, ok := Dir()
	if !ok {
		t.Skipf("real-host captures not found at %s; these tests need the shared realhosts folder next to the module", dir)
	}
	return dir
}

// Capture is one captured machine: a folder holding an archive of its /proc
// and /sys, and an optional expected/ folder of other projects' answers.
type Capture struct {
	Name     string   // folder name, e.g. "dell-2numa", "hwloc-48amd64-4pa2n6c-sparse"
	Dir      string   // absolute path of the folder
	Archive  string   // absolute path of sysinfo.tgz or the *.tar.bz2
	Expected []string // absolute paths of the files in expected/, sorted
}

// String returns the capture's name, so a Capture reads well in t.Run and
// in error messages.
func (c Capture) String() string { return c.Name }

// expected returns the path of the expected/ file whose name ends in suffix,
// or "" when there is none.
func (c Capture) expected(suffix string) string {
	for _, p := range c.Expected {
		if strings.HasSuffix(p, suffix) {
			return p
		}
	}
	return ""
}

// Captures lists every capture folder that holds an archive (sysinfo.tgz or
// one *.tar.bz2), sorted by name. It returns nil when the realhosts folder is
// absent; call Require first to skip instead.
func Captures() []Capture {
	dir, ok := Dir()
	if !ok {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Capture
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		c := Capture{Name: e.Name(), Dir: filepath.Join(dir, e.Name())}
		if p := filepath.Join(c.Dir, "sysinfo.tgz"); isFile(p) {
			c.Archive = p
		} else if m, _ := filepath.Glob(filepath.Join(c.Dir, "*.tar.bz2")); len(m) == 1 {
			c.Archive = m[0]
		} else {
			continue
		}
		exp, _ := filepath.Glob(filepath.Join(c.Dir, "expected", "*"))
		slices.Sort(exp)
		c.Expected = exp
		out = append(out, c)
	}
	return out
}

// Lookup returns the capture with the given folder name.
func Lookup(name string) (Capture, bool) {
	for _, c := range Captures() {
		if c.Name == name {
			return c, true
		}
	}
	return Capture{}, false
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func noExpected(c Capture, what string) error {
	return fmt.Errorf("capture %s: %s: %w", c.Name, what, ErrNoExpected)
}
