package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The names of the JSON tests' hostileTree: a NIC, its driver and an IRQ
// holding C0 and C1 controls, DEL, the separators and bidi marks,
// embeddings, overrides and isolates, all valid UTF-8 so that JSON can
// carry them exactly. The NIC's name is one a pin writes the files of
// (15 bytes at most, no space, '/' or ':').
const (
	jsonNIC    = "e\x1b[1\u202eZ\u0085\x7f\u2066"
	jsonDriver = "mlx5\u202e_core\x1b[1m\u009b\x7f\u2067\u200e"
	jsonIRQ    = "rtc\x1b[2J\u009b0\u200f\u061c\u2028\u2029\u202a\u202b\u202c\u202d\u2068\u2069\a"
)

// jsonStrings returns every string of the JSON document doc, keys and
// values, failing the test when doc is not one JSON value.
func jsonStrings(t *testing.T, what, doc string) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, doc)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				out = append(out, k)
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// TestHostileNamesJSON: every -o json document, watch's JSON lines
// included, shows the host's names with no control or bidi rune raw,
// escaped as \uNNNN so that the document decodes to the names exactly.
func TestHostileNamesJSON(t *testing.T) {
	t.Parallel()
	root := hostileTree(t, jsonNIC, jsonDriver, jsonIRQ)
	tests := []struct {
		args  []string
		lines bool     // JSON lines, one document a line
		code  int      // the exit code: zc check's 3 when a prerequisite fails
		want  []string // the names the document must hold exactly
	}{
		{args: []string{"topology"}, want: []string{jsonNIC, jsonDriver}},
		{args: []string{"irq", "list", "--all"}, want: []string{jsonNIC, jsonIRQ}},
		{args: []string{"irq", "list", "--nic", jsonNIC}, want: []string{jsonNIC}},
		{args: []string{"audit", "--fail-on", "never"}, want: []string{jsonNIC}},
		{args: []string{"audit", "--zc", "rx", "--fail-on", "never"}, want: []string{jsonNIC, jsonDriver + " does not implement"}},
		{args: []string{"zc", "check", jsonNIC}, code: 3, want: []string{jsonNIC, jsonDriver}},
		{args: []string{"irq", "pin", jsonNIC, "--dry-run", "--xps"}, want: []string{jsonNIC}},
		{args: []string{"map"}, want: []string{jsonNIC, jsonDriver}},
		{args: []string{"mask", "--nic", jsonNIC}, want: []string{jsonNIC}},
		{args: []string{"watch", "--count", "2", "--interval", "10ms"}, lines: true, want: []string{jsonNIC}},
		{args: []string{"bench", "--dry-run", "--nic", jsonNIC, "--regexp", `(\d+)`, "--", "true"}, want: []string{jsonNIC, jsonDriver}},
	}
	for _, tt := range tests {
		stdout, stderr, code := runCLI(t, append([]string{"--root", root, "-o", "json"}, tt.args...)...)
		if code != tt.code {
			t.Errorf("%q: exit %d, stderr %q", tt.args, code, stderr)
			continue
		}
		checkJSON(t, fmt.Sprintf("%q", tt.args), stdout, tt.lines, tt.want)
	}
}

// TestHostileRecordedDriverJSON is the case: the driver name a
// recorded steering reading holds (ethtool's drvinfo, as a snapshot
// keeps it) reaches audit --zc's findings, zc check's report and the
// steering of irq list --steer, each escaped and exact.
func TestHostileRecordedDriverJSON(t *testing.T) {
	t.Parallel()
	root := seedWithSteering(t)
	const rel = "irqnuma/steer/eth0/ioctl.drvinfo"
	b := []byte(readTree(t, root, rel))
	drv := b[4 : 4+32] // struct ethtool_drvinfo: cmd, then driver[32]
	if string(drv[:len("mlx5_core\x00")]) != "mlx5_core\x00" {
		t.Fatalf("%s: driver %q, want mlx5_core", rel, drv)
	}
	clear(drv)
	copy(drv, jsonDriver)
	put(t, root, rel, string(b))
	tests := []struct {
		args []string
		code int // zc check exits 3 when a prerequisite fails
		want []string
	}{
		{[]string{"audit", "--zc", "rx", "--fail-on", "never"}, 0, []string{jsonDriver + " does not implement"}},
		{[]string{"zc", "check", "eth0"}, 3, []string{jsonDriver}},
		{[]string{"irq", "list", "--steer"}, 0, []string{jsonDriver}},
	}
	for _, tt := range tests {
		stdout, stderr, code := runCLI(t, append([]string{"--root", root, "-o", "json"}, tt.args...)...)
		if code != tt.code {
			t.Errorf("%q: exit %d, stderr %q", tt.args, code, stderr)
			continue
		}
		checkJSON(t, fmt.Sprintf("%q", tt.args), stdout, false, tt.want)
	}
}

// checkJSON checks the JSON document out (JSON lines when lines) holds
// no control or bidi rune raw, and holds each of want as a string, or
// inside one, exactly.
func checkJSON(t *testing.T, what, out string, lines bool, want []string) {
	t.Helper()
	if bad := rawTerminalBytes(out); bad != "" {
		t.Errorf("%s: the JSON holds a raw %s", what, bad)
	}
	docs := []string{out}
	if lines {
		docs = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	}
	var all []string
	for _, d := range docs {
		all = append(all, jsonStrings(t, what, d)...)
	}
	for _, w := range want {
		found := false
		for _, s := range all {
			if strings.Contains(s, w) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s: no string of the JSON holds %q:\n%s", what, w, out)
		}
	}
}

// TestHostileNamesStateFile: the state file a pin writes holds the NIC's
// name escaped, the pin's and restore's JSON too, and restore reads the
// file back to the files of the named NIC.
func TestHostileNamesStateFile(t *testing.T) {
	t.Parallel()
	root := hostileTree(t, jsonNIC, jsonDriver, jsonIRQ)
	ps := pinSys(nil, 0)
	xps := filepath.Join(root, "sys/class/net", jsonNIC, "queues/tx-0/xps_cpus")
	before, err := os.ReadFile(xps)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLISys(t, ps, "--root", root, "-o", "json", "irq", "pin", jsonNIC, "--xps")
	if code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	checkJSON(t, "irq pin", stdout, false, []string{jsonNIC})
	if pinned, err := os.ReadFile(xps); err != nil || string(pinned) == string(before) {
		t.Fatalf("pin left %s as %q, %v", xps, pinned, err)
	}
	state := decodePin(t, stdout).StateFile
	raw, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	checkJSON(t, "the state file", string(raw), false, []string{"/sys/class/net/" + jsonNIC + "/queues/tx-0/xps_cpus"})
	stdout, stderr, code = runCLISys(t, ps, "--root", root, "-o", "json", "irq", "restore", state)
	if code != 0 {
		t.Fatalf("restore: exit %d: %s", code, stderr)
	}
	checkJSON(t, "irq restore", stdout, false, []string{jsonNIC})
	if after, err := os.ReadFile(xps); err != nil || string(after) != string(before) {
		t.Errorf("restore left %s as %q, %v; want %q", xps, after, err, before)
	}
}
