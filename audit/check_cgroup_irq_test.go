package audit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/hosttest"
	"github.com/irqnuma/irqnuma/proc"
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
