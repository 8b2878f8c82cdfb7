package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/judge/zc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestSnapshotLiveZC: zc check on a snapshot of this host says what it
// says live, prerequisite by prerequisite, no-xdp (the NIC's IFLA_XDP,
// from the host namespace's recorded links) included; the one exception
// is cap-net-admin, the capabilities of the process running the check,
// which a capture does not hold and says so. audit --zc rx finds the
// same, less that one unknown.
func TestSnapshotLiveZC(t *testing.T) {
	t.Parallel()
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("a live snapshot and steering reads need root")
	}
	if _, err := os.Stat("/sys/class/net/eth0/device"); err != nil {
		t.Skip("no eth0 with a device on this host")
	}
	file := snapshotOf(t, "/")
	for _, c := range [][]string{
		{"zc", "check", "eth0", "--queue", "1", "--port", "9000"},
		{"zc", "check", "eth0"},
		{"zc", "check", "eth0", "--send"},
	} {
		live, snap := zcCheckJSON(t, c), zcCheckJSON(t, append(c, "--root", file))
		if live.code != snap.code {
			t.Errorf("%s: exit %d live, %d on the snapshot", strings.Join(c, " "), live.code, snap.code)
		}
		if len(live.r.Prereqs) != len(snap.r.Prereqs) {
			t.Fatalf("%s: %d prerequisites live, %d on the snapshot", strings.Join(c, " "), len(live.r.Prereqs), len(snap.r.Prereqs))
		}
		for i, lp := range live.r.Prereqs {
			sp := snap.r.Prereqs[i]
			if lp.ID == zc.IDCapNetAdm {
				if sp.Status.Known() || !strings.HasPrefix(sp.Evidence, "not captured: ") {
					t.Errorf("%s: snapshot's %s %s (%q), want unknown: not captured", strings.Join(c, " "), sp.ID, sp.Status, sp.Evidence)
				}
				continue
			}
			lb, _ := json.Marshal(lp)
			sb, _ := json.Marshal(sp)
			if diff := cmp.Diff(string(lb), string(sb)); diff != "" {
				t.Errorf("%s: %s differs (-live +snapshot):\n%s", strings.Join(c, " "), lp.ID, diff)
			}
			if lp.ID == zc.IDXDP && !lp.Status.Known() {
				t.Errorf("%s: live %s %s (%q): want IFLA_XDP read", strings.Join(c, " "), lp.ID, lp.Status, lp.Evidence)
			}
		}
		if live.r.NIC != snap.r.NIC || live.r.Driver != snap.r.Driver {
			t.Errorf("%s: NIC %s (%s) live, %s (%s) on the snapshot", strings.Join(c, " "), live.r.NIC, live.r.Driver, snap.r.NIC, snap.r.Driver)
		}
	}
	args := []string{"audit", "--zc", "rx", "-o", "json", "--fail-on", "never"}
	live := zcFindings(t, args)
	snap := zcFindings(t, append(args, "--root", file))
	var rest []auditFinding
	for _, f := range snap {
		if f.Subject == string(zc.IDCapNetAdm) {
			continue
		}
		rest = append(rest, f)
	}
	var liveRest []auditFinding
	for _, f := range live {
		if f.Subject == string(zc.IDCapNetAdm) {
			t.Errorf("live audit --zc rx: a %s finding (%s) as root", f.Subject, f.Message)
			continue
		}
		liveRest = append(liveRest, f)
	}
	if diff := cmp.Diff(liveRest, rest); diff != "" {
		t.Errorf("audit --zc rx differs beyond cap-net-admin (-live +snapshot):\n%s", diff)
	}
	if len(rest) != len(snap)-1 {
		t.Errorf("snapshot audit --zc rx: %d cap-net-admin findings, want 1", len(snap)-len(rest))
	}
}

type zcRun struct {
	r    zc.Report
	code int
}

// zcCheckJSON runs zc check with -o json and decodes its report.
func zcCheckJSON(t *testing.T, args []string) zcRun {
	t.Helper()
	out, errOut, code := runCLI(t, append([]string{"-o", "json"}, args...)...)
	var r zc.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("irqnuma %s: exit %d, %v; stderr %q", strings.Join(args, " "), code, err, errOut)
	}
	return zcRun{r: r, code: code}
}

// zcFindings runs the audit with -o json and returns its findings.
func zcFindings(t *testing.T, args []string) []auditFinding {
	t.Helper()
	out, errOut, code := runCLI(t, args...)
	var doc auditDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("irqnuma %s: exit %d, %v; stderr %q", strings.Join(args, " "), code, err, errOut)
	}
	return doc.Findings
}
