package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestAuditPartlyCaptured: a snapshot taken without --comm keeps every
// process's comm but not its status. audit --comm on it exited 1 with
// "open .../proc/4242/status: no such file"; it is a finding that says
// the process was not captured in full and how to capture it.
func TestAuditPartlyCaptured(t *testing.T) {
	t.Parallel()
	host := hosttest.Copy(t, "seed")
	writeProc(t, host, 64, testProc{pid: 4242, comm: "iperf3", allowed: "0-15", sockets: iperf3OnEth0})
	dir := t.TempDir()
	snap := func(name string, args ...string) string {
		p := filepath.Join(dir, name)
		if _, stderr, code := runCLI(t, append([]string{"--root", host, "snapshot", "-o", p}, args...)...); code != 0 {
			t.Fatalf("snapshot %v: exit %d: %s", args, code, stderr)
		}
		return p
	}
	partial, full := snap("partial.tar.gz"), snap("full.tar.gz", "--comm", "iperf3")

	for _, sel := range [][]string{{"--comm", "iperf3"}, {"--pid", "4242"}} {
		selector := strings.Join(sel, " ")
		out, stderr, code := runCLI(t, append([]string{"--root", partial, "audit", "--fail-on", "never"}, sel...)...)
		if code != cli.ExitOK {
			t.Fatalf("audit %s --fail-on never on a snapshot without it: exit %d, stderr %q", selector, code, stderr)
		}
		for _, want := range []string{"process 4242 matches " + selector + ", but the capture holds only its comm", "irqnuma snapshot " + selector} {
			if !strings.Contains(out, want) {
				t.Errorf("audit %s: table lacks %q:\n%s", selector, want, out)
			}
		}
		if strings.Contains(out, "no process matches") {
			t.Errorf("audit %s: a captured comm is called absent:\n%s", selector, out)
		}

		out, stderr, code = runCLI(t, append([]string{"--root", partial, "-o", "json", "audit", "--fail-on", "never"}, sel...)...)
		if code != cli.ExitOK {
			t.Fatalf("audit -o json %s: exit %d, stderr %q", selector, code, stderr)
		}
		var doc struct{ Findings []audit.Finding }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		var got []audit.Finding
		for _, f := range doc.Findings {
			if f.Check == audit.CheckProcAbsent {
				got = append(got, f)
			}
		}
		if len(got) != 1 || got[0].PID != 4242 || got[0].Severity != audit.SeverityWarning ||
			got[0].Fix != "take the snapshot naming it: irqnuma snapshot "+selector+" -o FILE.tar.gz" {
			t.Errorf("audit -o json %s: proc-absent findings %+v, want one warning for process 4242 saying how to capture it", selector, got)
		}
	}

	// Captured in full, the same audit judges the process.
	out, stderr, code := runCLI(t, "--root", full, "-o", "json", "audit", "--fail-on", "never", "--comm", "iperf3")
	if code != cli.ExitOK || strings.Contains(out, string(audit.CheckProcAbsent)) || !strings.Contains(out, `"pid": 4242`) {
		t.Errorf("audit --comm iperf3 on a snapshot taken with it: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}

	// A command that needs the process says why it has none.
	_, stderr, code = runCLI(t, "--root", partial, "map", "--comm", "iperf3")
	if code == cli.ExitOK || !strings.Contains(stderr, "--comm iperf3: process 4242: not captured in full") {
		t.Errorf("map --comm iperf3 on a snapshot without it: exit %d, stderr %q", code, stderr)
	}
}
