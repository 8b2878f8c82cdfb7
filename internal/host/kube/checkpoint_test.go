package kube

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Checkpoints as the kubelet writes them (json.Marshal of its structs,
// field order policyName, defaultCpuSet, entries, checksum; entries
// omitted when empty). The checksums are not verified.
const (
	ckV2Text   = `{"policyName":"static","defaultCpuSet":"0-1,4-7","entries":{"` + uidA + `":{"iperf3":"2-3"}},"checksum":1552716370}`
	ckV1Text   = `{"policyName":"static","defaultCpuSet":"0-1,4-7","entries":{"` + idA + `":"2-3"},"checksum":2419431239}`
	ckNoneText = `{"policyName":"none","defaultCpuSet":"","checksum":3242152201}`
)

// wantAB asks for both pods of the test node and their containers.
var wantAB = Want{UIDs: map[string]bool{uidA: true, uidB: true, "a": true}, IDs: map[string]bool{idA: true, idB: true, "a": true}}

func TestParseCheckpoint(t *testing.T) {
	tests := []struct {
		give           string
		want           Want
		layout, policy string
		def            cpuset.Set
		uid, name, id  string
		wantCPUs       cpuset.Set
		wantWhy        string // in the entry's Why
		wantOK         bool
		wantError      string // in the error; "" when it parses
	}{
		{give: ckV2Text, want: wantAB, layout: "v2", policy: "static", def: cpuset.New(0, 1, 4, 5, 6, 7), uid: uidA, name: "iperf3", wantCPUs: cpuset.New(2, 3), wantOK: true},
		{give: ckV2Text, want: wantAB, layout: "v2", policy: "static", def: cpuset.New(0, 1, 4, 5, 6, 7), uid: uidB, name: "app"},
		// An entry not asked for is not kept.
		{give: ckV2Text, want: Want{UIDs: map[string]bool{uidB: true}}, layout: "v2", policy: "static", def: cpuset.New(0, 1, 4, 5, 6, 7), uid: uidA, name: "iperf3"},
		{give: ckV1Text, want: wantAB, layout: "v1", policy: "static", def: cpuset.New(0, 1, 4, 5, 6, 7), id: idA, wantCPUs: cpuset.New(2, 3), wantOK: true},
		{give: ckV1Text, want: wantAB, layout: "v1", policy: "static", def: cpuset.New(0, 1, 4, 5, 6, 7), id: idB},
		{give: ckV1Text, want: Want{}, layout: "v1", policy: "static", def: cpuset.New(0, 1, 4, 5, 6, 7), id: idA},
		{give: ckNoneText, want: wantAB, layout: "v1", policy: "none", def: cpuset.Set{}, id: idA},
		// A malformed entry is that container's CPUs unknown, with why,
		// not the file's error; one not asked for is not parsed.
		{give: `{"policyName":"static","defaultCpuSet":"0-1","entries":{"a":{"b":"3-2"}},"checksum":1}`, want: wantAB,
			layout: "v2", policy: "static", def: cpuset.New(0, 1), uid: "a", name: "b", wantWhy: "range 3-2 runs backwards", wantOK: true},
		{give: `{"policyName":"static","defaultCpuSet":"0-1","entries":{"a":"0-2000000"},"checksum":1}`, want: wantAB,
			layout: "v1", policy: "static", def: cpuset.New(0, 1), id: "a", wantWhy: "id 2000000 above 1048575", wantOK: true},
		{give: `{"policyName":"static","defaultCpuSet":"0-1","entries":{"z":"0-2000000"},"checksum":1}`, want: wantAB,
			layout: "v1", policy: "static", def: cpuset.New(0, 1), id: "z"},
		// encoding/json's reading, as the kubelet's: keys without regard
		// to case or escapes, the last of a key winning, null unset,
		// two "entries" merged.
		{give: `{"POLICYNAME":"static","\u0064efaultCpuſet":"0","entries":{"a":"1"},"checKsum":1}`, want: wantAB,
			layout: "v1", policy: "static", def: cpuset.New(0), id: "a", wantCPUs: cpuset.New(1), wantOK: true},
		{give: `{"policyName":"x","policyName":"static","defaultCpuSet":"0","entries":{"a":"1","a":"2"},"entries":{"b":"3"}}`, want: wantAB,
			layout: "v1", policy: "static", def: cpuset.New(0), id: "a", wantCPUs: cpuset.New(2), wantOK: true},
		{give: `{"policyName":"static","defaultCpuSet":"0","entries":{"a":{"b":"1"}},"entries":null}`, want: wantAB,
			layout: "v2", policy: "static", def: cpuset.New(0), uid: "a", name: "b"},
		{give: `{"policyName":"static","defaultCpuSet":"0","entries":{"a":null,"` + idA + `":"1"}, "other":[{"x":"}"}]}`, want: wantAB,
			layout: "v1", policy: "static", def: cpuset.New(0), id: idA, wantCPUs: cpuset.New(1), wantOK: true},
		{give: `{"policyName":"static","defaultCpuSet":"0-1,","checksum":1}`, wantError: `defaultCpuSet: cpu list "0-1,": empty element`},
		{give: `{"defaultCpuSet":"0-1","checksum":1}`, wantError: "no policyName"},
		{give: `{"policyName":null,"defaultCpuSet":"0-1"}`, wantError: "no policyName"},
		{give: `null`, wantError: "no policyName"},
		{give: `{"policyName":"static","checksum":1}`, wantError: "no defaultCpuSet"},
		{give: `{"policyName":"static","defaultCpuSet":"0","entries":{"a":7},"checksum":1}`, wantError: `entries["a"]: a JSON number, neither a CPU list (v1) nor a map of containers (v2)`},
		{give: `{"policyName":"static","defaultCpuSet":"0","entries":{"a":"1","b":{"c":"2"}}}`, wantError: "entries mix CPU lists (v1) and maps of containers (v2)"},
		{give: `{"policyName":"static","defaultCpuSet":"0","entries":{"zz":{"c":[2]}}}`, wantError: `v2: entries["zz"]["c"]: a JSON array, not a CPU list`},
		{give: `{"policyName":"static","defaultCpuSet":"0","entries":[]}`, wantError: "entries: a JSON array, not an object"},
		{give: `{"policyName":7,"defaultCpuSet":"0"}`, wantError: "policyName: a JSON number, not a string"},
		{give: `{"policyName":"static","defaultCpuSet":"0","checksum":"1"}`, wantError: "checksum: a JSON string, not a number"},
		{give: `{"policyName":"static","defaultCpuSet":"0","checksum":1e3}`, wantError: "checksum 1e3 is not a uint64"},
		{give: `{"policyName":"static","defaultCpuSet":"0","checksum":-1}`, wantError: "checksum -1 is not a uint64"},
		{give: `["static"]`, wantError: "a JSON array, not an object"},
		{give: ckV2Text + `{}`, wantError: "invalid character '{' after top-level value"},
		{give: ckV2Text + `]`, wantError: "invalid character ']' after top-level value"},
		{give: ``, wantError: "unexpected end of JSON input"},
	}
	for _, tt := range tests {
		c, err := parseCheckpoint([]byte(tt.give), tt.want)
		if tt.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantError) {
				t.Errorf("parseCheckpoint(%q) = %+v, %v; want an error saying %q", tt.give, c, err, tt.wantError)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseCheckpoint(%q): %v", tt.give, err)
			continue
		}
		if c.Layout != tt.layout || c.Policy != tt.policy || !c.Default.Equal(tt.def) {
			t.Errorf("parseCheckpoint(%q) = %s %s %s, want %s %s %s", tt.give, c.Layout, c.Policy, c.Default, tt.layout, tt.policy, tt.def)
		}
		got, ok := c.CPUs(tt.uid, tt.name, tt.id)
		if ok != tt.wantOK || !got.CPUs.Or(cpuset.Set{}).Equal(tt.wantCPUs) || (tt.wantWhy == "") != (got.CPUs.Why().Detail == "") || !strings.Contains(got.CPUs.Why().Detail, tt.wantWhy) {
			t.Errorf("parseCheckpoint(%q).CPUs(%q, %q, %q) = %+v, %v; want %s why %q, %v", tt.give, tt.uid, tt.name, tt.id, got, ok, tt.wantCPUs, tt.wantWhy, tt.wantOK)
		}
	}
}

