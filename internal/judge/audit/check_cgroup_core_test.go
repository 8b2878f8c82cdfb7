package audit

import (
	"slices"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestCgroupSharedCore: on the seed host (SMT siblings n and n+32; eth0's
// comp0, IRQ 284, on CPU 50 and comp3, IRQ 287, on 51), an isolated
// partition on 18-19 shares both cores: a warning naming both IRQs; a
// member group on 0-1,18 shares 18's, info; a group on CPU 17, which
// takes IRQ 285 itself, and one on 0-3, whose cores take none, are not
// told (cgroup-exclusive-irq and proc-irq-overlap say the first).
func TestCgroupSharedCore(t *testing.T) {
	root := seedGroups(t, map[string]map[string]string{
		"pod/iso":    cpusetFiles("18-19", "1", "isolated"),
		"pod/member": cpusetFiles("0-1,18", "0-1", "member"),
		"pod/irq":    cpusetFiles("17", "1", "root"),
		"pod/quiet":  cpusetFiles("0-3", "0", "root"),
	})
	st, err := Read(hosttest.Open(t, root), Selection{Selection: proc.Selection{Cgroups: []string{"/pod/iso", "/pod/member", "/pod/irq", "/pod/quiet"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := onlyCheck(st.Findings, CheckCgroupSharedCore)
	if len(got) != 2 {
		t.Fatalf("cgroup-shared-core = %+v, want two", got)
	}
	iso, member := got[0], got[1]
	if iso.Severity != SeverityWarning || iso.Subject != "--cgroup /pod/iso" || iso.NIC != "eth0" || !slices.Equal(iso.IRQ, []int{284, 287}) ||
		!iso.CPUs.Equal(cpuset.New(18, 19)) || !slices.Equal(iso.Nodes, []int{1}) ||
		iso.Message != "control group /pod/iso's CPUs 18-19, which it holds exclusively (cpuset.cpus.partition isolated), share physical cores with CPUs 50-51, where eth0's queue IRQs 284,287 are delivered: its threads share those cores with the NIC's interrupts and softirqs" ||
		iso.Fix != "irqnuma irq pin eth0 --exclude 18-19,50-51  # the group's CPUs and their siblings" {
		t.Errorf("iso = %+v", iso)
	}
	if member.Severity != SeverityInfo || member.Subject != "--cgroup /pod/member" || !slices.Equal(member.IRQ, []int{284}) || !member.CPUs.Equal(cpuset.New(18)) ||
		member.Fix != "irqnuma irq pin eth0 --exclude 0-1,18,32-33,50  # the group's CPUs and their siblings" {
		t.Errorf("member = %+v", member)
	}
}
