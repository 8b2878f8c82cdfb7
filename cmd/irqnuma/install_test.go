package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeInstall runs make install into a folder: the two binaries
// (irqnuma and irqnuma-exporter), a manual
// page per command that groff renders without a warning and man -l shows,
// and the three shells' completions, where distribution packages put them.
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary (-short)")
	}
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make")
	}
	prefix, bins := t.TempDir(), t.TempDir()
	out, err := exec.Command(mk, "-C", "../..", "install", "PREFIX="+prefix, "BIN="+filepath.Join(bins, "irqnuma"),
		"EXPORTER_BIN="+filepath.Join(bins, "irqnuma-exporter")).CombinedOutput()
	if err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	for _, f := range []string{"bin/irqnuma", "bin/irqnuma-exporter", "share/bash-completion/completions/irqnuma",
		"share/zsh/site-functions/_irqnuma", "share/fish/vendor_completions.d/irqnuma.fish"} {
		if st, err := os.Stat(filepath.Join(prefix, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if bash, err := exec.LookPath("bash"); err == nil {
		if out, err := exec.Command(bash, "-n", filepath.Join(prefix, "share/bash-completion/completions/irqnuma")).CombinedOutput(); err != nil {
			t.Errorf("bash -n on the completion: %v\n%s", err, out)
		}
	}
	pages, _ := filepath.Glob(filepath.Join(prefix, "share/man/man1/*.1"))
	want := []string{"irqnuma.1", "irqnuma-audit.1", "irqnuma-bench.1", "irqnuma-exec.1", "irqnuma-flow.1", "irqnuma-irq.1", "irqnuma-irq-list.1", "irqnuma-irq-pin.1",
		"irqnuma-irq-restore.1", "irqnuma-map.1", "irqnuma-mask.1", "irqnuma-exporter.1", "irqnuma-snapshot.1", "irqnuma-topology.1", "irqnuma-watch.1",
		"irqnuma-zc.1", "irqnuma-zc-check.1", "irqnuma-zc-prepare.1", "irqnuma-tune.1", "irqnuma-restore.1"}
	if len(pages) != len(want) {
		t.Errorf("%d manual pages, want %d: %v", len(pages), len(want), pages)
	}
	groff, _ := exec.LookPath("groff")
	man, _ := exec.LookPath("man")
	if groff == "" && man == "" {
		t.Log("neither groff nor man here: pages not rendered")
	}
	for _, name := range want {
		page := filepath.Join(prefix, "share/man/man1", name)
		if groff != "" {
			out, err := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", page).CombinedOutput()
			if err != nil || len(out) > 0 {
				t.Errorf("groff %s: %v\n%s", name, err, out)
			}
		}
		if man != "" {
			cmd := exec.Command(man, "-l", page)
			cmd.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80")
			out, err := cmd.Output()
			title := strings.ToUpper(strings.TrimSuffix(name, ".1")) + "(1)"
			if err != nil || !strings.Contains(string(out), title) || !strings.Contains(string(out), "EXIT STATUS") {
				t.Errorf("man -l %s: %v; want %s and EXIT STATUS in:\n%.400s", name, err, title, out)
			}
		}
	}
}