// The checkpoint's structs as the kubelet's encoding/json reads them:
// the reference ParseCheckpoint is held to.
type refV1 struct {
	PolicyName    *string           `json:"policyName"`
	DefaultCPUSet *string           `json:"defaultCpuSet"`
	Entries       map[string]string `json:"entries"`
	Checksum      uint64            `json:"checksum"`
}

type refV2 struct {
	PolicyName    *string                      `json:"policyName"`
	DefaultCPUSet *string                      `json:"defaultCpuSet"`
	Entries       map[string]map[string]string `json:"entries"`
	Checksum      uint64                       `json:"checksum"`
}

// refParse reads b as the kubelet does, v1 first: the layout, the policy,
// the default set and every entry's CPU list; ok false when neither
// layout reads or the header does not.
func refParse(b []byte) (layout, policy, def string, v1 map[string]string, v2 map[string]map[string]string, ok bool) {
	if !json.Valid(b) {
		return
	}
	var r1 refV1
	var r2 refV2
	var p, d *string
	switch {
	case json.Unmarshal(b, &r1) == nil:
		layout, p, d, v1 = "v1", r1.PolicyName, r1.DefaultCPUSet, r1.Entries
	case json.Unmarshal(b, &r2) == nil:
		layout, p, d, v2 = "v2", r2.PolicyName, r2.DefaultCPUSet, r2.Entries
	default:
		return
	}
	if p == nil || *p == "" || d == nil {
		return
	}
	if _, err := parseCPUs(*d); err != nil {
		return
	}
	return layout, *p, *d, v1, v2, true
}

