package audit

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// TestAuditJudgesUsedNICs: on a host with NICs on both nodes, a process
// on node 1 is judged only against the NICs it uses; when that is
// unknown, against --nic, else against none with one info finding.
func TestAuditJudgesUsedNICs(t *testing.T) {
	h, tb := loadHost(t, "offline-2node")
	p := &proc.Process{PID: 7, Comm: "iperf3", Allowed: cpuset.New(15),
		Threads: []proc.Thread{{TID: 7, Allowed: cpuset.New(15), LastCPU: unknown.Of(15)}}, NodeKB: map[int]uint64{1: 10}}
	noNIC := []nicuse.Use{{PID: 7, Comm: "iperf3", NICs: []string{}, Attribution: unknown.NotAs[nicuse.Attribution](unknown.KindNotApplicable, "it has no TCP or UDP sockets (yet)"), How: []string{"it has no TCP or UDP sockets (yet)"}}}
	anyNIC := []nicuse.Use{{PID: 7, Comm: "iperf3", NICs: []string{}, Attribution: unknown.Of(nicuse.AttributionAny), How: []string{"tcp *:5201 (listening): bound to every address"}}}
	tests := []struct {
		name   string
		nics   []string
		uses   []nicuse.Use
		want   []string // "check nic", process findings only
		judged []string
		by     string
	}{
		// Every node-1 core serves one of ens1f0's queue IRQs.
		{name: "uses its node's NIC", uses: usesOn("ens1f0", p), judged: []string{"ens1f0"}, by: "sockets",
			want: []string{"proc-irq-overlap ens1f0"}},
		{name: "uses the other node's NIC", uses: usesOn("eth1", p), judged: []string{"eth1"}, by: "sockets",
			want: []string{"proc-mem-remote eth1", "proc-remote eth1", "proc-remote eth1"}},
		{name: "unknown, no --nic", uses: noNIC, judged: []string{},
			want: []string{"proc-nic-unknown "}},
		{name: "not read at all, no --nic", judged: []string{}, want: []string{"proc-nic-unknown "}},
		{name: "any NIC, no --nic", uses: anyNIC, judged: []string{}, want: []string{"proc-nic-unknown "}},
		{name: "unknown, --nic eth1", nics: []string{"eth1"}, uses: noNIC, judged: []string{"eth1"}, by: "--nic",
			want: []string{"proc-mem-remote eth1", "proc-remote eth1", "proc-remote eth1"}},
		{name: "uses ens1f0, --nic eth1", nics: []string{"eth1"}, uses: usesOn("ens1f0", p), judged: []string{},
			want: []string{"proc-nic-unaudited "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Governor: performance, NICs: tt.nics, Uses: tt.uses}
			var got []string
			for _, f := range Run(h, tb, []*proc.Process{p}, opts) {
				if strings.HasPrefix(string(f.Check), "proc-") {
					got = append(got, string(f.Check)+" "+f.NIC)
					if f.Check == CheckProcNICUnknown && (f.Severity != SeverityInfo || !strings.Contains(f.Fix, "--nic NIC --pid 7")) {
						t.Errorf("%+v: want info with a --nic fix", f)
					}
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("process findings (-want +got):\n%s", diff)
			}
			pns := Processes(AuditedNICs(h, tb, tt.nics), []*proc.Process{p}, opts)
			if len(pns) != 1 || !slices.Equal(pns[0].Judged, tt.judged) || pns[0].JudgedBy != tt.by {
				t.Errorf("Processes = %+v, want judged %v by %q", pns, tt.judged, tt.by)
			}
		})
	}
}

// TestUnknownMessageQuotes: the info finding of a process whose NIC is
// not known quotes the socket that is why: a server with a loopback
// client and a wildcard listener is "any NIC" because of the listener,
// which nicuse.Of says first, not because of its loopback connection.
func TestUnknownMessageQuotes(t *testing.T) {
	root := hosttest.Copy(t, "offline-2node")
	hosttest.WriteSockets(t, root, 7, []hosttest.Socket{
		{Proto: "tcp", Local: "127.0.0.1:5201", Remote: "127.0.0.1:38592", Inode: 1},
		{Proto: "tcp", Local: "0.0.0.0:5201", Inode: 2},
	})
	hosttest.WriteSockets(t, root, 8, []hosttest.Socket{{Proto: "tcp", Local: "127.0.0.1:38592", Remote: "127.0.0.1:5201", Inode: 3}})
	h, err := topology.Read(hosttest.Open(t, root))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		pid  int
		want string
	}{
		{7, "iperf3 (PID 7) is bound to every address only (tcp *:5201 (listening)), so any NIC may carry its traffic: it was judged against no NIC"},
		{8, "iperf3 (PID 8)'s sockets stay on the host (tcp 127.0.0.1:38592 -> 127.0.0.1:5201): it was judged against no NIC"},
	} {
		n, err := proc.ReadNet(hosttest.Open(t, root), tt.pid)
		if err != nil {
			t.Fatal(err)
		}
		u := nicuse.Of(h, &proc.Process{PID: tt.pid, Comm: "iperf3", Net: n})
		if got := unknownMessage(fmt.Sprintf("iperf3 (PID %d)", tt.pid), u); got != tt.want {
			t.Errorf("message\n got %q\nwant %q", got, tt.want)
		}
	}
}
