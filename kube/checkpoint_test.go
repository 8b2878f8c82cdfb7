package kube

import (
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
)

// Checkpoints as the kubelet writes them (json.Marshal of its structs,
// field order policyName, defaultCpuSet, entries, checksum; entries
// omitted when empty). The checksums are not verified.
const (
	ckV2Text   = `{"policyName":"static","defaultCpuSet":"0-1,4-7","entries":{"` + uidA + `":{"iperf3":"2-3"}},"checksum":1552716370}`
	ckV1Text   = `{"policyName":"static","defaultCpuSet":"0-1,4-7","entries":{"` + idA + `":"2-3"},"checksum":2419431239}`
	ckNoneText = `{"policyName":"none","defaultCpuSet":"","checksum":3242152201}`
)

func TestParseCheckpoint(t *testing.T) {
	tests := []struct {
		give              string
		layout, policy    string
		def               cpuset.Set
		uid, name, id     string
		want              cpuset.Set
		wantOK, wantError bool
	}{
		{give: ckV2Text, layout: "v2", policy: "static", def: cpuset.New(0, 1, 4, 5, 6, 7), uid: uidA, name: "iperf3", want: cpuset.New(2, 3), wantOK: true},
		{give: ckV2Text, layout: "v2", policy: "static", def: cpuset.New(0, 1, 4, 5, 6, 7), uid: uidB, name: "app"},
		{give: ckV1Text, layout: "v1", policy: "static", def: cpuset.New(0, 1, 4, 5, 6, 7), id: idA, want: cpuset.New(2, 3), wantOK: true},
		{give: ckV1Text, layout: "v1", policy: "static", def: cpuset.New(0, 1, 4, 5, 6, 7), id: idB},
		{give: ckNoneText, layout: "v1", policy: "none", def: cpuset.Set{}, id: idA},
		{give: `{"policyName":"static","defaultCpuSet":"0-1","entries":{"a":{"b":"3-2"}},"checksum":1}`, wantError: true},
		{give: `{"policyName":"static","defaultCpuSet":"0-1,","checksum":1}`, wantError: true},
		{give: `{"defaultCpuSet":"0-1","checksum":1}`, wantError: true},
		{give: `{"policyName":"static","checksum":1}`, wantError: true},
		{give: `{"policyName":"static","defaultCpuSet":"0","entries":{"a":7},"checksum":1}`, wantError: true},
		{give: ckV2Text + `{}`, wantError: true},
		{give: ``, wantError: true},
	}
	for _, tt := range tests {
		c, err := ParseCheckpoint([]byte(tt.give))
		if tt.wantError {
			if err == nil {
				t.Errorf("ParseCheckpoint(%q) = %+v, want an error", tt.give, c)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseCheckpoint(%q): %v", tt.give, err)
			continue
		}
		if c.Layout != tt.layout || c.Policy != tt.policy || !c.Default.Equal(tt.def) {
			t.Errorf("ParseCheckpoint(%q) = %s %s %s, want %s %s %s", tt.give, c.Layout, c.Policy, c.Default, tt.layout, tt.policy, tt.def)
		}
		got, ok := c.CPUs(tt.uid, tt.name, tt.id)
		if ok != tt.wantOK || !got.Equal(tt.want) {
			t.Errorf("ParseCheckpoint(%q).CPUs(%q, %q, %q) = %s, %v; want %s, %v", tt.give, tt.uid, tt.name, tt.id, got, ok, tt.want, tt.wantOK)
		}
	}
}

// FuzzParseCheckpoint: any input parses or is an error, never a panic,
// and what parses holds only valid CPU sets in one layout.
func FuzzParseCheckpoint(f *testing.F) {
	for _, s := range []string{ckV1Text, ckV2Text, ckNoneText, `{"policyName":"x","defaultCpuSet":"0-1","entries":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCheckpoint(b)
		if err != nil {
			return
		}
		if (c.Layout == "v1") == (c.ByID == nil) || (c.Layout == "v2") == (c.ByPod == nil) || c.Policy == "" {
			t.Fatalf("ParseCheckpoint(%q) = %+v", b, c)
		}
		if _, err := cpuset.ParseList(c.Default.List()); err != nil && !c.Default.IsEmpty() {
			t.Fatalf("default %s does not round-trip: %v", c.Default, err)
		}
	})
}
