package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// docsSection is the fenced block of a section of a docs/ page (between
// <!-- section:NAME --> and its end).
func docsSection(t *testing.T, page, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "<!-- section:"+name+" -->\n")
	sec, _, ok2 := strings.Cut(sec, "<!-- /section:"+name+" -->")
	_, block, ok3 := strings.Cut(sec, "```\n")
	block, _, ok4 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 || !ok4 {
		t.Fatalf("docs/%s has no section %s with a fenced block", page, name)
	}
	return block
}

// TestDocsSeedPods runs docs/many-hosts.md's seed-pods recipe as written
// (its shell lines in a folder that sees the clone's testdata), then each
// exporter example of the page on the tree it made: the exporter started
// with the example's flags, its /metrics the lines the example's grep
// keeps.
func TestDocsSeedPods(t *testing.T) {
	if _, err := exec.LookPath("tar"); err != nil {
		t.Fatalf("the recipe needs tar: %v", err)
	}
	dir := t.TempDir()
	clone, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(clone, "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	hosttest.RunShell(t, dir, docsSection(t, "many-hosts.md", "seed-pods"))
	root := filepath.Join(dir, "seed-pods")
	for _, name := range []string{"seed-pods-cgroup", "seed-pods-pod"} {
		block := docsSection(t, "many-hosts.md", name)
		lines := strings.SplitAfter(block, "\n")
		serve, ok := strings.CutPrefix(strings.TrimSuffix(lines[0], "\n"), "$ irqnuma-exporter --root seed-pods ")
		serve, ok2 := strings.CutSuffix(serve, " &")
		grep, ok3 := strings.CutPrefix(strings.TrimSuffix(lines[1], "\n"), "$ curl -s 127.0.0.1:9143/metrics | grep '^")
		grep, ok4 := strings.CutSuffix(grep, "'")
		if !ok || !ok2 || !ok3 || !ok4 {
			t.Fatalf("%s: want the exporter on seed-pods, then curl piped to grep '^PREFIX', not:\n%s", name, block)
		}
		addr := start(t, append([]string{"--root", root}, strings.Fields(serve)...)...)
		code, body := fetch(t, http.DefaultClient, "http://"+addr+"/metrics", "", "")
		got := lines[0] + lines[1]
		for _, l := range strings.SplitAfter(body, "\n") {
			if strings.HasPrefix(l, grep) {
				got += l
			}
		}
		if code != http.StatusOK || got != block {
			t.Errorf("%s: %d; the page's run is not what the exporter serves (-page +exporter):\n%s", name, code, cmp.Diff(block, got))
		}
	}
}
