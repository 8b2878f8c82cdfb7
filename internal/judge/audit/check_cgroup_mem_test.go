package audit

import (
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestCgroupMemRemote: on the seed host (node 0: CPUs 0-15,32-47; node
// 1 and eth0: 16-31,48-63), with --nic eth0 the NIC of every group:
//   - memfar runs on node 1 with 90% of its memory on node 0: one finding
//     against its CPUs (eth0's node is theirs, so not again for eth0);
//   - node0 runs on node 0 with its memory there: nothing against its
//     CPUs, one finding against eth0;
//   - memsonly has no memory.numa_stat but may allocate on node 0 only;
//   - unknown has neither a numa_stat nor mems off its node: not-checked;
//   - half has exactly half its memory remote: not more than half, nothing.
func TestCgroupMemRemote(t *testing.T) {
	withStat := func(cpus, mems, stat string) map[string]string {
		f := cpusetFiles(cpus, mems, "member")
		f["memory.numa_stat"] = stat
		return f
	}
	root := seedGroups(t, map[string]map[string]string{
		"pod/memfar":   withStat("18-19", "0-1", "anon N0=943718400 N1=52428800\nfile N0=0 N1=52428800\nshmem N0=4096 N1=0\n"),
		"pod/node0":    withStat("0-1", "0", "anon N0=12582912 N1=0\nfile N0=0 N1=0\n"),
		"pod/memsonly": cpusetFiles("18-19", "0", "member"),
		"pod/unknown":  cpusetFiles("18-19", "1", "member"),
		"pod/half":     withStat("18-19", "0-1", "anon N0=4096 N1=4096\nfile N0=0 N1=0\n"),
	})
	groups := []string{"/pod/memfar", "/pod/node0", "/pod/memsonly", "/pod/unknown", "/pod/half"}
	st, err := Read(hosttest.Open(t, root), Selection{NICs: []string{"eth0"}, Selection: proc.Selection{Cgroups: groups}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Finding{}
	for _, f := range onlyCheck(st.Findings, CheckCgroupMemRemote) {
		key := f.Subject + " " + f.NIC
		if _, dup := got[key]; dup {
			t.Errorf("two findings for %s", key)
		}
		got[key] = f
	}
	if len(got) != 3 {
		t.Errorf("cgroup-mem-remote = %+v, want three", got)
	}
	far := got["--cgroup /pod/memfar "]
	if far.Severity != SeverityWarning || !slices.Equal(far.Nodes, []int{0}) ||
		far.Message != "900.0 MiB of control group /pod/memfar's 1000.0 MiB of memory (90%) is on node 0, off its CPUs' node 1 (memory.numa_stat: anon and file); cpuset.mems.effective 0-1 lets it allocate there" ||
		far.Fix != "echo 1 > /sys/fs/cgroup/pod/memfar/cpuset.mems  # cgroup v2 migrates the group's pages to node 1" {
		t.Errorf("memfar = %+v", far)
	}
	n0 := got["--cgroup /pod/node0 eth0"]
	if !strings.HasPrefix(n0.Message, "12.0 MiB of control group /pod/node0's 12.0 MiB of memory (100%) is on node 0, off eth0's node 1") ||
		n0.Fix != "echo 1 > /sys/fs/cgroup/pod/node0/cpuset.mems  # cgroup v2 migrates the group's pages to node 1" {
		t.Errorf("node0 against eth0 = %+v", n0)
	}
	mo := got["--cgroup /pod/memsonly "]
	if !strings.HasPrefix(mo.Message, "control group /pod/memsonly may allocate memory only on node 0 (cpuset.mems.effective), off its CPUs' node 1 (how much it holds there is unknown: no /sys/fs/cgroup/pod/memsonly/memory.numa_stat (the root group") {
		t.Errorf("memsonly = %+v", mo)
	}
	var nc []string
	for _, f := range notCheckedOf(st.Findings, CheckCgroupMemRemote) {
		nc = append(nc, f.Subject)
	}
	if !slices.Equal(nc, []string{"cgroup-mem-remote for --cgroup /pod/unknown"}) {
		t.Errorf("not-checked = %q, want the group without memory.numa_stat", nc)
	}
}
