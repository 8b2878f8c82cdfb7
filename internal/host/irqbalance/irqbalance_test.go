package irqbalance

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func TestIrqbalanceParseArgs(t *testing.T) {
	type want struct {
		IRQs    []int
		Mods    []string
		Script  string
		Oneshot bool
	}
	tests := []struct {
		give    string
		want    want
		wantErr string
	}{
		{give: "", want: want{}},
		{give: "--foreground", want: want{}},
		{give: "--foreground --banirq=284 --banirq 285 -i 286 -i287", want: want{IRQs: []int{284, 285, 286, 287}}},
		{give: "-f --banmod=mlx5_core -m ice", want: want{Mods: []string{"mlx5_core", "ice"}}},
		{give: "-foi 40", want: want{IRQs: []int{40}, Oneshot: true}},
		{give: "--bani=7 --banm=x --one", want: want{IRQs: []int{7}, Mods: []string{"x"}, Oneshot: true}},
		{give: "--policyscript=/usr/local/bin/pol -t 5 -e 2 -p off -c 2 -s /run/irqbalance.pid -j -d", want: want{Script: "/usr/local/bin/pol"}},
		{give: "stray --banirq=3 -- --banirq=4", want: want{IRQs: []int{3}}},
		{give: "--banirq=9 --banirq=9 -i 1", want: want{IRQs: []int{1, 9}}},
		{give: "--ban=3", wantErr: "ambiguous"},
		{give: "--banirq=x", wantErr: "not an IRQ number"},
		{give: "--banirq", wantErr: "missing value"},
		{give: "-i", wantErr: "missing value"},
		{give: "-z", wantErr: "unknown option -z"},
		{give: "--oneshot=yes", wantErr: "takes no value"},
	}
	for _, tt := range tests {
		b := &Settings{Args: strings.Fields(tt.give)}
		err := b.parseArgs()
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseArgs(%q) error = %v, want one containing %q", tt.give, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tt.give, err)
			continue
		}
		got := want{b.BannedIRQs, b.BannedModules, b.PolicyScript, b.Oneshot}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseArgs(%q) (-want +got):\n%s", tt.give, diff)
		}
	}
}

func TestParseEnvFile(t *testing.T) {
	tests := []struct {
		give    string
		want    map[string]string
		wantErr bool
	}{
		{give: "", want: map[string]string{}},
		{give: "# comment\n; also\n\n#IRQBALANCE_BANNED_CPUS=\n", want: map[string]string{}},
		{give: "IRQBALANCE_BANNED_CPULIST=16-31\nIRQBALANCE_ARGS=\"--banirq=5 --banirq=6\"\n",
			want: map[string]string{"IRQBALANCE_BANNED_CPULIST": "16-31", "IRQBALANCE_ARGS": "--banirq=5 --banirq=6"}},
		{give: "export ENABLED='1'\n  ONESHOT = 0 \n", want: map[string]string{"ENABLED": "1", "ONESHOT": "0"}},
		{give: "IRQBALANCE_ARGS=\"--banirq=5\n", wantErr: true},
		{give: "just words\n", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseEnvFile([]byte(tt.give))
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseEnvFile(%q) error = %v, want error %v", tt.give, err, tt.wantErr)
			continue
		}
		if err == nil {
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseEnvFile(%q) (-want +got):\n%s", tt.give, diff)
			}
		}
	}
}

