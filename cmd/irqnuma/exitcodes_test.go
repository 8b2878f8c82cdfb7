package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestExitCodes holds every command to the one exit-code table (README,
// man pages: cli.ExitStatus) for the same kinds of bad input: an unknown
// flag and a bad value are usage errors (2) naming the flag, an unknown
// NIC is 2 naming it, a write to the live host without root is 1 saying
// root is needed, and -o json is JSON or, where a command has none, 2.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	seed := hosttest.Root("seed")
	type cell struct {
		args []string
		code int
		says string // a part of stderr; "" for a success
	}
	type row struct {
		cmd        []string
		badValue   cell
		unknownNIC *cell // nil: the command takes no NIC
		nonRoot    *cell // nil: the command does not write
		json       cell
	}
	usage := func(says string, args ...string) cell { return cell{args, cli.ExitUsage, says} }
	rows := []row{
		{cmd: []string{"topology"}, badValue: usage(`--output "yaml"`, "-o", "yaml"), json: cell{code: 0}},
		{cmd: []string{"irq", "list"}, badValue: usage(`--output "yaml"`, "-o", "yaml"),
			unknownNIC: &cell{[]string{"--nic", "eth9"}, cli.ExitUsage, `unknown NIC "eth9"`}, json: cell{code: 0}},
		{cmd: []string{"irq", "pin"}, badValue: usage(`--strategy`, "eth0", "--strategy", "fast", "--dry-run"),
			unknownNIC: &cell{[]string{"eth9", "--dry-run"}, cli.ExitUsage, `unknown NIC "eth9"`},
			nonRoot:    &cell{[]string{"eth0"}, cli.ExitError, "needs root"},
			json:       cell{args: []string{"eth0", "--dry-run"}, code: 0}},
		{cmd: []string{"irq", "restore"}, badValue: usage(`irqnuma irq restore: want at most one FILE`, "a", "b"),
			nonRoot: &cell{nil, cli.ExitError, "needs root"},
			json:    cell{args: []string{"/nonexistent/state.json"}, code: cli.ExitError, says: "/nonexistent/state.json"}},
		{cmd: []string{"audit"}, badValue: usage(`--fail-on "sometimes"`, "--fail-on", "sometimes"),
			unknownNIC: &cell{[]string{"--nic", "eth9"}, cli.ExitUsage, `unknown NIC "eth9"`}, json: cell{args: []string{"--fail-on", "never"}, code: 0}},
		{cmd: []string{"map"}, badValue: usage(`--color "x"`, "--color", "x"),
			unknownNIC: &cell{[]string{"--nic", "eth9"}, cli.ExitUsage, `unknown NIC "eth9"`}, json: cell{code: 0}},
		{cmd: []string{"watch"}, badValue: usage(`--interval "soon"`, "--interval", "soon"),
			unknownNIC: &cell{[]string{"--nic", "eth9", "--count", "1"}, cli.ExitUsage, `unknown NIC "eth9"`},
			json:       cell{args: []string{"--count", "1", "--interval", "10ms"}, code: 0}},
		{cmd: []string{"mask"}, badValue: usage(`--count "x"`, "--nic", "eth0", "--count", "x"),
			unknownNIC: &cell{[]string{"--nic", "eth9"}, cli.ExitUsage, `unknown NIC "eth9"`},
			json:       cell{args: []string{"--nic", "eth0"}, code: 0}},
		{cmd: []string{"exec"}, badValue: usage(`--node "x"`, "--node", "x", "--", "true"),
			unknownNIC: &cell{[]string{"--nic", "eth9", "--", "true"}, cli.ExitUsage, "reads / only"},
			json:       usage("-o json: irqnuma exec has no JSON output", "--nic", "eth0", "--", "true")},
		{cmd: []string{"bench"}, badValue: usage(`--repeat "x"`, "--repeat", "x", "--dry-run", "--", "iperf3", "-J"),
			unknownNIC: &cell{[]string{"--nic", "eth9", "--dry-run", "--", "iperf3", "-J"}, cli.ExitUsage, `unknown NIC "eth9"`},
			nonRoot:    &cell{[]string{"--", "iperf3", "-J"}, cli.ExitError, "needs root"},
			json:       cell{args: []string{"--dry-run", "--", "iperf3", "-J"}, code: 0}},
		{cmd: []string{"zc", "check"}, badValue: usage(`queue -1`, "eth0", "--queue", "-1"),
			unknownNIC: &cell{[]string{"eth9"}, cli.ExitUsage, `unknown NIC "eth9"`}, json: cell{args: []string{"eth0"}, code: 0}},
		{cmd: []string{"snapshot"}, badValue: usage(`--pid "x"`, "--pid", "x"),
			json: usage("a snapshot is a .tar.gz")},
	}
	check := func(t *testing.T, s sys, args []string, c cell, wantJSON bool) {
		t.Helper()
		stdout, stderr, code := runCLISys(t, s, args...)
		if code != c.code || !strings.Contains(stderr, c.says) {
			t.Errorf("irqnuma %s: exit %d, stderr %q; want exit %d naming %q", strings.Join(args, " "), code, stderr, c.code, c.says)
		}
		if c.code != 0 && c.code != cli.ExitFindings && strings.Count(stderr, "\n") != 1 {
			t.Errorf("irqnuma %s: stderr is not one line: %q", strings.Join(args, " "), stderr)
		}
		if wantJSON && code == 0 && !json.Valid([]byte(strings.SplitN(stdout, "\n{", 2)[0])) {
			t.Errorf("irqnuma %s: stdout is not JSON: %.200q", strings.Join(args, " "), stdout)
		}
	}
	for _, r := range rows {
		name := strings.Join(r.cmd, " ")
		t.Run(name, func(t *testing.T) {
			root := []string{"--root", seed}
			with := func(extra []string) []string { return append(append(append([]string{}, root...), r.cmd...), extra...) }
			check(t, hostSys(), with([]string{"--bogus"}), usage("--bogus"), false)
			check(t, hostSys(), with(r.badValue.args), r.badValue, false)
			if r.unknownNIC != nil {
				check(t, hostSys(), with(r.unknownNIC.args), *r.unknownNIC, false)
			}
			if r.nonRoot != nil {
				// The live host, as a user: refused before anything is read.
				args := append(append([]string{}, r.cmd...), r.nonRoot.args...)
				check(t, pinSys(nil, 1000), args, *r.nonRoot, false)
			}
			check(t, hostSys(), append([]string{"-o", "json"}, with(r.json.args)...), r.json, true)
		})
	}
}
