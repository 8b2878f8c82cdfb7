package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// docBlock is one fenced block of README.md or a docs/ page.
type docBlock struct {
	file   string // "docs/audit.md"
	line   int    // of the opening fence
	mark   string // the <!-- ... --> comment on the line before the fence, "" for none
	text   string // between the fences, the final newline kept
	indent string // the fence's indentation, taken off every line of text
}

// docBlocks returns every fenced block of README.md and docs/*.md.
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	root := moduleRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md under %s (%v)", root, err)
	}
	var out []docBlock
	for _, p := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			trimmed := strings.TrimLeft(lines[i], " ")
			if !strings.HasPrefix(trimmed, "```") {
				continue
			}
			blk := docBlock{file: filepath.ToSlash(rel), line: i + 1, indent: lines[i][:len(lines[i])-len(trimmed)]}
			if i > 0 {
				if prev := strings.TrimSpace(lines[i-1]); strings.HasPrefix(prev, "<!--") && strings.HasSuffix(prev, "-->") {
					if m := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(prev, "<!--"), "-->")); !strings.HasPrefix(m, "section:") && !strings.HasPrefix(m, "/section:") {
						blk.mark = m
					}
				}
			}
			var body strings.Builder
			j := i + 1
			for ; j < len(lines) && strings.TrimLeft(lines[j], " ") != "```"; j++ {
				body.WriteString(strings.TrimPrefix(lines[j], blk.indent) + "\n")
			}
			if j == len(lines) {
				t.Fatalf("%s:%d: a fenced block that never ends", blk.file, blk.line)
			}
			blk.text = body.String()
			out = append(out, blk)
			i = j
		}
	}
	return out
}

// TestDocBlocks: every fenced block of README.md and docs/ is run by a
// test or says what it is, on the line before its fence:
//
//   - a transcript whose commands are all `$ irqnuma --root testdata/...`
//     (optionally `| head -N` or `| sed -n A,Bp`) or `$ echo $?` is run
//     here, on the tree the repository ships, and must be what irqnuma
//     prints (stdout and stderr as a terminal shows them);
//   - <!-- run: TestName --> names the test that checks it, which must
//     exist (in cmd/irqnuma or cmd/irqnuma-exporter) and read the docs
//     (readmeBlock, readmeDocs, or the page by name);
//   - <!-- excerpt: FILE --> is lines of FILE, a golden or lab file a
//     test writes or checks: each line of the block but "..." must be
//     one of FILE's;
//   - <!-- pasted: WHERE --> is output pasted from a real run, not run;
//   - <!-- input --> is what to type (a synopsis, commands, a script),
//     with no output to check.
//
// An unmarked block that is not such a transcript fails the test.
func TestDocBlocks(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	tests := testFuncBodies(t, root)
	ran := 0
	for _, b := range docBlocks(t) {
		where := fmt.Sprintf("%s:%d", b.file, b.line)
		kind, arg, _ := strings.Cut(b.mark, ":")
		arg = strings.TrimSpace(arg)
		switch {
		case b.mark == "input":
		case kind == "pasted" && arg != "":
		case kind == "excerpt":
			c, err := os.ReadFile(filepath.Join(root, arg))
			if err != nil {
				t.Errorf("%s: <!-- excerpt: %s -->: %v", where, arg, err)
				continue
			}
			lines := strings.Split(string(c), "\n")
			for _, l := range strings.Split(strings.TrimSuffix(b.text, "\n"), "\n") {
				if l != "..." && !slices.Contains(lines, l) {
					t.Errorf("%s: a line %s has not: %q", where, arg, l)
				}
			}
		case kind == "run":
			body, ok := tests[arg]
			if !ok {
				t.Errorf("%s: <!-- run: %s -->: no such test", where, arg)
			} else if !strings.Contains(body, "readmeBlock(") && !strings.Contains(body, "readmeDocs(") && !strings.Contains(body, filepath.Base(b.file)) {
				t.Errorf("%s: <!-- run: %s -->: the test does not read the docs (readmeBlock, readmeDocs)", where, arg)
			}
		case b.mark != "":
			t.Errorf("%s: <!-- %s -->: want run: TEST, excerpt: FILE, pasted: WHERE or input", where, b.mark)
		default:
			got, ok := runTranscript(t, root, b.text)
			if !ok {
				t.Errorf("%s: a block neither run by a test nor marked: make it a transcript of irqnuma on a shipped tree, or mark it <!-- run: TEST -->, <!-- pasted: WHERE --> or <!-- input -->", where)
				continue
			}
			ran++
			if got != b.text {
				t.Errorf("%s: not what irqnuma prints (-doc +irqnuma):\n%s", where, cmp.Diff(b.text, got))
			}
		}
	}
	if ran == 0 {
		t.Error("no transcript was run")
	}
}

