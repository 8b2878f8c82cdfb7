package main

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestAuditNetnsLive: audit --pid of a process in a network namespace
// of its own, behind a macvlan on eth0 and behind a veth whose host end
// routes by the host's table, says it uses eth0 and how it was followed
// there, in text and JSON; a snapshot taken while it runs says the same.
func TestAuditNetnsLive(t *testing.T) {
	hosttest.Writes(t, "network namespaces and links (made for the test, removed after)")
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := os.Stat("/sys/class/net/eth0/device"); err != nil {
		t.Skip("this host has no NIC eth0")
	}
	for _, tt := range []struct {
		name string
		np   func() hosttest.NetnsProc
		how  func(hosttest.NetnsProc) string
	}{
		{"macvlan", func() hosttest.NetnsProc { return hosttest.MacvlanProc(t, "eth0") },
			func(np hosttest.NetnsProc) string { return "macvlan " + np.NsIface + " on the host's eth0" }},
		{"veth", func() hosttest.NetnsProc { return hosttest.VethProc(t) }, func(np hosttest.NetnsProc) string {
			return np.NsIface + " → host peer " + np.HostIface + " → route to 203.0.113.5 through eth0"
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			np := tt.np()
			pid := strconv.Itoa(np.PID)
			want := tt.how(np)
			live, errOut, code := runCLI(t, "audit", "-o", "json", "--fail-on", "never", "--pid", pid)
			if code != 0 {
				t.Fatalf("audit --pid %s: exit %d: %s", pid, code, errOut)
			}
			var doc auditDoc
			if err := json.Unmarshal([]byte(live), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Processes) != 1 {
				t.Fatalf("processes %+v", doc.Processes)
			}
			p := doc.Processes[0]
			if p.Attribution != "sockets" || !slices.Equal(p.NICs, []string{"eth0"}) || !strings.HasPrefix(p.Netns, "net:[") ||
				len(p.How) == 0 || !strings.Contains(p.How[0], want) {
				t.Errorf("audit --pid %s: %+v; want eth0 by its sockets, how saying %q", pid, p, want)
			}
			text, _, _ := runCLI(t, "audit", "--fail-on", "never", "--pid", pid)
			ns := strings.TrimSuffix(strings.TrimPrefix(p.Netns, "net:["), "]")
			if !strings.Contains(text, "in netns "+ns) || !strings.Contains(text, "on the host's eth0") && !strings.Contains(text, "host peer "+np.HostIface) {
				t.Errorf("audit --pid %s text does not say how:\n%s", pid, text)
			}
			file := snapshotOf(t, "/", "--pid", pid)
			got, errOut, code := runCLI(t, "audit", "-o", "json", "--fail-on", "never", "--pid", pid, "--root", file)
			if code != 0 {
				t.Fatalf("audit --pid on the snapshot: exit %d: %s", code, errOut)
			}
			var gotDoc auditDoc
			if err := json.Unmarshal([]byte(got), &gotDoc); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(doc.Processes, gotDoc.Processes); diff != "" {
				t.Errorf("attribution differs (-live +snapshot):\n%s", diff)
			}
			t.Logf("%s: %s %v %q", tt.name, p.Attribution, p.NICs, p.How)
		})
	}
}
