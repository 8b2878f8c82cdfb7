package main

import (
	"path/filepath"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// TestAttributionRealHosts is issue 16's measure, on copies of real
// captures (NICs on both nodes, SR-IOV VFs on dell-2numa): one
// well-placed iperf3 (a node-1 CPU, its memory on node 1) serving a test
// through one node-1 NIC. Its /proc/4242 (sockets included) and the
// routes of its namespace are test input: the captures hold no process
// and no addresses. Judged against every NIC, as the audit did before it
// knew which NIC a process uses (here: its NIC unknown, every NIC named
// with --nic), nearly every process finding is about a NIC it does not
// use; judged by its sockets, none is.
func TestAttributionRealHosts(t *testing.T) {
	t.Parallel()
	realhosts.Require(t)
	tests := []struct {
		capture string
		nic     string // a node-1 NIC with queue IRQs
		cpu     string // a node-1 CPU
		// Process findings judged against every NIC with IRQs, of which
		// about other NICs than nic, and errors; then judged by its
		// sockets, about nic.
		all, other, errors, attributed int
	}{
		{capture: "dell-2numa", nic: "ens3f1", cpu: "3", all: 113, other: 112, errors: 36, attributed: 1},
		{capture: "cnto-master", nic: "ens6f0", cpu: "3", all: 26, other: 25, errors: 8, attributed: 1},
		{capture: "cnto-worker1", nic: "ens7f0", cpu: "3", all: 14, other: 13, errors: 4, attributed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.capture, func(t *testing.T) {
			t.Parallel()
			c := realhosts.MustLookup(t, tt.capture)
			root := realhosts.Unpack(t, c)
			p := testProc{comm: "iperf3", allowed: tt.cpu, numaMaps: "7f0000000000 default anon=3000 dirty=3000 N1=3000 kernelpagesize_kB=4\n"}
			// 4242 uses tt.nic; 4243 is the same process without sockets.
			p.pid, p.sockets = 4242, []hosttest.Socket{
				{Proto: "tcp", Local: "10.16.1.2:5201", Inode: 71},
				{Proto: "tcp", Local: "10.16.1.2:5201", Remote: "10.16.1.9:40712", Inode: 72},
			}
			writeProc(t, root, 128, p)
			hosttest.WriteRoutes(t, filepath.Join(root, "proc/4242/net"), []hosttest.Route{{Iface: tt.nic, Dst: "10.16.1.0/24"}}, nil)
			p.pid, p.sockets = 4243, nil
			writeProc(t, root, 128, p)

			h, tab, err := irq.Read(hosttest.Open(t, root), irq.Options{})
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"--pid", "4243", "--fail-on", "never"}
			for _, n := range audit.AuditedNICs(h, tab, nil) {
				args = append(args, "--nic", n)
			}
			all, other, errs := procFindings(t, root, tt.nic, args...)
			t.Logf("%s, judged against every NIC: %d process findings, %d about NICs it does not use, %d errors", tt.capture, all, other, errs)
			if all != tt.all || other != tt.other || errs != tt.errors {
				t.Errorf("judged against every NIC: %d findings, %d about other NICs, %d errors; want %d, %d, %d", all, other, errs, tt.all, tt.other, tt.errors)
			}

			doc, _ := auditJSON(t, root, "--pid", "4242", "--fail-on", "never")
			all, other, errs = procFindings(t, root, tt.nic, "--pid", "4242", "--fail-on", "never")
			t.Logf("%s, judged by its sockets: %d process findings, %d about NICs it does not use, %d errors", tt.capture, all, other, errs)
			if all != tt.attributed || other != 0 || errs != 0 {
				t.Errorf("judged by its sockets: %d findings, %d about other NICs, %d errors; want %d about %s only", all, other, errs, tt.attributed, tt.nic)
			}
			// The one left is true: every node-1 core serves one of the
			// NIC's queue IRQs.
			for _, f := range doc.Findings {
				if f.PID == 4242 && f.Check != audit.CheckProcIRQOverlap {
					t.Errorf("judged by its sockets: %s %s %s", f.Check, f.NIC, f.Message)
				}
			}
			if len(doc.Processes) != 1 || doc.Processes[0].Attribution != "sockets" || len(doc.Processes[0].NICs) != 1 || doc.Processes[0].NICs[0] != tt.nic {
				t.Errorf("processes %+v, want 4242 attributed to %s by its sockets", doc.Processes, tt.nic)
			}
			// Without sockets and without --nic: one info, nothing else.
			doc, _ = auditJSON(t, root, "--pid", "4243", "--fail-on", "never")
			var got []string
			for _, f := range doc.Findings {
				if f.PID == 4243 {
					got = append(got, string(f.Check)+"/"+f.Severity)
				}
			}
			if len(got) != 1 || got[0] != "proc-nic-unknown/info" {
				t.Errorf("no sockets, no --nic: process findings %v, want one proc-nic-unknown/info", got)
			}
		})
	}
}

// procFindings audits root and counts the findings about processes: all,
// those about other NICs than nic, and the errors.
func procFindings(t *testing.T, root, nic string, args ...string) (all, other, errs int) {
	t.Helper()
	doc, _ := auditJSON(t, root, args...)
	for _, f := range doc.Findings {
		if f.PID == 0 {
			continue
		}
		all++
		if f.NIC != nic {
			other++
		}
		if f.Severity == "error" {
			errs++
		}
	}
	return all, other, errs
}
