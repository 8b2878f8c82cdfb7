package audit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// putCgroup writes a v2 group's files under root as the kernel shows
// them.
func putCgroup(t *testing.T, root, group string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, "sys/fs/cgroup", group, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o444); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCgroupExclusiveIRQ: on the seed host (eth0 on node 1, mlx5_comp1
// delivered to CPU 17, comp0 to 50), an isolated partition holding CPUs
// 16-17 is told that eth0's IRQ 285 lands on CPU 17; a member group on
// the same CPUs, an invalid partition, and a partition on CPUs no IRQ
// reaches are not. Read end to end: the groups are on the State, and a
// --cgroup the host lacks or one without a process is proc-absent,
// naming it.
func TestCgroupExclusiveIRQ(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	putCgroup(t, root, "", map[string]string{"cgroup.controllers": "cpuset cpu io memory pids\n", "cgroup.procs": ""})
	group := func(name, cpus, partition string) {
		putCgroup(t, root, name, map[string]string{"cgroup.procs": "", "cpuset.cpus.effective": cpus + "\n",
			"cpuset.mems.effective": "1\n", "cpuset.cpus.partition": partition + "\n"})
	}
	group("pod/iso", "16-17", "isolated")
	group("pod/member", "16-17", "member")
	group("pod/invalid", "16-17", "root invalid (Cpu list in cpuset.cpus not exclusive)")
	group("pod/quiet", "18-19", "root")
	sel := Selection{Selection: proc.Selection{Cgroups: []string{"/pod/iso", "/pod/member", "/pod/invalid", "/pod/quiet", "/pod/gone"}}}
	st, err := Read(hosttest.Open(t, root), sel)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, g := range st.Groups() {
		paths = append(paths, g.Path)
	}
	if want := []string{"/pod/iso", "/pod/member", "/pod/invalid", "/pod/quiet"}; !slices.Equal(paths, want) {
		t.Errorf("Groups = %v, want %v", paths, want)
	}
	got := onlyCheck(st.Findings, CheckCgroupIRQ)
	if len(got) != 1 {
		t.Fatalf("cgroup-exclusive-irq findings = %+v, want one", got)
	}
	f := got[0]
	if f.Subject != "--cgroup /pod/iso" || f.NIC != "eth0" || !slices.Equal(f.IRQ, []int{285}) || !f.CPUs.Equal(cpuset.New(17)) ||
		!slices.Equal(f.Nodes, []int{1}) || !strings.Contains(f.Message, "cpuset.cpus.partition isolated") || f.Fix != "irqnuma irq pin eth0 --exclude 16-17" {
		t.Errorf("finding = %+v", f)
	}
	absent := map[string]string{}
	for _, f := range onlyCheck(st.Findings, CheckProcAbsent) {
		absent[f.Subject] = f.Message
	}
	if m := absent["--cgroup /pod/gone"]; !strings.Contains(m, "no control group /pod/gone under "+root+"/sys/fs/cgroup") {
		t.Errorf("proc-absent for the missing group = %q", m)
	}
	if m := absent["--cgroup /pod/iso"]; !strings.Contains(m, "holds no running process") {
		t.Errorf("proc-absent for the empty group = %q", m)
	}
}

// TestCgroupExclusiveIRQKubeletUnknown: a pod's container on CPUs 16-17
// (eth0's IRQ 285 lands on 17) whose exclusive CPUs the kubelet's word
// leaves unknown is a warning not-checked of cgroup-exclusive-irq naming
// the container and why, and no IRQ on its CPUs is called one on CPUs it
// holds exclusively, unless its group is a partition root of its own;
// the kubelet's word, taken, is the finding.
func TestCgroupExclusiveIRQKubeletUnknown(t *testing.T) {
	const why = "the kubelet's pod resources API: cpu_ids malformed: 2000000 is past 1048575, the largest CPU id"
	tests := []struct {
		partition, by, why string
		wantIRQ            string // in the cgroup-exclusive-irq finding's message; "" for none
		wantNotChecked     string // in the not-checked's message; "" for none
	}{
		{partition: "member", why: why, wantNotChecked: "the kubelet's word on its CPUs is not taken: " + why + "; so whether they are its alone is unknown"},
		{partition: "root", why: why, wantIRQ: "cpuset.cpus.partition root", wantNotChecked: "its CPUs are its alone by cpuset.cpus.partition root, and judged so"},
		{partition: "member", by: "the kubelet's pod resources API: cpu_ids 16-17", wantIRQ: "cpu_ids 16-17"},
	}
	for _, tt := range tests {
		kubelet := unknown.Of(cpuset.Set{})
		switch {
		case tt.why != "":
			kubelet = unknown.NotAs[cpuset.Set](unknown.KindMalformed, tt.why)
		case tt.by != "":
			kubelet = unknown.Of(cpuset.Range(16, 17))
		}
		pg := proc.PodGroup{Path: "/pod/c", Pod: proc.PodRef{Namespace: "default", Name: "p", Container: "c", ExclusiveCPUs: kubelet}, ExclusiveBy: tt.by}
		st := readSeedPod(t, tt.partition, pg)
		irqs := onlyCheck(st.Findings, CheckCgroupIRQ)
		switch {
		case tt.wantIRQ == "" && len(irqs) != 0:
			t.Errorf("%s, by %q, why %q: cgroup-exclusive-irq %+v, want none", tt.partition, tt.by, tt.why, irqs)
		case tt.wantIRQ != "" && (len(irqs) != 1 || !strings.Contains(irqs[0].Message, tt.wantIRQ)):
			t.Errorf("%s, by %q, why %q: cgroup-exclusive-irq %+v, want one saying %q", tt.partition, tt.by, tt.why, irqs, tt.wantIRQ)
		}
		nc := notCheckedOf(st.Findings, CheckCgroupIRQ)
		switch {
		case tt.wantNotChecked == "" && len(nc) != 0:
			t.Errorf("%s, by %q: not-checked %+v, want none", tt.partition, tt.by, nc)
		case tt.wantNotChecked != "" && (len(nc) != 1 || nc[0].Severity != SeverityWarning ||
			nc[0].Subject != "cgroup-exclusive-irq for --pod default/p container c" ||
			!strings.Contains(nc[0].Message, "pod default/p container c (control group /pod/c)") || !strings.Contains(nc[0].Message, tt.wantNotChecked)):
			t.Errorf("%s, why %q: not-checked %+v, want one warning for the container saying %q", tt.partition, tt.why, nc, tt.wantNotChecked)
		}
	}
}

// readSeedPod reads the seed host with pod default/p's container c
// resolved to group /pod/c, on CPUs 16-17 (eth0's IRQ 285 lands on 17),
// a v2 group of the partition given.
func readSeedPod(t *testing.T, partition string, pg proc.PodGroup) *State {
	t.Helper()
	root := hosttest.Copy(t, "seed")
	putCgroup(t, root, "", map[string]string{"cgroup.controllers": "cpuset cpu io memory pids\n", "cgroup.procs": ""})
	putCgroup(t, root, "pod/c", map[string]string{"cgroup.procs": "", "cpuset.cpus.effective": "16-17\n",
		"cpuset.mems.effective": "1\n", "cpuset.cpus.partition": partition + "\n"})
	sel := Selection{Selection: proc.Selection{Pods: []string{"default/p"},
		Resolved: map[proc.Selector]proc.PodResolution{proc.PodSelector("default/p"): {Groups: []proc.PodGroup{pg}}}}}
	st, err := Read(hosttest.Open(t, root), sel)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
