package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/safetext"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
	"github.com/irqnuma/irqnuma/internal/testsupport/schematest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestJSONSchemas: every command's -o json, on every tree under
// testdata/hosts (the generated ones, the sosreport, the seed with its
// recorded steering and the lab's kernel-written snapshots) and (but
// with -short) every real capture and the live host, validates
// against the schema it names under docs/schema, and names the one its
// command writes; so do the JSON golden files and a state file.
func TestJSONSchemas(t *testing.T) {
	set := schematest.Load(t)
	roots := map[string]string{}
	for _, name := range hosttest.Names() {
		roots[name] = hosttest.Root(name)
	}
	roots["sos-ice"], roots["seed-steer"] = hosttest.Root("sos-ice"), seedWithSteering(t)
	for _, name := range labHosts(t) {
		roots[name] = labSnapshot(t, name)
	}
	capture := map[string]bool{}
	if !testing.Short() {
		for _, c := range realhosts.MustCaptures(t) {
			roots[c.Name], capture[c.Name] = realhosts.Root(t, c), true
		}
		if _, err := os.Stat("/proc/interrupts"); err == nil {
			roots["live"] = "/" // every command here only reads (pin and bench --dry-run)
		}
	}
	for name, root := range roots {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			check := func(want string, args ...string) []byte {
				t.Helper()
				stdout, stderr, code := runCLI(t, append([]string{"--root", root, "-o", "json"}, args...)...)
				if code == 2 || stdout == "" && code != 1 { // 1: a pick that found nothing
					t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
				}
				if stdout == "" {
					return nil
				}
				if got := set.Validate(t, name+": "+strings.Join(args, " "), []byte(stdout)); got != want {
					t.Errorf("%s: %s names schema %s, want %s", name, strings.Join(args, " "), got, want)
				}
				return []byte(stdout)
			}
			topo := check("topology.v2", "topology")
			check("irq-list.v2", "irq", "list")
			check("irq-list.v2", "irq", "list", "--all")
			check("irq-list.v2", "irq", "list", "--steer")
			check("map.v2", "map")
			check("audit.v2", "audit", "--fail-on", "never")
			var doc struct {
				NICs []struct {
					Name string `json:"name"`
				} `json:"nics"`
			}
			if err := json.Unmarshal(topo, &doc); err != nil {
				t.Fatal(err)
			}
			if capture[name] && len(doc.NICs) > 1 {
				// A capture's NICs are alike (dell-2numa has 15): the
				// per-NIC documents of one say what all would.
				doc.NICs = doc.NICs[:1]
			}
			for _, n := range doc.NICs {
				check("zc.v2", "zc", "check", n.Name)
				check("mask.v2", "mask", "--nic", n.Name)
				check("pin.v2", "irq", "pin", "--dry-run", n.Name)
				check("bench.v2", "bench", "--dry-run", "--nic", n.Name, "--", "iperf3", "-c", "192.0.2.1", "-J")
			}
		})
	}
}