// FuzzParseCheckpoint: any input parses or is an error, never a panic,
// and exactly as encoding/json reads the kubelet's structs (refParse):
// an error where it fails, else its layout, policy and default set, and
// asked for all its keys, each of its entries, parsed.
func FuzzParseCheckpoint(f *testing.F) {
	for _, s := range []string{ckV1Text, ckV2Text, ckNoneText, `{"policyName":"x","defaultCpuSet":"0-1","entries":{}}`,
		`{"PolicyName":"x","defaultCpuSet":"0","entries":{"a":{"b":null,"c":"1"},"d":null},"checksum":null,"x":[1,{"y":"]"}]}`,
		`{"policyName":"\u00e9\ud800","defaultCpuSet":"0","entries":{"\u0061":"1","a\\b":"2","\xff":"3"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		layout, policy, def, v1, v2, ok := refParse(b)
		want := Want{UIDs: map[string]bool{}, IDs: map[string]bool{}}
		for k := range v1 {
			want.IDs[k] = true
		}
		for k := range v2 {
			want.UIDs[k] = true
		}
		c, err := parseCheckpoint(b, want)
		if !ok {
			if err == nil {
				t.Fatalf("parseCheckpoint(%q) = %+v; encoding/json reads no checkpoint", b, c)
			}
			return
		}
		if err != nil {
			t.Fatalf("parseCheckpoint(%q): %v; encoding/json reads %s", b, err, layout)
		}
		if d, _ := parseCPUs(def); c.Layout != layout || c.Policy != policy || !c.Default.Equal(d) {
			t.Fatalf("parseCheckpoint(%q) = %s %q %s, want %s %q %s", b, c.Layout, c.Policy, c.Default, layout, policy, d)
		}
		wantV1 := map[string]Entry{}
		for k, s := range v1 {
			wantV1[k] = entry(s)
		}
		wantV2 := map[string]map[string]Entry{}
		for k, ctrs := range v2 {
			m := map[string]Entry{}
			for name, s := range ctrs {
				m[name] = entry(s)
			}
			wantV2[k] = m
		}
		opt := cmp.Comparer(func(x, y unknown.Value[cpuset.Set]) bool {
			a, aok := x.Get()
			b, bok := y.Get()
			return aok == bok && a.Equal(b) && x.Why() == y.Why()
		})
		if layout == "v1" && !cmp.Equal(wantV1, c.ByID, opt) {
			t.Fatalf("parseCheckpoint(%q).ByID = %v, want %v", b, c.ByID, wantV1)
		}
		if layout == "v2" && !cmp.Equal(wantV2, c.ByPod, opt) {
			t.Fatalf("parseCheckpoint(%q).ByPod = %v, want %v", b, c.ByPod, wantV2)
		}
	})
}

// TestParseCheckpointCost: a 300,000-entry checkpoint of 15 MB, one pod
// asked, is read in a handful of allocations (what the pod's entry
// needs), where decoding it whole took 3.9 million (460 MB, see
// BenchmarkParseCheckpoint).
func TestParseCheckpointCost(t *testing.T) {
	ck := bigCheckpoint(300000)
	want := Want{UIDs: map[string]bool{uidN(123456): true}, IDs: map[string]bool{}}
	var c *Checkpoint
	allocs := testing.AllocsPerRun(1, func() {
		var err error
		if c, err = parseCheckpoint(ck, want); err != nil {
			t.Fatal(err)
		}
	})
	if e, ok := c.CPUs(uidN(123456), "c", ""); !ok || !e.CPUs.Or(cpuset.Set{}).Equal(cpuset.New(2+123456%62)) || len(c.ByPod) != 1 {
		t.Errorf("pod %s: %+v, %v; %d pods kept, want CPU %d, one pod", uidN(123456), e, ok, len(c.ByPod), 2+123456%62)
	}
	if allocs > 30 {
		t.Errorf("ParseCheckpoint of %d bytes, one pod asked: %.0f allocations, want at most 30", len(ck), allocs)
	}
}
