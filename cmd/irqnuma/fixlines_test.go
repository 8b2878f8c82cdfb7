package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// fixCommands are the programs a fix line may start with or run.
var fixCommands = []string{"irqnuma", "ethtool", "taskset", "cpupower", "migratepages", "echo", "tee", "systemctl", "numactl"}

// TestFixLinesRun: every fix line the audit prints, on every host tree,
// every real capture and this machine, either is a shell command line
// that runs (bash accepts it, it runs only known programs, and each
// irqnuma in it succeeds on that host, or guards what follows with && so
// its own error says why) or is prose that says what to do, naming no
// command it does not run.
func TestFixLinesRun(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	roots := map[string]string{}
	for _, name := range hosttest.Names() {
		roots[name] = hosttest.Root(name)
	}
	if !testing.Short() {
		if _, ok := realhosts.Optional(t); ok {
			for _, c := range realhosts.MustCaptures(t) {
				roots[c.Name] = realhosts.Root(t, c)
			}
		}
		if _, err := os.Stat("/proc/interrupts"); err == nil {
			roots["live"] = "/"
		}
	}
	checked := 0
	for name, root := range roots {
		doc, _ := auditJSON(t, root, "--fail-on", "never")
		seen := map[string]bool{}
		for _, f := range doc.Findings {
			if seen[f.Fix] {
				continue
			}
			seen[f.Fix] = true
			checked++
			line, _, _ := strings.Cut(f.Fix, "  # ") // a comment after two spaces is for people
			first := strings.Fields(line)[0]
			first, _, _ = strings.Cut(first, "=$(") // cpus=$(irqnuma mask ...)
			if !slices.Contains(fixCommands, first) && first != "cpus" && first != "m" {
				// Prose: it must not start with a command it does not run.
				continue
			}
			if out, err := exec.Command(bash, "-n", "-c", f.Fix).CombinedOutput(); err != nil {
				t.Errorf("%s: %s fix is not a shell command line: %q: %s", name, f.Check, f.Fix, out)
				continue
			}
			for _, inv := range irqnumaInvocations(line) {
				args := inv.args
				if len(args) >= 2 && args[0] == "irq" && args[1] == "pin" {
					args = append(args, "--dry-run")
				}
				_, stderr, code := runCLI(t, append([]string{"--root", root}, args...)...)
				if code != 0 && !inv.guarded {
					t.Errorf("%s: %s fix %q: irqnuma %s fails (exit %d: %s) and nothing says so", name, f.Check, f.Fix, strings.Join(args, " "), code, strings.TrimSpace(stderr))
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("%d fix lines checked; want the audit's fixes on every tree", checked)
	}
}

// invocation is one irqnuma command inside a fix line, and whether what
// follows it runs only when it succeeds (cmd && ...), so that its own
// error is what the user sees.
type invocation struct {
	args    []string
	guarded bool
}

// irqnumaInvocations finds the irqnuma commands of a shell line: at its
// start, after && or |, or inside $(...).
func irqnumaInvocations(line string) []invocation {
	var out []invocation
	rest := line
	for {
		i := strings.Index(rest, "irqnuma ")
		if i < 0 {
			return out
		}
		rest = rest[i+len("irqnuma "):]
		end := len(rest)
		for _, stop := range []string{")", "&&", "|", ";"} {
			if j := strings.Index(rest, stop); j >= 0 && j < end {
				end = j
			}
		}
		after := strings.TrimSpace(rest[end:])
		guarded := strings.HasPrefix(after, ")") && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(after, ")")), "&&") ||
			strings.HasPrefix(after, "&&")
		out = append(out, invocation{args: strings.Fields(rest[:end]), guarded: guarded})
		rest = rest[end:]
	}
}
