package audit

import (
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irqbalance"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// seedGroups is the seed host with v2 groups (no process in them), each
// a map of its files; cpus and mems "" leave the cpuset files out.
func seedGroups(t *testing.T, groups map[string]map[string]string) string {
	t.Helper()
	root := hosttest.Copy(t, "seed")
	putCgroup(t, root, "", map[string]string{"cgroup.controllers": "cpuset cpu io memory pids\n", "cgroup.procs": ""})
	for name, files := range groups {
		files["cgroup.procs"] = ""
		putCgroup(t, root, name, files)
	}
	return root
}

func cpusetFiles(cpus, mems, partition string) map[string]string {
	return map[string]string{"cpuset.cpus.effective": cpus + "\n", "cpuset.mems.effective": mems + "\n", "cpuset.cpus.partition": partition + "\n"}
}

// TestCgroupNICRemote: on the seed host (eth0 on node 1: CPUs 16-31,
// 48-63), with --nic eth0 naming the NIC of groups whose processes do
// not say, a group on node 0's CPUs 0-3 is an error, one on 14-17 a
// warning for 14-15, one on node 1 nothing, and one without cpuset files
// not-checked, naming it. Without --nic no group is told a NIC.
func TestCgroupNICRemote(t *testing.T) {
	root := seedGroups(t, map[string]map[string]string{
		"pod/remote": cpusetFiles("0-3", "0", "member"),
		"pod/split":  cpusetFiles("14-17", "0-1", "member"),
		"pod/local":  cpusetFiles("18-19", "1", "member"),
		"pod/nocpus": {},
	})
	groups := []string{"/pod/remote", "/pod/split", "/pod/local", "/pod/nocpus"}
	st, err := Read(hosttest.Open(t, root), Selection{NICs: []string{"eth0"}, Selection: proc.Selection{Cgroups: groups}})
	if err != nil {
		t.Fatal(err)
	}
	got := onlyCheck(st.Findings, CheckCgroupNICRemote)
	if len(got) != 2 {
		t.Fatalf("cgroup-nic-remote = %+v, want two", got)
	}
	remote, split := got[0], got[1]
	if remote.Severity != SeverityError || remote.Subject != "--cgroup /pod/remote" || remote.NIC != "eth0" || !remote.CPUs.Equal(cpuset.Range(0, 3)) ||
		!slices.Equal(remote.Nodes, []int{0}) ||
		remote.Message != "control group /pod/remote may run on CPUs 0-3: all its CPUs, on node 0, off eth0's node 1, which it uses (--nic names it): its packets cross nodes between the NIC's softirq and its threads" ||
		remote.Fix != `cpus=$(irqnuma mask --nic eth0) && echo "$cpus" > /sys/fs/cgroup/pod/remote/cpuset.cpus && echo 1 > /sys/fs/cgroup/pod/remote/cpuset.mems` {
		t.Errorf("remote group's finding = %+v", remote)
	}
	if split.Severity != SeverityWarning || split.Subject != "--cgroup /pod/split" || !split.CPUs.Equal(cpuset.New(14, 15)) ||
		!strings.Contains(split.Message, "CPUs 14-15: 2 of its 4 CPUs (16-17 are local), on node 0") ||
		split.Fix != "irqnuma exec --nic eth0 --cgroup /pod/split -- COMMAND  # runs inside the group's CPUs on eth0's node" {
		t.Errorf("split group's finding = %+v", split)
	}
	var nc []string
	for _, f := range notCheckedOf(st.Findings, CheckCgroupNICRemote) {
		nc = append(nc, f.Subject+": "+f.Message)
	}
	if len(nc) != 1 || !strings.HasPrefix(nc[0], "cgroup-nic-remote for --cgroup /pod/nocpus: no "+root+"/sys/fs/cgroup/pod/nocpus/cpuset.cpus.effective") {
		t.Errorf("not-checked = %q, want the group without cpuset files named", nc)
	}

	st, err = Read(hosttest.Open(t, root), Selection{Selection: proc.Selection{Cgroups: groups}})
	if err != nil {
		t.Fatal(err)
	}
	if got := onlyCheck(st.Findings, CheckCgroupNICRemote); len(got) != 0 {
		t.Errorf("without --nic: cgroup-nic-remote = %+v, want none (no NIC told)", got)
	}
}

// TestCgroupPodWords: a group that is a pod's container is named in the
// message by its pod and container (the subject stays the selector the
// user wrote, which the exporter keys on), and the fixes say what the kubelet and CRI-O do:
// the topology manager for its node, the annotation that keeps IRQs off
// its CPUs, and irqbalance's banned list while irqbalance runs without
// banning them.
func TestCgroupPodWords(t *testing.T) {
	h, tb := loadHost(t, "seed")
	pod := &proc.PodRef{Namespace: "bench", Name: "iperf", UID: "6f0c", Container: "server", ContainerID: "cri-o://9a1b", ExclusiveCPUs: unknown.Of(cpuset.Set{})}
	path := "/kubepods.slice/kubepods-pod6f0c.slice/crio-9a1b.scope"
	group := func(cpus cpuset.Set) []proc.Match {
		return []proc.Match{{Selector: proc.Selector{Kind: proc.SelectorKindCgroup, Cgroup: path},
			Group: &proc.Cgroup{Path: path, Version: proc.CgroupVersionV2, CPUs: unknown.Of(cpus), Partition: unknown.Of(proc.PartitionIsolated), Exclusive: true, Pod: pod}}}
	}
	opts := Options{Governor: performance, NICs: []string{"eth0"}, Cgroups: group(cpuset.New(2, 3, 17)),
		Irqbalance: &irqbalance.Settings{Running: unknown.Of(true), PIDs: []int{812}}}
	fs := Run(h, tb, nil, opts)
	const named = "pod bench/iperf container server"
	for _, c := range []Check{CheckCgroupIRQ, CheckCgroupNICRemote} {
		got := onlyCheck(fs, c)
		if len(got) != 1 || got[0].Subject != "--cgroup "+path || !strings.Contains(got[0].Message, named+" (control group "+path+")") {
			t.Errorf("%s = %+v, want one naming the pod", c, got)
			continue
		}
		switch c {
		case CheckCgroupIRQ:
			if !strings.Contains(got[0].Fix, `irqnuma irq pin eth0 --exclude 2-3,17; to keep them off: annotate the pod irq-load-balancing.crio.io: "disable"`) ||
				!strings.Contains(got[0].Fix, "add 2-3,17 to IRQBALANCE_BANNED_CPULIST") {
				t.Errorf("cgroup-exclusive-irq fix = %q", got[0].Fix)
			}
		case CheckCgroupNICRemote:
			if !strings.Contains(got[0].Fix, "--topology-manager-policy=single-numa-node") || !strings.Contains(got[0].Fix, "device's node 1") {
				t.Errorf("cgroup-nic-remote fix = %q", got[0].Fix)
			}
		}
	}
}

// TestCgroupNICBySockets: a group is judged against the NIC its
// processes' sockets use, saying so; a process whose sockets use a NIC
// the audit does not cover keeps --nic from standing in for it.
func TestCgroupNICBySockets(t *testing.T) {
	h, tb := loadHost(t, "seed")
	p := &proc.Process{PID: 7, Comm: "iperf3", Allowed: cpuset.Range(0, 3)}
	match := []proc.Match{{Selector: proc.Selector{Kind: proc.SelectorKindCgroup, Cgroup: "/pod"}, PIDs: []int{7},
		Group: &proc.Cgroup{Path: "/pod", Version: proc.CgroupVersionV2, CPUs: unknown.Of(cpuset.Range(0, 3)), PIDs: []int{7}}}}
	on := func(nic string) []nicuse.Use {
		return []nicuse.Use{{PID: 7, Comm: "iperf3", NICs: []string{nic}, Attribution: unknown.Of(nicuse.AttributionSockets),
			How: []string{"tcp 192.0.2.2:5201 -> 192.0.2.1:40712: routed through " + nic + " (192.0.2.0/24)"}}}
	}
	fs := Run(h, tb, []*proc.Process{p}, Options{Governor: performance, Cgroups: match, Uses: on("eth0")})
	got := onlyCheck(fs, CheckCgroupNICRemote)
	if len(got) != 1 || got[0].Severity != SeverityError ||
		!strings.Contains(got[0].Message, "which it uses (iperf3 (PID 7) uses it (from its sockets: tcp 192.0.2.2:5201 -> 192.0.2.1:40712: routed through eth0 (192.0.2.0/24)))") {
		t.Errorf("by sockets: cgroup-nic-remote = %+v", got)
	}
	fs = Run(h, tb, []*proc.Process{p}, Options{Governor: performance, NICs: []string{"eth0"}, Cgroups: match, Uses: on("eth9")})
	if got := onlyCheck(fs, CheckCgroupNICRemote); len(got) != 0 {
		t.Errorf("process on an unaudited NIC, --nic eth0: cgroup-nic-remote = %+v, want none", got)
	}
}
