package snapshot

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// deadPID returns the id of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run true: %v", err)
	}
	return cmd.Process.Pid
}

// entriesUnder counts dir and everything under it, 0 when it is gone.
func entriesUnder(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(string, os.DirEntry, error) error { n++; return nil })
	if _, err := os.Lstat(dir); err != nil {
		return 0
	}
	return n
}

// TestCleanStaleDoesNotBlock: the folder of a killed run is moved aside
// before CleanStale returns, and removed in the background a budget of
// entries a call, so no command pays for all of it (issue 27: 22 s).
func TestCleanStaleDoesNotBlock(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := filepath.Join(tmp, tempPrefix+strconv.Itoa(deadPID(t))+"-123")
	live := filepath.Join(tmp, tempPrefix+"1-456") // init is alive
	for _, d := range []string{dead, live} {
		for i := range 5 {
			sub := filepath.Join(d, "proc", fmt.Sprintf("d%d", i))
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			for j := range 50 {
				if err := os.WriteFile(filepath.Join(sub, strconv.Itoa(j)), nil, 0o444); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	total := entriesUnder(dead) // 1 + proc + 5 folders + 250 files
	if total != 257 {
		t.Fatalf("made %d entries, want 257", total)
	}
	for i, want := range []int{157, 57, 0} {
		done := cleanStale(100)
		if _, err := os.Lstat(dead); err == nil {
			t.Errorf("call %d: %s still under its own name when CleanStale returned", i+1, dead)
		}
		<-done
		var aside []string
		ents, _ := os.ReadDir(tmp)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), tempPrefix+staleInfix) {
				aside = append(aside, e.Name())
			}
		}
		got := 0
		for _, a := range aside {
			got += entriesUnder(filepath.Join(tmp, a))
		}
		if got != want {
			t.Errorf("call %d: %d entries left aside (%v), want %d", i+1, got, aside, want)
		}
		if n := entriesUnder(live); n != 257 {
			t.Errorf("call %d: the live run's folder holds %d entries, want all 257", i+1, n)
		}
	}
}
