package main

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