// transcriptCmd is a command line a transcript runs.
var transcriptCmd = regexp.MustCompile(`^\$ irqnuma (--root testdata/\S+ .*?)(?: \| head -(\d+)| \| sed -n (\d+),(\d+)p)?$`)

// runTranscript runs a transcript's commands and returns the transcript
// they make; ok is false when a command is not one it runs.
func runTranscript(t *testing.T, root, text string) (string, bool) {
	t.Helper()
	var out strings.Builder
	code := -1
	for _, l := range strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n") {
		if !strings.HasPrefix(l, "$ ") {
			continue // the output, made again below
		}
		cmd := strings.TrimSuffix(l, "\n")
		out.WriteString(cmd + "\n")
		if cmd == "$ echo $?" {
			if code < 0 {
				return "", false
			}
			out.WriteString(strconv.Itoa(code) + "\n")
			continue
		}
		m := transcriptCmd.FindStringSubmatch(cmd)
		if m == nil || strings.ContainsAny(m[1], `|;&<>'"$\`+"`") {
			return "", false
		}
		args := strings.Fields(m[1])
		args[1] = filepath.Join(root, args[1])
		var both bytes.Buffer // stdout and stderr as a terminal shows them
		s := hostSys()
		s.getenv = func(string) string { return "" }
		code = runSys(context.Background(), s, args, strings.NewReader(""), &both, &both)
		res := both.String()
		switch {
		case m[2] != "":
			n, _ := strconv.Atoi(m[2])
			res = firstLines(res, 1, n)
		case m[3] != "":
			a, _ := strconv.Atoi(m[3])
			z, _ := strconv.Atoi(m[4])
			res = firstLines(res, a, z)
		}
		out.WriteString(res)
	}
	return out.String(), out.Len() > 0
}

// firstLines is lines a to z (from 1) of s, as sed -n a,zp prints them.
func firstLines(s string, a, z int) string {
	lines := strings.SplitAfter(s, "\n")
	if z > len(lines) {
		z = len(lines)
	}
	if a > z {
		return ""
	}
	return strings.Join(lines[a-1:z], "")
}

// testFuncBodies returns the source of every Test function of this
// package's test files, by name.
func testFuncBodies(t *testing.T, root string) map[string]string {
	t.Helper()
	var files []string
	for _, cmd := range []string{"irqnuma", "irqnuma-exporter"} {
		fs, err := filepath.Glob(filepath.Join(root, "cmd", cmd, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	out := map[string]string{}
	start := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\) \{$`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		for _, m := range start.FindAllStringSubmatchIndex(src, -1) {
			body, _, _ := strings.Cut(src[m[1]:], "\n}\n")
			out[src[m[2]:m[3]]] = body
		}
	}
	return out
}

// TestDocGateScript runs docs/audit.md's gate.sh, as the page prints it,
// with the built binary as irqnuma on PATH, from the repository's root,
// and holds the transcript after it to what the runs print. Its
// /tmp/audit.txt is a file of the test's own.
func TestDocGateScript(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	root := moduleRoot(t)
	docs := readmeDocs(t)
	_, script, ok := strings.Cut(docs, "```sh\n#!/bin/sh\n# gate.sh ROOT FAIL_ON")
	script, after, ok2 := strings.Cut(script, "```\n")
	_, transcript, ok3 := strings.Cut(after, "```\n")
	transcript, _, ok4 := strings.Cut(transcript, "```\n")
	if !ok || !ok2 || !ok3 || !ok4 {
		t.Fatal("docs have no gate.sh block with a transcript after it")
	}
	dir := t.TempDir()
	script = "#!/bin/sh\n# gate.sh ROOT FAIL_ON" + strings.ReplaceAll(script, "/tmp/audit.txt", filepath.Join(dir, "audit.txt"))
	gate := filepath.Join(dir, "gate.sh")
	if err := os.WriteFile(gate, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := cliBinary(t)
	var got strings.Builder
	for _, l := range strings.Split(transcript, "\n") {
		cmdline, ok := strings.CutPrefix(l, "$ ")
		if !ok {
			continue
		}
		rest, ok := strings.CutPrefix(cmdline, "./gate.sh ")
		if !ok {
			t.Fatalf("a transcript line that is not ./gate.sh: %q", l)
		}
		cmd := exec.Command(sh, "-c", gate+" "+rest)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
		out, _ := cmd.CombinedOutput()
		got.WriteString(l + "\n" + string(out))
	}
	if got.String() != transcript {
		t.Errorf("docs/audit.md's gate.sh transcript is not what it prints (-doc +run):\n%s", cmp.Diff(transcript, got.String()))
	}
}
