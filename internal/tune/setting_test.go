package tune

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestParseSetting: exactly the setting paths a tune writes are taken.
func TestParseSetting(t *testing.T) {
	good := map[string]SettingKind{
		"/sys/class/net/eth0/queues/rx-3/rps_cpus":                SettingKindRPS,
		"/sys/class/net/eth0/napi_defer_hard_irqs":                SettingKindDeferHardIRQs,
		"/sys/class/net/ens1f0np0/gro_flush_timeout":              SettingKindGROFlushTimeout,
		"/sys/devices/system/cpu/cpu127/cpufreq/scaling_governor": SettingKindGovernor,
	}
	for p, kind := range good {
		got, err := parseSetting(p)
		if err != nil || got.Kind != kind {
			t.Errorf("parseSetting(%q) = %v, %v; want %s", p, got.Kind, err, kind)
		}
	}
	for _, p := range []string{
		"", "sys/class/net/eth0/threaded", "/sys/class/net/eth0/threaded", "/sys/class/net/eth0/mtu",
		"/sys/class/net/eth0/queues/tx-3/rps_cpus", "/sys/class/net/eth0/queues/rx-03/rps_cpus",
		"/sys/class/net/eth0/queues/rx-3/rps_flow_cnt", "/sys/class/net/../queues/rx-0/rps_cpus",
		"/sys/class/net/eth0/../eth1/gro_flush_timeout", "/sys/devices/system/cpu/cpu01/cpufreq/scaling_governor",
		"/sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "/sys/devices/system/cpu/cpu1/cpufreq/scaling_max_freq",
		"/proc/irq/5/smp_affinity_list", "/sys/class/net/a:b/gro_flush_timeout",
	} {
		if _, err := parseSetting(p); !errors.Is(err, errSettingPath) {
			t.Errorf("parseSetting(%q) = %v, want errSettingPath", p, err)
		}
	}
}

// TestSettingValues: each file's form is checked before a write is
// planned or a saved value restored.
func TestSettingValues(t *testing.T) {
	possible := cpuset.New(0, 1, 2, 3)
	cases := []struct {
		path, value string
		ok          bool
	}{
		{"/sys/class/net/eth0/queues/rx-0/rps_cpus", "0000000f", true},
		{"/sys/class/net/eth0/queues/rx-0/rps_cpus", "00000000", true},
		{"/sys/class/net/eth0/queues/rx-0/rps_cpus", "000000ff", false}, // CPUs 4-7 do not exist
		{"/sys/class/net/eth0/queues/rx-0/rps_cpus", "0-3", false},
		{"/sys/class/net/eth0/napi_defer_hard_irqs", "2147483647", true},
		{"/sys/class/net/eth0/napi_defer_hard_irqs", "2147483648", false},
		{"/sys/class/net/eth0/napi_defer_hard_irqs", "-1", false},
		{"/sys/class/net/eth0/gro_flush_timeout", "18446744073709551615", true},
		{"/sys/class/net/eth0/gro_flush_timeout", "1e6", false},
		{"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance", true},
		{"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "perf ormance", false},
		{"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "a-governor-too-long", false},
		{"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "", false},
	}
	for _, c := range cases {
		tg, err := parseSetting(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := tg.checkValue(c.value, possible, true); (err == nil) != c.ok {
			t.Errorf("%s = %q: %v, want ok %v", c.path, c.value, err, c.ok)
		}
	}
}

// TestStateSettingsTampered: a state file whose settings name a path a
// tune never writes, repeat a path, carry a value the file cannot take,
// raw bytes that do not say the value, or come in a version before 4 is
// refused whole.
func TestStateSettingsTampered(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	fsys := hosttest.Open(t, root)
	st, err := newState(fsys, time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	gov := "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
	st.Version = stateVersionTune
	st.Settings = []savedSetting{{Path: gov, Value: "schedutil"}}
	path := filepath.Join(root, "state.json")
	if err := st.Save(fsys, path); err != nil {
		t.Fatal(err)
	}
	if _, err := loadState(fsys, path); err != nil {
		t.Fatalf("a good state: %v", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	setting := func(p, v string) []any { return []any{map[string]any{"path": p, "value": v}} }
	for _, c := range []struct{ name, doc, want string }{
		{"path", edit(func(m map[string]any) { m["settings"] = setting("/etc/passwd", "x") }), "not a setting"},
		{"twice", edit(func(m map[string]any) {
			m["settings"] = append(setting(gov, "schedutil"), setting(gov, "performance")...)
		}), "appears twice"},
		{"value", edit(func(m map[string]any) { m["settings"] = setting(gov, "rm -rf /") }), "want a governor name"},
		{"raw", edit(func(m map[string]any) {
			m["settings"] = []any{map[string]any{"path": gov, "value": "schedutil", "raw": "powersave\n"}}
		}), "do not say"},
		{"version", edit(func(m map[string]any) { m["version"] = 3 }), "only version 4 has"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(root, c.name+".json")
			if err := os.WriteFile(p, []byte(c.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadState(fsys, p)
			if !errors.Is(err, ErrBadState) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("loadState = %v, want ErrBadState saying %q", err, c.want)
			}
		})
	}
}

// FuzzParseSetting: any path is taken or refused with errSettingPath,
// never a panic; a taken one names itself and is clean.
func FuzzParseSetting(f *testing.F) {
	for _, s := range []string{
		"/sys/class/net/eth0/queues/rx-3/rps_cpus", "/sys/class/net/eth0/gro_flush_timeout",
		"/sys/devices/system/cpu/cpu7/cpufreq/scaling_governor", "/sys/class/net/eth0/queues/rx-99999999999/rps_cpus", "//",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		tg, err := parseSetting(p)
		if err != nil {
			if !errors.Is(err, errSettingPath) {
				t.Fatalf("parseSetting(%q): %v", p, err)
			}
			return
		}
		if tg.Path != p || tg.name() == "" || filepath.Clean(p) != p {
			t.Fatalf("parseSetting(%q) = %+v", p, tg)
		}
	})
}
