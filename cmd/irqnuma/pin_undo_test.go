package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// These tests hold that a pin can always be undone: it saves each file
// once, never saves a value restore would refuse, and restore puts back
// every value it can.

// stateEntries returns the paths a state file saved, in order.
func stateEntries(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Entries []struct {
			Path string `json:"path"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range s.Entries {
		out = append(out, e.Path)
	}
	return out
}

// TestPinNICTwice: irq pin eth0 eth0 is irq pin eth0, and irq restore
// then leaves every affinity as it was.
func TestPinNICTwice(t *testing.T) {
	t.Parallel()
	once, twice := hosttest.Copy(t, "seed"), hosttest.Copy(t, "seed")
	before := hosttest.Files(t, twice)
	out1, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", once, "-o", "json", "irq", "pin", "eth0", "--xps")
	if code != 0 {
		t.Fatalf("pin eth0: exit %d: %s", code, stderr)
	}
	out2, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", twice, "-o", "json", "irq", "pin", "eth0", "eth0", "--xps")
	if code != 0 {
		t.Fatalf("pin eth0 eth0: exit %d: %s", code, stderr)
	}
	d1, d2 := decodePin(t, out1), decodePin(t, out2)
	if diff := cmp.Diff(d1.results(), d2.results()); diff != "" {
		t.Errorf("pin eth0 eth0 differs from pin eth0 (-once +twice):\n%s", diff)
	}
	paths := stateEntries(t, d2.StateFile)
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			t.Errorf("state file saves %s twice", p)
		}
		seen[p] = true
	}
	if _, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", twice, "irq", "restore"); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, stderr)
	}
	if diff := cmp.Diff(before, hosttest.Files(t, twice)); diff != "" {
		t.Errorf("files after pin eth0 eth0 and restore (-before +after):\n%s", diff)
	}
}

// TestPinRefusesUnrestorable: a current value restore could not put
// back stops the pin before any write, naming the IRQ and the value.
func TestPinRefusesUnrestorable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		plant func(root string)
		want  []string
	}{
		{"list beyond the host", func(root string) {
			write(t, root, "proc/irq/284/smp_affinity_list", "0-1048575\n")
		}, []string{"IRQ 284", `"0-1048575"`, "do not exist on this host"}},
		{"mask of 10,000 groups", func(root string) {
			if err := os.Remove(filepath.Join(root, "proc/irq/285/smp_affinity_list")); err != nil {
				t.Fatal(err)
			}
			write(t, root, "proc/irq/285/smp_affinity", strings.Repeat("ffffffff,", 9999)+"ffffffff\n")
		}, []string{"IRQ 285", `"ffffffff,ffffffff,`, "do not exist on this host"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := hosttest.Copy(t, "seed")
			tt.plant(root)
			before := hosttest.Files(t, root)
			_, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", root, "irq", "pin", "eth0")
			if code != 1 {
				t.Errorf("exit %d, want 1: %s", code, stderr)
			}
			for _, s := range append(tt.want, "nothing was written") {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, stderr)
				}
			}
			if len(stderr) > 2000 {
				t.Errorf("stderr of %d bytes: the value is quoted whole", len(stderr))
			}
			if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
			if ents, _ := os.ReadDir(filepath.Join(root, "var/lib/irqnuma")); len(ents) != 1 || ents[0].Name() != "lock" {
				t.Errorf("state folder holds %v, want only the lock", ents)
			}
		})
	}
}

// TestRestoreEveryValidEntry: a state file with a value restore cannot
// write still has its other values put back; restore names the bad one,
// exits 1 and keeps the file.
func TestRestoreEveryValidEntry(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	before := hosttest.Files(t, root)
	stdout, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", root, "-o", "json", "irq", "pin", "eth0")
	if code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	state := decodePin(t, stdout).StateFile
	raw, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(raw), `"value": "53"`, `"value": "53-"`, 1)
	if bad == string(raw) {
		t.Fatalf(`no "value": "53" in %s`, raw)
	}
	if err := os.WriteFile(state, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runCLISys(t, pinSys(nil, 0), "--root", root, "irq", "restore")
	if code != 1 {
		t.Errorf("restore: exit %d, want 1: %s", code, stderr)
	}
	for _, s := range []string{"failed: IRQ 286", `value "53-"`, "restored 14 of 15 values; 1 could not be written", "is kept"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr does not say %q:\n%s", s, stderr)
		}
	}
	after := hosttest.Files(t, root)
	for p, v := range before {
		if strings.HasPrefix(p, "/proc/irq/286/") {
			continue
		}
		if after[p] != v {
			t.Errorf("%s = %q after restore, want %q", p, after[p], v)
		}
	}
	if _, err := os.Stat(state); err != nil {
		t.Errorf("state file not kept: %v", err)
	}
}

// TestRestoreAllGone: a state file whose IRQs have all vanished is
// reported, IRQ by IRQ, and retired, so the next restore does not find
// it again.
func TestRestoreAllGone(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	stdout, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", root, "-o", "json", "irq", "pin", "eth0")
	if code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	state := decodePin(t, stdout).StateFile
	paths := stateEntries(t, state)
	for _, p := range paths {
		if err := os.RemoveAll(filepath.Join(root, filepath.Dir(p))); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, code = runCLISys(t, pinSys(nil, 0), "--root", root, "-o", "json", "irq", "restore")
	if code != 1 {
		t.Errorf("restore: exit %d, want 1: %s", code, stderr)
	}
	for _, s := range []string{"gone: IRQ 284", "gone: IRQ 299", "restored 0 of 15 values", "15 are gone", "renamed to " + state + ".restored"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr does not say %q:\n%s", s, stderr)
		}
	}
	if n := len(decodePin(t, stdout).Plan); n != len(paths) {
		t.Errorf("%d rows, want one per saved value (%d)", n, len(paths))
	}
	if _, err := os.Stat(state + ".restored"); err != nil {
		t.Errorf("state file not retired: %v", err)
	}
	if _, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", root, "irq", "restore"); code != 1 || !strings.Contains(stderr, "no state file") {
		t.Errorf("second restore: exit %d: %s", code, stderr)
	}
}
