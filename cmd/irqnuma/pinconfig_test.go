package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune"
)

// writeConfig writes the config FormatPinConfig makes of flags' options.
func writeConfig(t *testing.T, nics []string, opt tune.PlanOptions) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pin.yaml")
	if err := os.WriteFile(p, tune.FormatPinConfig(nics, opt), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPinConfigSamePlan: `irq pin --config FILE` prints what the same
// options as flags print, on every host tree.
func TestPinConfigSamePlan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flags []string
		opt   tune.PlanOptions
	}{
		{nil, tune.PlanOptions{}},
		{[]string{"--strategy", "node", "--xps"}, tune.PlanOptions{Strategy: tune.StrategyNode, XPS: true}},
		{[]string{"--node", "0", "--exclude", "0-1"}, tune.PlanOptions{Node: new(0), Exclude: cpuset.New(0, 1)}},
		{[]string{"--cpus", "2-5"}, tune.PlanOptions{CPUs: cpuset.New(2, 3, 4, 5)}},
	}
	for _, name := range hosttest.Names() {
		root := hosttest.Root(name)
		nic := nicNames(t, root)[0]
		for _, tt := range tests {
			cfg := writeConfig(t, []string{nic}, tt.opt)
			common := []string{"irq", "pin", "--dry-run", "-o", "json", "--root", root}
			wantOut, wantErr, wantCode := runCLI(t, append(append(common, nic), tt.flags...)...)
			gotOut, gotErr, gotCode := runCLI(t, append(common, "--config", cfg)...)
			if wantCode != gotCode || wantErr != gotErr {
				t.Errorf("%s %v: flags exit %d %q, config exit %d %q", name, tt.flags, wantCode, wantErr, gotCode, gotErr)
			}
			if diff := cmp.Diff(wantOut, gotOut); diff != "" {
				t.Errorf("%s %v (-flags +config):\n%s", name, tt.flags, diff)
			}
		}
	}
}

// TestPinConfigWrites: a config applied to a tree writes what the flags
// write.
func TestPinConfigWrites(t *testing.T) {
	t.Parallel()
	byFlags, byConfig := hosttest.Copy(t, "nps2"), hosttest.Copy(t, "nps2")
	cfg := writeConfig(t, []string{"enp65s0f0"}, tune.PlanOptions{XPS: true})
	state := filepath.Join(t.TempDir(), "state.json")
	if _, errOut, code := runCLI(t, "irq", "pin", "enp65s0f0", "--xps", "--root", byFlags, "--state", state); code != 0 {
		t.Fatalf("pin with flags: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "irq", "pin", "--config", cfg, "--root", byConfig, "--state", state+"2"); code != 0 {
		t.Fatalf("pin with --config: exit %d: %s", code, errOut)
	}
	for _, f := range []string{"proc/irq/107/smp_affinity_list", "proc/irq/108/smp_affinity_list",
		"sys/class/net/enp65s0f0/queues/tx-7/xps_cpus"} {
		a, err1 := os.ReadFile(filepath.Join(byFlags, f))
		b, err2 := os.ReadFile(filepath.Join(byConfig, f))
		if err1 != nil || err2 != nil || string(a) != string(b) {
			t.Errorf("%s: flags wrote %q (%v), config wrote %q (%v)", f, a, err1, b, err2)
		}
	}
	got, _ := os.ReadFile(filepath.Join(byConfig, "proc/irq/108/smp_affinity_list"))
	if strings.TrimSpace(string(got)) != "15" {
		t.Errorf("IRQ 108 after pin = %q, want 15 (the NIC's node 1)", got)
	}
}

func TestPinConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("nics:\n  - nic: eth0\n"), 0o644)
	os.WriteFile(bad, []byte("nics:\n  - nic: eth0\n    nod: 1\n"), 0o644)
	unknown := filepath.Join(dir, "unknown.yaml")
	os.WriteFile(unknown, []byte("nics:\n  - nic: eth9\n"), 0o644)
	seed := hosttest.Root("seed")
	tests := []struct {
		give     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"--config", good, "eth0"}, cli.ExitUsage, "give no NIC arguments"},
		{[]string{"--config", good, "--node", "1"}, cli.ExitUsage, "--node: set it in the --config file"},
		{[]string{"--config", bad}, cli.ExitUsage, bad + `: bad pin config: nics[0] (eth0): line 3: unknown key "nod" (want nic, node, cpus, exclude, strategy, xps)`},
		{[]string{"--config", filepath.Join(dir, "nope.yaml")}, cli.ExitError, "pin config: open"},
		{[]string{"--config", unknown}, cli.ExitUsage, `unknown NIC "eth9"`},
		{[]string{}, cli.ExitUsage, "name the NIC to pin (irqnuma topology lists them), or give --config FILE"},
	}
	for _, tt := range tests {
		args := append([]string{"irq", "pin", "--dry-run", "--root", seed}, tt.give...)
		_, errOut, code := runCLI(t, args...)
		if code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) {
			t.Errorf("irqnuma %s = exit %d, stderr %q; want exit %d with %q", strings.Join(args, " "), code, errOut, tt.wantCode, tt.wantErr)
		}
	}
}
