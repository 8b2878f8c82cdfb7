package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestMaskCgroup: on offline-2node (node 1 = 8,10-15, 10-11 isolated,
// 9 offline), --cgroup alone offers the group's CPUs, isolated ones
// kept; with --node it keeps the node's CPUs inside the group, isolated
// ones dropped as usual; a group the root lacks and one without cpuset
// files are usage errors naming them.
func TestMaskCgroup(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "offline-2node")
	put(t, root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
	put(t, root, "sys/fs/cgroup/bench/cgroup.procs", "")
	put(t, root, "sys/fs/cgroup/bench/cpuset.cpus.effective", "7-11\n")
	put(t, root, "sys/fs/cgroup/bench/cpuset.mems.effective", "0-1\n")
	put(t, root, "sys/fs/cgroup/plain/cgroup.procs", "")
	tests := []struct {
		give     []string
		want     string
		wantCode int
		wantErr  string
	}{
		{[]string{"--cgroup", "/bench"}, "7-8,10-11\n", 0, ""},
		{[]string{"--cgroup", "/sys/fs/cgroup/bench", "--count", "2"}, "7-8\n", 0, ""},
		{[]string{"--node", "1", "--cgroup", "bench"}, "8\n", 0, ""},
		{[]string{"--cpus", "10-14", "--cgroup", "/bench", "--format", "cgroup"}, "10-11\n", 0, ""},
		{[]string{"--cgroup", "/gone"}, "", 2, "--cgroup: /gone: no such cgroup"},
		{[]string{"--cgroup", "/plain"}, "", 2, "--cgroup /plain: its CPUs are unknown: no " + root + "/sys/fs/cgroup/plain/cpuset.cpus.effective"},
		{[]string{"--cgroup", "/a/../b"}, "", 2, `".." is not a group`},
		{[]string{"--cgroup", "/bench", "--exclude-irq-cpus"}, "", 2, "--exclude-irq-cpus needs --nic"},
	}
	for _, tt := range tests {
		out, errOut, code := runCLI(t, append([]string{"--root", root, "mask"}, tt.give...)...)
		if out != tt.want || code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) {
			t.Errorf("mask %s = %q, %q, exit %d; want %q, exit %d, stderr with %q", strings.Join(tt.give, " "), out, errOut, code, tt.want, tt.wantCode, tt.wantErr)
		}
	}
	out, _, code := runCLI(t, "--root", root, "mask", "--node", "1", "--cgroup", "/bench", "-o", "json")
	var doc struct {
		Source string `json:"source"`
		Drops  []struct {
			Reason string `json:"reason"`
			CPUs   string `json:"cpus"`
		} `json:"drops"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("mask -o json: %v, exit %d: %s", err, code, out)
	}
	if !strings.Contains(out, `"outside"`) || !strings.Contains(out, "12-15") {
		t.Errorf("mask --node 1 --cgroup /bench -o json = %s; want the group's drop (outside: 12-15)", out)
	}
}