// irqbalanceTree writes a host root with the given files (relative path
// -> content) and returns it.
func irqbalanceTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, data := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestRead(t *testing.T) {
	// A shell process so the tree has process folders.
	shell := map[string]string{"proc/1/comm": "systemd\n", "proc/1/cmdline": "/sbin/init\x00"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range shell {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	type want struct {
		Known, Running bool
		PIDs           []int
		IRQs           []int
		Mods           []string
		CPUs           string
		From           string
		Source         string
		ConfigFile     string
	}
	tests := []struct {
		name string
		give map[string]string
		want want
	}{
		{
			name: "no processes at all",
			give: map[string]string{"sys/devices/system/cpu/isolated": "\n"},
			want: want{From: "isolated and nohz_full CPUs"},
		},
		{
			name: "not running, no config: defaults from isolated and nohz_full",
			give: with(map[string]string{
				"sys/devices/system/cpu/isolated":  "10-11\n",
				"sys/devices/system/cpu/nohz_full": "(null)\n",
			}),
			want: want{Known: true, CPUs: "10-11", From: "isolated and nohz_full CPUs"},
		},
		{
			name: "running under systemd: cmdline and environ",
			give: with(map[string]string{
				"proc/812/comm":                   "irqbalance\n",
				"proc/812/cmdline":                "/usr/sbin/irqbalance\x00--foreground\x00--banirq=284\x00-m\x00ice\x00",
				"proc/812/environ":                "LANG=C.UTF-8\x00PATH=/usr/bin\x00IRQBALANCE_BANNED_CPULIST=16-31,48-63\x00IRQBALANCE_ARGS=--banirq=284 -m ice\x00",
				"etc/default/irqbalance":          "IRQBALANCE_BANNED_CPULIST=0-3\n",
				"sys/devices/system/cpu/isolated": "8\n",
			}),
			want: want{Known: true, Running: true, PIDs: []int{812}, IRQs: []int{284}, Mods: []string{"ice"},
				CPUs: "16-31,48-63", From: EnvBannedCPUList, Source: "/proc/812/cmdline, /proc/812/environ",
				ConfigFile: "/etc/default/irqbalance"},
		},
		{
			name: "running, environ unreadable: the mask from the env file wins over the list",
			give: with(map[string]string{
				"proc/900/comm":                   "irqbalance\n",
				"proc/900/cmdline":                "irqbalance\x00",
				"etc/sysconfig/irqbalance":        "IRQBALANCE_BANNED_CPUS=0000ff00\nIRQBALANCE_BANNED_CPULIST=1\n",
				"usr/lib/irqbalance/defaults.env": "IRQBALANCE_ARGS=\n",
			}),
			want: want{Known: true, Running: true, PIDs: []int{900}, CPUs: "8-15", From: EnvBannedCPUs,
				Source:     "/proc/900/cmdline, /usr/lib/irqbalance/defaults.env, /etc/sysconfig/irqbalance",
				ConfigFile: "/etc/sysconfig/irqbalance"},
		},
		{
			name: "not running: the config's arguments; '-' bans no CPU",
			give: with(map[string]string{
				"etc/default/irqbalance":          "IRQBALANCE_ARGS=\"--banirq=7\"\nIRQBALANCE_BANNED_CPULIST=-\n",
				"sys/devices/system/cpu/isolated": "3\n",
			}),
			want: want{Known: true, IRQs: []int{7}, From: EnvBannedCPUList, Source: "/etc/default/irqbalance",
				ConfigFile: "/etc/default/irqbalance"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Read(hosttest.Open(t, irqbalanceTree(t, tt.give)))
			if err != nil {
				t.Fatalf("ReadIrqbalance: %v", err)
			}
			got := want{b.Running.Known(), b.Running.Or(false), b.PIDs, b.BannedIRQs, b.BannedModules,
				b.BannedCPUs.List(), b.BannedCPUsFrom, b.Source, b.ConfigFile}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ReadIrqbalance (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadIrqbalanceBadInput(t *testing.T) {
	tests := []struct {
		give map[string]string
		want string
	}{
		{give: map[string]string{"etc/default/irqbalance": "IRQBALANCE_BANNED_CPULIST=3-1\n"}, want: "IRQBALANCE_BANNED_CPULIST"},
		{give: map[string]string{"etc/default/irqbalance": "IRQBALANCE_BANNED_CPUS=xyz\n"}, want: "IRQBALANCE_BANNED_CPUS"},
		{give: map[string]string{"etc/default/irqbalance": "not an assignment\n"}, want: "etc/default/irqbalance"},
		{give: map[string]string{"proc/5/comm": "irqbalance\n", "proc/5/cmdline": "irqbalance\x00--banirq=-1\x00"}, want: "--banirq"},
	}
	for _, tt := range tests {
		_, err := Read(hosttest.Open(t, irqbalanceTree(t, tt.give)))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Read(%v) error = %v, want one naming %q", tt.give, err, tt.want)
		}
		if err != nil && strings.Contains(tt.want, "CPU") && !errors.Is(err, cpuset.ErrSyntax) {
			t.Errorf("Read(%v) error = %v, want it to wrap cpuset.ErrSyntax", tt.give, err)
		}
	}
}

func TestIrqbalanceBanned(t *testing.T) {
	b := &Settings{BannedIRQs: []int{40, 284}, BannedModules: []string{"mlx5"}, BannedCPUs: cpuset.Range(16, 31)}
	tests := []struct {
		irq          int
		driver, name string
		want         string
	}{
		{irq: 284, want: "--banirq=284"},
		{irq: 285, driver: "mlx5_core", want: "--banmod=mlx5"},
		{irq: 286, name: "mlx5_comp2@pci:0000:98:00.0", want: "--banmod=mlx5"},
		{irq: 120, driver: "ice", name: "ice-ens1f0-TxRx-0", want: ""},
	}
	for _, tt := range tests {
		ok, why := b.IRQBanned(tt.irq, tt.driver, tt.name)
		if ok != (tt.want != "") || why != tt.want {
			t.Errorf("IRQBanned(%d, %q, %q) = %v, %q, want %q", tt.irq, tt.driver, tt.name, ok, why, tt.want)
		}
	}
	var none *Settings
	if ok, _ := none.IRQBanned(284, "", ""); ok {
		t.Error("nil Irqbalance bans IRQ 284")
	}
	for _, c := range []struct {
		give cpuset.Set
		want bool
	}{{cpuset.New(16, 17), true}, {cpuset.New(15, 16), false}, {cpuset.Set{}, false}} {
		if got := b.CPUsBanned(c.give); got != c.want {
			t.Errorf("CPUsBanned(%s) = %v, want %v", c.give, got, c.want)
		}
	}
}

func TestBanConfig(t *testing.T) {
	tests := []struct {
		name string
		b    *Settings
		irqs []int
		cpus cpuset.Set
		want []string
	}{
		{
			name: "nothing known",
			irqs: []int{285, 284, 284},
			want: []string{
				"# in /etc/default/irqbalance (Debian, Ubuntu) or /etc/sysconfig/irqbalance (RHEL, Fedora, SUSE), then: systemctl restart irqbalance",
				`IRQBALANCE_ARGS="--banirq=284 --banirq=285"`,
			},
		},
		{
			name: "keeps existing args and banned CPUs",
			b: &Settings{ConfigFile: "/etc/sysconfig/irqbalance", ConfigArgs: []string{"--banirq=284", "-j"},
				BannedIRQs: []int{284}, BannedCPUs: cpuset.New(10, 11), BannedCPUsFrom: "isolated and nohz_full CPUs"},
			irqs: []int{284, 285},
			cpus: cpuset.New(2, 3),
			want: []string{
				"# in /etc/sysconfig/irqbalance, then: systemctl restart irqbalance",
				`IRQBALANCE_ARGS="--banirq=284 -j --banirq=285"`,
				"IRQBALANCE_BANNED_CPULIST=2-3,10-11",
			},
		},
		{
			name: "mask variable must go",
			b:    &Settings{ConfigFile: "/etc/default/irqbalance", BannedCPUs: cpuset.New(8), BannedCPUsFrom: EnvBannedCPUs},
			cpus: cpuset.New(9),
			want: []string{
				"# in /etc/default/irqbalance, then: systemctl restart irqbalance",
				"# and remove IRQBALANCE_BANNED_CPUS: it overrides IRQBALANCE_BANNED_CPULIST",
				"IRQBALANCE_BANNED_CPULIST=8-9",
			},
		},
	}
	for _, tt := range tests {
		got := tt.b.BanConfig(tt.irqs, tt.cpus)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: BanConfig (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestReadIrqbalanceLive reads the live host: the irqbalance processes it
// reports are exactly those /proc names irqbalance, and a running one's
// arguments are its command line. It skips where no irqbalance runs.
func TestReadIrqbalanceLive(t *testing.T) {
	pids, err := proc.FindByComm(hosttest.Open(t, "/"), "irqbalance")
	if err != nil {
		t.Skipf("no live /proc: %v", err)
	}
	if len(pids) == 0 {
		t.Skip("no irqbalance runs on this host")
	}
	b, err := Read(hosttest.Open(t, "/"))
	if err != nil {
		t.Fatal(err)
	}
	if !unknown.Is(b.Running, true) || !slices.Equal(b.PIDs, pids) {
		t.Errorf("Read(/) Running %s PIDs %v, want true %v", b.Running, b.PIDs, pids)
	}
	argv, err := readNulList(hosttest.Open(t, "/"), filepath.Join("/proc", strconv.Itoa(pids[0]), "cmdline"))
	if err != nil {
		t.Skipf("irqbalance exited: %v", err)
	}
	if diff := cmp.Diff(argv[1:], b.Args, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Args (-cmdline +got):\n%s", diff)
	}
}