// TestJSONGoldenSchemas: every JSON golden file, a document or JSON lines
// of them, validates against the schema it names.
func TestJSONGoldenSchemas(t *testing.T) {
	set := schematest.Load(t)
	n := 0
	for _, dir := range []string{filepath.Join(moduleRoot(t), "testdata", "golden"), "testdata"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			switch filepath.Ext(p) {
			case ".json":
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if !strings.Contains(string(b[:min(len(b), 64)]), `"schema"`) {
					return nil // a recorded reply or a fixture, not a document irqnuma wrote
				}
				set.Validate(t, p, b)
				n++
			case ".jsonl":
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
					set.Validate(t, p+":"+strconv.Itoa(i+1), []byte(line))
					n++
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 50 {
		t.Errorf("validated %d golden documents, want the 50 and more testdata holds", n)
	}
}

// TestStateFileSchema: the state file a pin saves validates as a state.
func TestStateFileSchema(t *testing.T) {
	set := schematest.Load(t)
	root := hosttest.Copy(t, "seed")
	stdout, stderr, code := runCLISys(t, pinSys(nil, 0), "--root", root, "-o", "json", "irq", "pin", "eth0")
	if code != 0 {
		t.Fatalf("pin: exit %d: %s", code, stderr)
	}
	set.Validate(t, "irq pin", []byte(stdout))
	raw, err := os.ReadFile(decodePin(t, stdout).StateFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Validate(t, "state file", raw); got != "state.v4" {
		t.Errorf("state file names %s, want state.v4", got)
	}
}

// TestSchemasClosed: a field added to a document without its schema
// fails validation. Every object a schema describes lists its members
// and admits no other (additionalProperties false), and a new member,
// at the top of a document or deep in it, is refused.
func TestSchemasClosed(t *testing.T) {
	set := schematest.Load(t)
	for name, raw := range set.Raw {
		var walk func(where string, v any)
		walk = func(where string, v any) {
			switch x := v.(type) {
			case map[string]any:
				// An if's properties test members, they describe none.
				if _, ok := x["properties"]; ok && !strings.HasSuffix(where, "/if") && x["additionalProperties"] != false {
					t.Errorf("%s: %s lists properties but admits others: want additionalProperties false", name, where)
				}
				for k, c := range x {
					walk(where+"/"+k, c)
				}
			case []any:
				for i, c := range x {
					walk(where+"/"+strconv.Itoa(i), c)
				}
			}
		}
		walk("#", raw)
		// The reasons a schema admits are unknown's kinds, all of them.
		var kinds []string
		if r, ok := raw.(map[string]any)["$defs"].(map[string]any)["reason"].(map[string]any); ok {
			for _, k := range r["properties"].(map[string]any)["reason"].(map[string]any)["enum"].([]any) {
				kinds = append(kinds, k.(string))
			}
		}
		var want []string
		for _, k := range unknown.Kinds {
			want = append(want, string(k))
		}
		if diff := cmp.Diff(want, kinds); diff != "" {
			t.Errorf("%s: $defs/reason's kinds are not unknown.Kinds (-Kinds +schema):\n%s", name, diff)
		}
	}
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "testdata", "golden", "topology", "seed.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Check(b); err != nil {
		t.Fatalf("the seed's topology does not validate: %v", err)
	}
	for _, where := range []string{"top", "nic", "cpu"} {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		switch where {
		case "top":
			m["added_field"] = 1
		case "nic":
			m["nics"].([]any)[0].(map[string]any)["added_field"] = 1
		case "cpu":
			m["cpus"].([]any)[0].(map[string]any)["added_field"] = 1
		}
		nb, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := set.Check(nb); err == nil {
			t.Errorf("a field added to the topology's %s validates: the schema must refuse it", where)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["version"] = 1
	nb, _ := json.Marshal(m)
	if _, err := set.Check(nb); err == nil {
		t.Error("a topology of version 1 validates against version 2's schema")
	}
}

// TestSteerReadingRoundTrip: a NIC's steering reading in topology -o json
// decodes into steer.NIC and encodes to the same bytes, its unknowns'
// reasons included (the lab compares a guest's CLI reading with its
// steer.Read this way).
func TestSteerReadingRoundTrip(t *testing.T) {
	for _, root := range []string{hosttest.Root("sos-ice"), seedWithSteering(t)} {
		stdout, stderr, code := runCLI(t, "--root", root, "-o", "json", "topology")
		if code != 0 {
			t.Fatalf("topology: exit %d: %s", code, stderr)
		}
		var doc struct {
			Steer struct {
				NICs []struct {
					Reading json.RawMessage `json:"reading"`
				} `json:"nics"`
			} `json:"steer"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Steer.NICs) == 0 {
			t.Fatalf("%s: no steering in topology -o json", root)
		}
		for _, n := range doc.Steer.NICs {
			var nic steer.NIC
			if err := json.Unmarshal(n.Reading, &nic); err != nil {
				t.Fatal(err)
			}
			back, err := json.Marshal(nic)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := json.Compact(&want, n.Reading); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), string(safetext.JSON(back))); diff != "" {
				t.Errorf("%s: %s's reading after a round trip (-topology +decoded):\n%s", root, nic.Name, diff)
			}
		}
	}
}
