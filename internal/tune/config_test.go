package tune

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

func TestParsePinConfig(t *testing.T) {
	tests := []struct {
		name string
		give string
		want []PinEntry
	}{
		{"defaults", "nics:\n  - nic: eth0\n", []PinEntry{{NIC: "eth0", Options: PlanOptions{Strategy: StrategySpread}}}},
		{"every key", `
# comment
nics:
  - nic: eth0
    strategy: node
    exclude: 20-23
    xps: true
  - nic: eth1
    node: 0
  - nic: eth2
    cpus: 3
`, []PinEntry{
			{NIC: "eth0", Options: PlanOptions{Strategy: StrategyNode, Exclude: cpuset.New(20, 21, 22, 23), XPS: true}},
			{NIC: "eth1", Options: PlanOptions{Node: new(0), Strategy: StrategySpread}},
			{NIC: "eth2", Options: PlanOptions{Strategy: StrategySpread, CPUs: cpuset.New(3)}},
		}},
	}
	for _, tt := range tests {
		got, err := parsePinConfig([]byte(tt.give))
		if err != nil {
			t.Errorf("%s: ParsePinConfig() error = %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got.NICs); diff != "" {
			t.Errorf("%s: ParsePinConfig() (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestParsePinConfigErrors(t *testing.T) {
	tests := []struct {
		give string
		want string // in the error, which also wraps ErrConfig
	}{
		{"", "empty file"},
		{"nics: []\n", "the nics list is empty or missing"},
		{"nic: eth0\n", `line 1: unknown key "nic" at the top (want nics)`},
		{"nics:\n  - nic: eth0\n    stratgy: node\n", `nics[0] (eth0): line 3: unknown key "stratgy" (want nic, node, cpus, exclude, strategy, xps)`},
		{"nics:\n  - strategy: node\n", "nics[0]: nic: missing"},
		{"nics:\n  - nic: eth0\n    strategy: fast\n", `nics[0] (eth0): strategy "fast": want spread or node`},
		{"nics:\n  - nic: eth0\n    node: 1\n    cpus: 1-3\n", "nics[0] (eth0): node and cpus are exclusive"},
		{"nics:\n  - nic: eth0\n    node: -2\n", "node -2: want a node id"},
		{"nics:\n  - nic: eth0\n    cpus: 3-1\n", "nics[0] (eth0): cpus:"},
		{"nics:\n  - nic: eth0\n    cpus: \"\"\n", "cpus: empty list"},
		{"nics:\n  - nic: eth0\n    exclude: 1,\n", "exclude:"},
		{"nics:\n  - nic: eth0\n  - nic: eth0\n", "nics[1] (eth0): NIC listed twice"},
		{"nics:\n  - nic: ../eth0\n", "not an interface name"},
		{"nics:\n  - nic: eth0\n---\nnics: []\n", "more than one YAML document"},
		{"nics: {nic: eth0}\n", "cannot unmarshal"},
	}
	for _, tt := range tests {
		_, err := parsePinConfig([]byte(tt.give))
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParsePinConfig(%q) error = %v, want ErrConfig with %q", tt.give, err, tt.want)
		}
	}
}

func TestReadPinConfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pin.yaml")
	if _, err := ReadPinConfig(p); err == nil || !strings.Contains(err.Error(), "pin config") {
		t.Errorf("ReadPinConfig(missing) = %v", err)
	}
	if err := os.WriteFile(p, []byte("nics:\n  - nic: eth0\n    node: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPinConfig(p); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), p) {
		t.Errorf("ReadPinConfig(bad) = %v, want ErrConfig naming the file", err)
	}
}

// TestPinConfigRoundTrip: the flags' options written as a config and read
// back plan exactly what the flags plan, on every host tree.
func TestPinConfigRoundTrip(t *testing.T) {
	options := []PlanOptions{
		{Strategy: StrategySpread},
		{Strategy: StrategyNode, XPS: true},
		{Node: new(0), Strategy: StrategySpread, Exclude: cpuset.New(0, 1)},
		{Strategy: StrategySpread, CPUs: cpuset.New(2, 3, 4, 5), XPS: true},
	}
	for _, name := range hosttest.Names() {
		root := hosttest.Root(name)
		h, all := planHost(t, root)
		var nics []string
		for _, n := range h.NICs {
			if len(all.ForNIC(n.Name)) > 0 {
				nics = append(nics, n.Name)
			}
		}
		h, tab := planHost(t, root, nics...)
		planned := 0
		for _, opt := range options {
			text := FormatPinConfig(nics, opt)
			c, err := parsePinConfig(text)
			if err != nil {
				t.Fatalf("%s: ParsePinConfig(FormatPinConfig()) error = %v\n%s", name, err, text)
			}
			want, wantErr := planPin(h, tab, nics, opt)
			got, gotErr := planPinConfig(h, tab, c)
			if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
				t.Errorf("%s %+v: flags error %v, config error %v", name, opt, wantErr, gotErr)
				continue
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %+v: plan (-flags +config):\n%s\nconfig:\n%s", name, opt, diff, text)
			}
			if wantErr == nil {
				planned++
			}
		}
		if planned < 2 {
			t.Errorf("%s: %d of %d option sets planned; the round trip needs real plans", name, planned, len(options))
		}
	}
}

// TestPinConfigPerNIC: NICs with their own options are planned as their
// own `irq pin` would plan them, joined in order.
func TestPinConfigPerNIC(t *testing.T) {
	h, tab := planHost(t, hosttest.Root("offline-2node"), "ens1f0", "eth1")
	c, err := parsePinConfig([]byte("nics:\n  - nic: ens1f0\n    strategy: node\n  - nic: eth1\n    exclude: \"0\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := planPinConfig(h, tab, c)
	if err != nil {
		t.Fatal(err)
	}
	a, err1 := planPin(h, tab, []string{"ens1f0"}, PlanOptions{Strategy: StrategyNode})
	b, err2 := planPin(h, tab, []string{"eth1"}, PlanOptions{Strategy: StrategySpread, Exclude: cpuset.New(0)})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if got.Strategy != "" {
		t.Errorf("Strategy = %q, want \"\" for mixed strategies", got.Strategy)
	}
	if diff := cmp.Diff(append(placed(a), placed(b)...), placed(got)); diff != "" {
		t.Errorf("steps (-separate +config):\n%s", diff)
	}
	if len(got.Targets) != 2 || got.Targets[0].NIC != "ens1f0" || got.Targets[1].NIC != "eth1" {
		t.Errorf("targets = %+v, want ens1f0 then eth1", got.Targets)
	}
}
