package proc

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

func TestParseCgroupProcs(t *testing.T) {
	tests := []struct {
		give    string
		want    []int
		wantErr bool
	}{
		{"", []int{}, false},
		{"1\n", []int{1}, false},
		{"4245\n17\n4245\n", []int{17, 4245}, false}, // v1 may repeat and not sort
		{"17", nil, true},
		{"\n", nil, true},
		{"17\n\n", nil, true},
		{"0\n", nil, true},
		{"-3\n", nil, true},
		{"+3\n", nil, true},
		{"03\n", nil, true},
		{" 3\n", nil, true},
		{"3 \n", nil, true},
	}
	for _, tt := range tests {
		got, err := parseCgroupProcs(tt.give)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("parseCgroupProcs(%q) = %v, %v; want %v, error %v", tt.give, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParsePartition(t *testing.T) {
	tests := []struct {
		give        string
		want        Partition
		wantInvalid bool
		wantWhy     string
		wantErr     bool
	}{
		{"member", PartitionMember, false, "", false},
		{"root", PartitionRoot, false, "", false},
		{"isolated", PartitionIsolated, false, "", false},
		{"root invalid", PartitionRoot, true, "", false},
		// The reasons as kernel/cgroup/cpuset.c's perr_strings word them.
		{"root invalid (Cpu list in cpuset.cpus not exclusive)", PartitionRoot, true, "Cpu list in cpuset.cpus not exclusive", false},
		{"isolated invalid (Parent is not a partition root)", PartitionIsolated, true, "Parent is not a partition root", false},
		{"", "", false, "", true},
		{"Root", "", false, "", true},
		{"root ", "", false, "", true},
		{"member invalid", "", false, "", true},
		{"root invalid (", "", false, "", true},
		{"root invalid ()", "", false, "", true},
		{"root invalid x", "", false, "", true},
		{"root valid", "", false, "", true},
	}
	for _, tt := range tests {
		got, invalid, why, err := parsePartition(tt.give)
		if got != tt.want || invalid != tt.wantInvalid || why != tt.wantWhy || (err != nil) != tt.wantErr {
			t.Errorf("parsePartition(%q) = %q, %v, %q, %v; want %q, %v, %q, error %v", tt.give, got, invalid, why, err, tt.want, tt.wantInvalid, tt.wantWhy, tt.wantErr)
		}
	}
}

func TestParseProcCgroup(t *testing.T) {
	// A hybrid host's file as this project's VM writes it, and a v2 one as
	// a CRI-O container on a systemd-driven kubelet has it.
	hybrid := "9:name=systemd:/\n3:cpuset:/kubepods/pod1\n2:cpu,cpuacct:/\n0::/\n"
	got, err := parseProcCgroup(hybrid)
	want := []CgroupEntry{
		{Hierarchy: 9, Controllers: []string{"name=systemd"}, Path: "/"},
		{Hierarchy: 3, Controllers: []string{"cpuset"}, Path: "/kubepods/pod1"},
		{Hierarchy: 2, Controllers: []string{"cpu", "cpuacct"}, Path: "/"},
		{Hierarchy: 0, Path: "/"},
	}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("parseProcCgroup(hybrid) = %v, %v; diff (-want +got):\n%s", got, err, cmpDiff(want, got))
	}
	v2 := "0::/kubepods.slice/kubepods-pod0a1b.slice/crio-3f.scope\n"
	if got, err := parseProcCgroup(v2); err != nil || len(got) != 1 || got[0].Path != "/kubepods.slice/kubepods-pod0a1b.slice/crio-3f.scope" {
		t.Errorf("parseProcCgroup(%q) = %v, %v", v2, got, err)
	}
	for _, bad := range []string{"0::/", "x::/\n", "0:cpu:/\n", "1:cpuset:rel\n", "1:cpuset\n", "-1::/\n", "\n"} {
		if got, err := parseProcCgroup(bad); err == nil {
			t.Errorf("parseProcCgroup(%q) = %v, want an error", bad, got)
		}
	}
}

func TestCleanCgroupPath(t *testing.T) {
	tests := []struct{ give, want string }{
		{"/", "/"},
		{"a/b", "/a/b"},
		{"/a//b/", "/a/b"},
		{"/sys/fs/cgroup/a/b", "/a/b"},
		{"/sys/fs/cgroup/cpuset/a", "/a"},
		{"/sys/fs/cgroup/unified/a", "/a"},
		{"/sys/fs/cgroup", "/"},
	}
	for _, tt := range tests {
		if got, err := CleanCgroupPath(tt.give); err != nil || got != tt.want {
			t.Errorf("CleanCgroupPath(%q) = %q, %v, want %q", tt.give, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "/a/../b", ".."} {
		if _, err := CleanCgroupPath(bad); !errors.Is(err, ErrSelection) {
			t.Errorf("CleanCgroupPath(%q) = %v, want ErrSelection", bad, err)
		}
	}
}

// podScope is a CRI-O container's group under a systemd-driven kubelet.
const podScope = "kubepods.slice/kubepods-pod0a1b2c3d_4e5f_6789_abcd_ef0123456789.slice/crio-3f2e.scope"

// v2Tree is a unified host: the root group (no partition file, as the
// kernel has it), a pod container whose cpuset is an isolated partition,
// and a group without the cpuset controller.
func v2Tree(t *testing.T) string {
	root := t.TempDir()
	files := map[string]string{
		"sys/fs/cgroup/cgroup.controllers":                     "cpuset cpu io memory hugetlb pids rdma misc\n",
		"sys/fs/cgroup/cgroup.procs":                           "1\n",
		"sys/fs/cgroup/cpuset.cpus.effective":                  "0-7\n",
		"sys/fs/cgroup/cpuset.mems.effective":                  "0-1\n",
		"sys/fs/cgroup/" + podScope + "/cgroup.procs":          "4245\n4244\n",
		"sys/fs/cgroup/" + podScope + "/cpuset.cpus.effective": "5,7\n",
		"sys/fs/cgroup/" + podScope + "/cpuset.mems.effective": "1\n",
		"sys/fs/cgroup/" + podScope + "/cpuset.cpus.partition": "isolated\n",
		"sys/fs/cgroup/" + podScope + "/memory.numa_stat":      numaStat68,
		"sys/fs/cgroup/nocpuset/cgroup.procs":                  "",
		"sys/fs/cgroup/bad/cgroup.procs":                       "12\n",
		"sys/fs/cgroup/bad/cpuset.cpus.partition":              "root invalid (Cpu list in cpuset.cpus not exclusive)\n",
		"sys/fs/cgroup/bad/cpuset.cpus.effective":              "0-7\n",
	}
	task(files, 4245, 4245, "iperf3", "S", 5)
	files["proc/4245/comm"], files["proc/4245/status"] = "iperf3\n", statusText("iperf3", "S (sleeping)")
	files["proc/4245/cgroup"] = "0::/" + podScope + "\n"
	putTree(t, root, files)
	return root
}

func TestReadCgroupV2(t *testing.T) {
	root := v2Tree(t)
	fsys := hosttest.Open(t, root)
	g, err := ReadCgroup(fsys, "/sys/fs/cgroup/"+podScope)
	if err != nil {
		t.Fatal(err)
	}
	want := &Cgroup{Path: "/" + podScope, Version: CgroupVersionV2, Dir: filepath.Join(root, "sys/fs/cgroup", podScope), PIDs: []int{4244, 4245},
		CPUs: unknown.Of(cpuset.New(5, 7)), Mems: unknown.Of(cpuset.New(1)), Partition: unknown.Of(PartitionIsolated), Exclusive: true, ExclusiveBy: "cpuset.cpus.partition isolated"}
	want.NumaStat = unknown.Of(mustNumaStat(t, numaStat68))
	if diff := cmpDiff(want, g, cmp.Comparer(cpuset.Set.Equal)); diff != "" {
		t.Errorf("ReadCgroup(pod) (-want +got):\n%s", diff)
	}
	g, err = ReadCgroup(fsys, "/")
	if err != nil || g.Partition.Known() || !g.CPUs.Or(cpuset.Set{}).Equal(cpuset.Range(0, 7)) || g.Exclusive {
		t.Errorf("ReadCgroup(/) = %+v, %v", g, err)
	}
	g, err = ReadCgroup(fsys, "nocpuset")
	if err != nil || g.CPUs.Known() || g.Mems.Known() || !strings.Contains(g.CPUs.Why().Detail, "cpuset.cpus.effective") || len(g.PIDs) != 0 ||
		g.NumaStat.Known() || !strings.Contains(g.NumaStat.Why().Detail, "nocpuset/memory.numa_stat (the root group, or the memory controller is not enabled") {
		t.Errorf("ReadCgroup(nocpuset) = %+v, %v; want CPUs unknown, saying why", g, err)
	}
	g, err = ReadCgroup(fsys, "bad")
	if err != nil || !g.PartitionInvalid || g.Exclusive || !unknown.Is(g.Partition, PartitionRoot) || g.PartitionInvalidReason == "" {
		t.Errorf("ReadCgroup(bad) = %+v, %v; want an invalid root, not exclusive", g, err)
	}
	if _, err := ReadCgroup(fsys, "/kubepods.slice/gone"); !errors.Is(err, ErrNoCgroup) || !strings.Contains(err.Error(), "/kubepods.slice/gone") {
		t.Errorf("ReadCgroup(gone) = %v, want ErrNoCgroup naming it", err)
	}
	if p, err := cgroupOf(fsys, 4245); err != nil || p != "/"+podScope {
		t.Errorf("cgroupOf(4245) = %q, %v", p, err)
	}
}

func TestReadCgroupMalformed(t *testing.T) {
	for file, data := range map[string]string{
		"cgroup.procs":          "12\nx\n",
		"cpuset.cpus.effective": "3-1\n",
		"cpuset.cpus.partition": "exclusive\n",
	} {
		root := v2Tree(t)
		putTree(t, root, map[string]string{"sys/fs/cgroup/g/cgroup.procs": "", "sys/fs/cgroup/g/" + file: data})
		_, err := ReadCgroup(hosttest.Open(t, root), "/g")
		if !errors.Is(err, kfile.ErrFileParse) || !strings.Contains(err.Error(), "sys/fs/cgroup/g/"+file) {
			t.Errorf("ReadCgroup with %s %q = %v, want ErrFileParse naming it", file, data, err)
		}
	}
}

// TestReadCgroupV1: a v1 host's cpuset hierarchy, and a hybrid host's
// unified one for a group the cpuset hierarchy lacks.
func TestReadCgroupV1(t *testing.T) {
	root := t.TempDir()
	putTree(t, root, map[string]string{
		"sys/fs/cgroup/cpuset/cgroup.procs":                           "1\n",
		"sys/fs/cgroup/cpuset/cpuset.cpus":                            "0-3\n",
		"sys/fs/cgroup/cpuset/kubepods/pod1/c1/cgroup.procs":          "77\n",
		"sys/fs/cgroup/cpuset/kubepods/pod1/c1/cpuset.effective_cpus": "2-3\n",
		"sys/fs/cgroup/cpuset/kubepods/pod1/c1/cpuset.effective_mems": "0\n",
		"sys/fs/cgroup/cpuset/kubepods/pod1/c1/cpuset.cpu_exclusive":  "1\n",
		"sys/fs/cgroup/unified/cgroup.controllers":                    "\n",
		"sys/fs/cgroup/unified/system.slice/x.service/cgroup.procs":   "99\n",
		"proc/77/cgroup": "11:cpuset:/kubepods/pod1/c1\n1:name=systemd:/kubepods/pod1/c1\n0::/\n",
	})
	fsys := hosttest.Open(t, root)
	g, err := ReadCgroup(fsys, "/kubepods/pod1/c1")
	if err != nil || g.Version != CgroupVersionV1 || !g.CPUs.Or(cpuset.Set{}).Equal(cpuset.New(2, 3)) || !g.Mems.Or(cpuset.Set{}).Equal(cpuset.New(0)) || !g.Exclusive || !slices.Equal(g.PIDs, []int{77}) ||
		g.NumaStat.Known() || !strings.Contains(g.NumaStat.Why().Detail, "cgroup v1") {
		t.Errorf("ReadCgroup(v1 c1) = %+v, %v", g, err)
	}
	g, err = ReadCgroup(fsys, "/system.slice/x.service")
	if err != nil || g.Version != CgroupVersionV2 || g.CPUs.Known() || !slices.Equal(g.PIDs, []int{99}) {
		t.Errorf("ReadCgroup(hybrid unified) = %+v, %v; want v2, CPUs unknown", g, err)
	}
	if p, err := cgroupOf(fsys, 77); err != nil || p != "/kubepods/pod1/c1" {
		t.Errorf("cgroupOf(77) = %q, %v; want the cpuset line's path", p, err)
	}
}

// TestSelectCgroup: --cgroup selects the group's running processes (a
// PID in cgroup.procs that is gone is left out), keeps the group on its
// Match, and a group the root lacks is a Match saying so, not an error.
func TestSelectCgroup(t *testing.T) {
	fsys := hosttest.Open(t, v2Tree(t))
	sel := Selection{Cgroups: []string{"/" + podScope, "/kubepods.slice/gone"}}
	if err := sel.Validate(); err != nil {
		t.Fatal(err)
	}
	procs, matches, err := SelectPresent(fsys, sel)
	if err != nil {
		t.Fatal(err)
	}
	if len(procs) != 1 || procs[0].PID != 4245 {
		t.Fatalf("SelectPresent procs = %v, want 4245", procs)
	}
	if len(matches) != 2 || matches[0].Group == nil || !slices.Equal(matches[0].PIDs, []int{4245}) || !matches[0].Group.CPUs.Or(cpuset.Set{}).Equal(cpuset.New(5, 7)) {
		t.Fatalf("SelectPresent matches = %+v", matches)
	}
	if s := matches[0].Selector.String(); s != "--cgroup /"+podScope {
		t.Errorf("Selector = %q", s)
	}
	if err := matches[0].Err(); err != nil {
		t.Errorf("Err of a group with a process = %v", err)
	}
	if err := matches[1].Err(); !errors.Is(err, ErrNoCgroup) || !strings.Contains(err.Error(), "--cgroup /kubepods.slice/gone") {
		t.Errorf("Err of a missing group = %v, want ErrNoCgroup naming it", err)
	}
	if err := (Selection{Cgroups: []string{"/a/../b"}}).Validate(); !errors.Is(err, ErrSelection) {
		t.Errorf("Validate(..) = %v, want ErrSelection", err)
	}
}

func FuzzParseCgroupProcs(f *testing.F) {
	for _, s := range []string{"", "1\n", "4245\n17\n4245\n", "03\n", "\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pids, err := parseCgroupProcs(s)
		if err != nil {
			return
		}
		if !slices.IsSorted(pids) || slices.Contains(pids, 0) {
			t.Fatalf("parseCgroupProcs(%q) = %v: not sorted positive ids", s, pids)
		}
		var b strings.Builder
		for _, p := range pids {
			b.WriteString(strconv.Itoa(p) + "\n")
		}
		again, err := parseCgroupProcs(b.String())
		if err != nil || !slices.Equal(again, pids) {
			t.Fatalf("round trip of %v = %v, %v", pids, again, err)
		}
	})
}

func FuzzParsePartition(f *testing.F) {
	for _, s := range []string{"member", "root", "isolated invalid (Parent is not a partition root)", "root invalid", "root invalid ()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, invalid, why, err := parsePartition(s)
		if err != nil {
			if p != "" {
				t.Fatalf("parsePartition(%q) = %q with an error", s, p)
			}
			return
		}
		w := string(p)
		if invalid {
			w += " invalid"
			if why != "" {
				w += " (" + why + ")"
			}
		}
		if w != s {
			t.Fatalf("parsePartition(%q) = %q, %v, %q: prints back as %q", s, p, invalid, why, w)
		}
	})
}

func FuzzParseProcCgroup(f *testing.F) {
	for _, s := range []string{"0::/\n", "9:name=systemd:/\n3:cpuset:/a\n0::/\n", "1:cpu,cpuacct:/x:y\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ents, err := parseProcCgroup(s)
		if err != nil {
			return
		}
		for _, e := range ents {
			if e.Hierarchy < 0 || !strings.HasPrefix(e.Path, "/") || (e.Hierarchy == 0 && len(e.Controllers) > 0) {
				t.Fatalf("parseProcCgroup(%q) gave %+v", s, e)
			}
		}
	})
}
