package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestEvilSnapshotDoc runs docs/many-hosts.md's evil-snapshot block as
// written, in a folder of its own: its shell lines make the archive with
// the system's tar, and irqnuma refuses it, naming the entry.
func TestEvilSnapshotDoc(t *testing.T) {
	if _, err := exec.LookPath("tar"); err != nil {
		t.Fatalf("the block needs tar: %v", err)
	}
	block := readmeBlock(t, "evil-snapshot", "```\n")
	t.Chdir(t.TempDir())
	var got strings.Builder
	code := -1
	for _, l := range strings.SplitAfter(strings.TrimSuffix(block, "\n"), "\n") {
		line, ok := strings.CutPrefix(strings.TrimSuffix(l, "\n"), "$ ")
		if !ok {
			continue // output, made again below
		}
		got.WriteString("$ " + line + "\n")
		switch {
		case line == "echo $?":
			got.WriteString(strconv.Itoa(code) + "\n")
		case strings.HasPrefix(line, "irqnuma "):
			var both bytes.Buffer
			code = runSys(context.Background(), hostSys(), strings.Fields(line)[1:], strings.NewReader(""), &both, &both)
			got.WriteString(both.String())
		default:
			out, err := exec.Command("sh", "-c", line).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
			got.Write(out)
		}
	}
	if diff := cmp.Diff(block, got.String()); diff != "" {
		t.Errorf("docs/many-hosts.md's evil-snapshot block is not what it does (-doc +run):\n%s", diff)
	}
}

// TestSeedSteerRecipe runs docs/zc-bench.md's seed-steer recipe as
// written, in a folder that sees the clone's testdata and cmd: the tree
// it makes is the seed with the overlay laid over it as the tests lay it
// (every file's bytes; a plain copy does not take the seed's recorded
// modes), and the page's bench dry run on it prints what the page says.
func TestSeedSteerRecipe(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tar"); err != nil {
		t.Fatalf("the recipe needs tar: %v", err)
	}
	block := readmeBlock(t, "seed-steer", "```\n")
	root := moduleRoot(t)
	dir := t.TempDir()
	for _, top := range []string{"testdata", "cmd"} {
		if err := os.Symlink(filepath.Join(root, top), filepath.Join(dir, top)); err != nil {
			t.Fatal(err)
		}
	}
	hosttest.RunShell(t, dir, block)
	bytesOf := func(files map[string]string) map[string]string {
		out := map[string]string{}
		for p, v := range files {
			_, b, _ := strings.Cut(v, " ") // the mode, then the bytes
			out[p] = b
		}
		return out
	}
	laid := hosttest.Copy(t, "seed")
	hosttest.Overlay(t, laid, filepath.Join("testdata", "flow", "seed-steer"))
	made := filepath.Join(dir, "seed-steer")
	if diff := cmp.Diff(bytesOf(hosttest.Files(t, laid)), bytesOf(hosttest.Files(t, made))); diff != "" {
		t.Errorf("the recipe's tree is not the seed with the overlay (-tests +recipe):\n%s", diff)
	}
	bench := readmeBlock(t, "bench", "$ irqnuma --root seed-steer "+shellJoinArgs(benchFlowArgs)+"\n")
	out, stderr, code := runCLI(t, append([]string{"--root", made}, benchFlowArgs...)...)
	if code != 0 || out != bench {
		t.Errorf("the page's bench dry run on the recipe's tree: exit %d (%s) (-page +irqnuma):\n%s", code, stderr, cmp.Diff(bench, out))
	}
}
