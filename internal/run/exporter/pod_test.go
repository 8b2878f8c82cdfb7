package exporter

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// putFile writes one file under root as the kernel shows it.
func putFile(t *testing.T, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o444); err != nil {
		t.Fatal(err)
	}
}

// podTree is the seed host (eth0 on node 1: CPUs 16-31,48-63; its
// mlx5_comp1, IRQ 285, delivered to CPU 17) with a cgroup v2 hierarchy
// holding the groups of three containers, as the kernel writes their
// files: "bad" an isolated partition on 16-17 (IRQ 285 lands on 17),
// "good" a root partition on 18-19 (no IRQ there), "shared" a member
// group on 2-3 (node 0).
func podTree(t *testing.T) string {
	root := hosttest.Copy(t, "seed")
	putFile(t, root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
	putFile(t, root, "sys/fs/cgroup/cgroup.procs", "")
	group := func(name, cpus, mems, partition string) {
		dir := "sys/fs/cgroup/kubepods.slice/" + name + "/"
		putFile(t, root, dir+"cgroup.procs", "")
		putFile(t, root, dir+"cpuset.cpus.effective", cpus+"\n")
		putFile(t, root, dir+"cpuset.mems.effective", mems+"\n")
		putFile(t, root, dir+"cpuset.cpus.partition", partition+"\n")
	}
	group("bad", "16-17", "1", "isolated")
	group("good", "18-19", "1", "root")
	group("shared", "2-3", "0", "member")
	return root
}

// podSelection selects podTree's three groups.
var podSelection = audit.Selection{Selection: proc.Selection{Cgroups: []string{
	"/kubepods.slice/bad", "/kubepods.slice/good", "/kubepods.slice/shared"}}}

// podRefs are the pods the test says its groups are, as a --pod
// selection would have set them.
var podRefs = map[string]*proc.PodRef{
	"/kubepods.slice/bad":  {Namespace: "bench", Name: "iperf-bad", UID: "u1", Container: "iperf3", ContainerID: "c1", ExclusiveCPUs: unknown.Of(cpuset.Set{})},
	"/kubepods.slice/good": {Namespace: "bench", Name: "iperf-good", UID: "u2", Container: "iperf3", ContainerID: "c2", ExclusiveCPUs: unknown.Of(cpuset.Set{})},
}

// readPods reads podTree with podSelection and sets each group's pod;
// each group's processes are the PIDs of pids, using the NICs of uses.
func readPods(t *testing.T, root string, pids map[string][]int, uses []nicuse.Use) *audit.State {
	t.Helper()
	st, err := audit.Read(hosttest.Open(t, root), podSelection)
	if err != nil {
		t.Fatal(err)
	}
	for i := range st.Matches {
		if g := st.Matches[i].Group; g != nil {
			g.Pod = podRefs[g.Path]
			if p, ok := pids[g.Path]; ok {
				st.Matches[i].PIDs = p
			}
		}
	}
	st.Uses = append(st.Uses, uses...)
	return st
}

// podText is the text exposition of st's series.
func podText(t *testing.T, st *audit.State) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := WriteText(&buf, Series(st)); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The labels of podTree's groups, as the text parser orders them.
const (
	podBad    = "cgroup=/kubepods.slice/bad,container=iperf3,namespace=bench"
	podGood   = "cgroup=/kubepods.slice/good,container=iperf3,namespace=bench"
	podShared = "cgroup=/kubepods.slice/shared,container=,namespace="
)

// podSeriesOf parses the text of st's series.
func podSeriesOf(t *testing.T, st *audit.State) map[string][]string {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(podText(t, st)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for name, mf := range mfs {
		out[name] = series(mf)
	}
	return out
}

// TestPodSeries: each selected group has its CPUs, whether they are its
// own and its running processes (none: the tree has none, and the audit
// says so as proc-absent); the isolated partition taking eth0's IRQ 285
// counts it, per NIC, and carries the audit's cgroup-exclusive-irq with
// its pod's labels; the good partition counts 0, but its CPUs 18-19 are
// the SMT siblings of 50-51, where IRQs 284 and 287 land
// (cgroup-shared-core); the member group has no IRQ count.
func TestPodSeries(t *testing.T) {
	got := podSeriesOf(t, readPods(t, podTree(t), nil, nil))
	absent := func(group, pod string) string {
		c, rest, _ := strings.Cut(group, ",")
		return c + ",check=proc-absent," + rest + ",nic=,pod=" + pod + ",severity=warning 1"
	}
	tests := []struct {
		metric string
		want   []string
	}{
		{MetricPodCPUs, []string{podBad + ",pod=iperf-bad 2", podGood + ",pod=iperf-good 2", podShared + ",pod= 2"}},
		{MetricPodExclusive, []string{podBad + ",pod=iperf-bad 1", podGood + ",pod=iperf-good 1", podShared + ",pod= 0"}},
		{MetricPodProcesses, []string{podBad + ",pod=iperf-bad 0", podGood + ",pod=iperf-good 0", podShared + ",pod= 0"}},
		{MetricPodExclusiveIRQ, []string{podBad + ",nic=eth0,pod=iperf-bad 1", podGood + ",nic=eth0,pod=iperf-good 0"}},
		{MetricPodNICRemote, nil},
		{MetricPodFinding, []string{
			"cgroup=/kubepods.slice/bad,check=cgroup-exclusive-irq,container=iperf3,namespace=bench,nic=eth0,pod=iperf-bad,severity=warning 1",
			absent(podBad, "iperf-bad"),
			"cgroup=/kubepods.slice/good,check=cgroup-shared-core,container=iperf3,namespace=bench,nic=eth0,pod=iperf-good,severity=warning 1",
			absent(podGood, "iperf-good"), absent(podShared, "")}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, got[tt.metric]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.metric, diff)
		}
	}
}

// TestPodNICRemote: a group's pod/NIC remoteness follows the NICs its
// running processes' sockets use: the shared group on node 0's CPUs
// using eth0 (node 1) is remote, the bad one on node 1's is not, and the
// good one, whose process's sockets cannot tell, has none.
func TestPodNICRemote(t *testing.T) {
	st := readPods(t, podTree(t),
		map[string][]int{"/kubepods.slice/bad": {7001}, "/kubepods.slice/good": {7002}, "/kubepods.slice/shared": {7003}},
		[]nicuse.Use{{PID: 7001, NICs: []string{"eth0"}, Attribution: unknown.Of(nicuse.AttributionSockets)},
			{PID: 7002, NICs: []string{}, Attribution: unknown.Of(nicuse.AttributionAny)},
			{PID: 7003, NICs: []string{"eth0"}, Attribution: unknown.Of(nicuse.AttributionSockets)}})
	want := []string{podBad + ",nic=eth0,pod=iperf-bad 0", podShared + ",nic=eth0,pod= 1"}
	if diff := cmp.Diff(want, podSeriesOf(t, st)[MetricPodNICRemote]); diff != "" {
		t.Errorf("%s (-want +got):\n%s", MetricPodNICRemote, diff)
	}
}

// TestPodSeriesOneSelectorManyContainers: two containers one selector
// found (a --pod of two containers) each keep their own findings: the
// one whose CPUs the IRQ lands on has it, the other none; and a group
// selected twice sends its series once.
func TestPodSeriesOneSelectorManyContainers(t *testing.T) {
	root := podTree(t)
	st := readPods(t, root, nil, nil)
	sel := proc.Selector{Kind: "pod", Cgroup: "bench/iperf"}
	var ms []proc.Match
	for _, m := range st.Matches {
		if m.Group != nil && m.Group.Exclusive {
			m.Selector = sel
			ms = append(ms, m)
		}
	}
	ms = append(ms, ms[0])
	st.Matches = ms
	for i := range st.Findings {
		if st.Findings[i].Check == audit.CheckCgroupIRQ {
			st.Findings[i].Subject = sel.String()
		}
	}
	text := podText(t, st)
	if n := strings.Count(text, MetricPodFinding+"{"); n != 1 {
		t.Errorf("%d %s series, want 1 (the bad container's):\n%s", n, MetricPodFinding, text)
	}
	if n := strings.Count(text, MetricPodCPUs+"{"); n != 2 {
		t.Errorf("%d %s series, want 2 (a group selected twice once):\n%s", n, MetricPodCPUs, text)
	}
	if !strings.Contains(text, `irqnuma_pod_exclusive_cpu_irqs{cgroup="/kubepods.slice/good",container="iperf3",namespace="bench",nic="eth0",pod="iperf-good"} 0`) {
		t.Errorf("the good container's IRQ count is not 0:\n%s", text)
	}
}

// TestPodSeriesUnknownCPUs: a group without cpuset files (its CPUs
// unknown) has its processes counted and no CPU, exclusive, IRQ or
// remoteness series, rather than a 0 that would read as "fine".
func TestPodSeriesUnknownCPUs(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	putFile(t, root, "sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n")
	putFile(t, root, "sys/fs/cgroup/nocpuset/cgroup.procs", "")
	st, err := audit.Read(hosttest.Open(t, root), audit.Selection{Selection: proc.Selection{Cgroups: []string{"/nocpuset"}}})
	if err != nil {
		t.Fatal(err)
	}
	st.Matches[0].PIDs = []int{9}
	st.Uses = append(st.Uses, nicuse.Use{PID: 9, NICs: []string{"eth0"}, Attribution: unknown.Of(nicuse.AttributionSockets)})
	text := podText(t, st)
	if !strings.Contains(text, `irqnuma_pod_processes{cgroup="/nocpuset",container="",namespace="",pod=""} 1`) {
		t.Errorf("no process count for /nocpuset:\n%s", text)
	}
	for _, m := range []string{MetricPodCPUs, MetricPodExclusive, MetricPodExclusiveIRQ, MetricPodNICRemote} {
		if strings.Contains(text, m+"{") {
			t.Errorf("%s present for a group whose CPUs are unknown:\n%s", m, text)
		}
	}
}

// TestPodSeriesKubeletUnknown: the shared member group, a pod's
// container whose exclusive CPUs the kubelet's word leaves unknown, has
// its CPUs counted but no irqnuma_pod_exclusive (0 would read as "the
// kubelet gave it none"), and the log says why once while it lasts: not
// at the next scrape that has it, again once it has gone and come back.
// The bad group, exclusive by its own partition, keeps its 1 and has no
// note.
func TestPodSeriesKubeletUnknown(t *testing.T) {
	const why = "the kubelet's pod resources API: cpu_ids malformed: 2000000 is past 1048575, the largest CPU id"
	root := podTree(t)
	kubeletUnknown := true
	read := func() (*audit.State, error) {
		st := readPods(t, root, nil, nil)
		for _, m := range st.Matches {
			if g := m.Group; g != nil && (g.Path == "/kubepods.slice/shared" || g.Path == "/kubepods.slice/bad") && kubeletUnknown {
				ref := proc.PodRef{Namespace: "bench", Name: "iperf-shared", Container: "iperf3"}
				if g.Path != "/kubepods.slice/shared" {
					ref = *g.Pod
				}
				ref.ExclusiveCPUs = unknown.NotAs[cpuset.Set](unknown.KindMalformed, why)
				g.Pod = &ref
			}
		}
		return st, nil
	}
	var log strings.Builder
	e := NewReader(read, &log)
	st, _ := read()
	got := podSeriesOf(t, st)
	shared := "cgroup=/kubepods.slice/shared,container=iperf3,namespace=bench,pod=iperf-shared"
	if want := []string{podBad + ",pod=iperf-bad 1", podGood + ",pod=iperf-good 1"}; !cmp.Equal(want, got[MetricPodExclusive]) {
		t.Errorf("%s = %q, want %q (none for the shared group)", MetricPodExclusive, got[MetricPodExclusive], want)
	}
	if !strings.Contains(strings.Join(got[MetricPodCPUs], "\n"), shared+" 2") {
		t.Errorf("%s = %q, want the shared group's 2", MetricPodCPUs, got[MetricPodCPUs])
	}
	note := `irqnuma: --cgroup /kubepods.slice/shared container "iperf3" (control group "/kubepods.slice/shared"): irqnuma_pod_exclusive left out, the kubelet's word on its CPUs not taken: "` + why + `"` + "\n"
	for i, tt := range []struct {
		unknown bool
		want    string
	}{{true, note}, {true, ""}, {false, ""}, {true, note}} {
		log.Reset()
		kubeletUnknown = tt.unknown
		e.Scrape()
		if log.String() != tt.want {
			t.Errorf("scrape %d (unknown %v): log %q, want %q", i, tt.unknown, log.String(), tt.want)
		}
	}
}

// TestPodSeriesPromtool: a scrape with per-pod series passes `promtool
// check metrics` (the exporter's whole answer, its scrape series too).
func TestPodSeriesPromtool(t *testing.T) {
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not installed (apt-get install prometheus); CI must have it")
		}
		t.Skip("promtool not installed (apt-get install prometheus)")
	}
	root := podTree(t)
	e := New(hosttest.Open(t, root), podSelection, nil)
	e.read = func() (*audit.State, error) { return readPods(t, root, nil, nil), nil }
	var buf bytes.Buffer
	if _, err := WriteText(&buf, e.Scrape()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `pod="iperf-bad"`) {
		t.Fatalf("no per-pod series in the scrape:\n%s", buf.String())
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// FuzzPodSeries: whatever a group's path and pod names hold (a cgroup
// folder's name may hold any byte but '/', a pod's labels what the API
// server took), the per-group series are one text exposition Prometheus'
// parser reads, each group's sample once; a label value that is not
// UTF-8 leaves the sample out and says so, never a panic.
func FuzzPodSeries(f *testing.F) {
	f.Add("/kubepods.slice/a", "bench", "iperf", "iperf3", "0-3", true)
	f.Add("/a\"b\\c\nd", "", "", "", "", false)
	f.Add("/\xff", "ns", "p\x00", "c", "5", true)
	f.Fuzz(func(t *testing.T, path, ns, pod, ctr, cpus string, exclusive bool) {
		g := &proc.Cgroup{Path: path, Exclusive: exclusive, Partition: unknown.Of(proc.PartitionRoot),
			Pod: &proc.PodRef{Namespace: ns, Name: pod, Container: ctr, ExclusiveCPUs: unknown.Of(cpuset.Set{})}}
		if set, err := cpuset.ParseList(cpus); err == nil {
			g.CPUs = unknown.Of(set)
		}
		st := &audit.State{Matches: []proc.Match{
			{Selector: proc.CgroupSelector(path), PIDs: []int{1}, Group: g},
			{Selector: proc.CgroupSelector(path), PIDs: []int{1}, Group: g},
		}}
		var buf bytes.Buffer
		skipped, err := WriteText(&buf, podSeries(st))
		if err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		mfs, perr := parser.TextToMetricFamilies(bytes.NewReader(buf.Bytes()))
		if perr != nil {
			t.Fatalf("parse: %v\n%s", perr, buf.String())
		}
		if skipped == nil {
			if n := len(mfs[MetricPodProcesses].GetMetric()); n != 1 {
				t.Errorf("%d %s samples for one group selected twice, want 1", n, MetricPodProcesses)
			}
		}
	})
}
