// Package realhosts lets tests check irqnuma's readers against machines that
// were captured for real, not written for irqnuma: the archives and expected
// answers kept in the module's testdata/realhosts (see the README there, and
// each capture's SOURCE.txt for where it came from and under which licence).
//
// It is test support only: every function either takes a testing.TB or
// returns plain data, and nothing here is imported by the CLI. Root shares
// one read-only unpacked tree per capture among all tests of a run;
// Unpack gives a test its own writable copy. A test that needs the
// captures calls Require (or MustLookup for one capture) first, so that a
// checkout without them fails, naming the missing folder, rather than
// skipping: they are part of the clone.
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

// Dir returns the realhosts folder, testdata/realhosts below the module
// root, and whether it exists as a folder.
func Dir() (string, bool) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", false
	}
	// file is <module root>/internal/testsupport/realhosts/realhosts.go.
	root := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file))))
	dir := filepath.Join(root, "testdata", "realhosts")
	fi, err := os.Stat(dir)
	return dir, err == nil && fi.IsDir()
}

// Require returns the realhosts folder. Under -short it skips the test
// (the captures are the slow part of the suite). When the folder is
// absent the test fails, naming it: the captures are committed with the
// module, so a checkout without them is broken, and a skip would let a
// green run check none of them.
func Require(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("real-host captures (-short)")
	}
	dir, ok := Dir()
	return present(t, dir, ok)
}

// present returns dir, or fails t naming it when ok says it is absent.
func present(t testing.TB, dir string, ok bool) string {
	t.Helper()
	if !ok {
		t.Fatal(missing(dir))
	}
	return dir
}

// Optional returns the realhosts folder for a test that checks the
// captures besides other trees, and false, with the reason logged, under
// -short. An absent folder fails the test as Require does.
func Optional(t testing.TB) (string, bool) {
	t.Helper()
	if testing.Short() {
		t.Log("real-host captures left out (-short)")
		return "", false
	}
	return Require(t), true
}

// MustLookup returns the capture with the given folder name, after
// Require: with the realhosts folder present, a capture missing from it
// fails the test (a renamed or deleted capture must not turn its tests
// into skips).
func MustLookup(t testing.TB, name string) Capture {
	t.Helper()
	dir := Require(t)
	c, ok := Lookup(name)
	if !ok {
		t.Fatalf("real-host capture %s not found in %s (no folder of that name holding sysinfo.tgz or one *.tar.bz2)", name, dir)
	}
	return c
}

// MustCaptures returns every capture, after Require: a realhosts folder
// holding none fails the test.
func MustCaptures(t testing.TB) []Capture {
	t.Helper()
	dir := Require(t)
	caps := Captures()
	if len(caps) == 0 {
		t.Fatalf("no real-host captures in %s (no folder holding sysinfo.tgz or one *.tar.bz2)", dir)
	}
	return caps
}

// missing says that the realhosts folder is absent and what it holds.
func missing(dir string) string {
	return fmt.Sprintf("real-host captures not found at %s: the module's testdata/realhosts "+
		"(the captures, their README.md and each one's SOURCE.txt naming the public repository and licence it came from) "+
		"is missing from this checkout", filepath.Clean(dir))
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
