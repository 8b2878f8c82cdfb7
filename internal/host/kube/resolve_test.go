package kube

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// selectPods resolves sel on root (asking socket when not "") and
// selects its processes.
func selectPods(t *testing.T, root string, sel proc.Selection, socket string) []proc.Match {
	t.Helper()
	if err := sel.Validate(); err != nil {
		t.Fatal(err)
	}
	fsys := hosttest.Open(t, root)
	if err := Resolve(context.Background(), fsys, &sel, socket); err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	_, matches, err := proc.SelectPresent(fsys, sel)
	if err != nil {
		t.Fatalf("SelectPresent: %v", err)
	}
	return matches
}

// byContainer is a pod's matches keyed by container name ("" for the
// sandbox).
func byContainer(t *testing.T, matches []proc.Match, s proc.Selector) map[string]proc.Match {
	t.Helper()
	out := map[string]proc.Match{}
	for _, m := range matches {
		if m.Selector != s {
			continue
		}
		if m.Group == nil || m.Group.Pod == nil {
			t.Fatalf("%s: %+v has no group or pod (%s)", s, m, m.Missing)
		}
		out[m.Group.Pod.Container] = m
	}
	return out
}

// checkIperf: --pod default/iperf-server selects its iperf3 container,
// exclusive on 2-3 by by, and its sandbox, shared; conmon is no
// container.
func checkIperf(t *testing.T, matches []proc.Match, by string) {
	t.Helper()
	got := byContainer(t, matches, proc.PodSelector("default/iperf-server"))
	if len(got) != 2 {
		t.Fatalf("--pod default/iperf-server matched %d containers, want iperf3 and the sandbox: %+v", len(got), got)
	}
	m := got["iperf3"]
	g := m.Group
	want := proc.PodRef{Namespace: "default", Name: "iperf-server", UID: uidA, Container: "iperf3", ContainerID: idA}
	got1 := *g.Pod
	if got1.Namespace != want.Namespace || got1.Name != want.Name || got1.UID != want.UID || got1.Container != want.Container || got1.ContainerID != want.ContainerID || !slices.Equal(m.PIDs, []int{4301}) || !g.CPUs.Or(cpuset.Set{}).Equal(cpuset.New(2, 3)) {
		t.Errorf("iperf3: pod %+v, PIDs %v, CPUs %s; want %+v, [4301], 2-3", *g.Pod, m.PIDs, g.CPUs, want)
	}
	if !g.Exclusive || !strings.Contains(g.ExclusiveBy, by) || !strings.Contains(g.ExclusiveBy, "2-3") {
		t.Errorf("iperf3: Exclusive %v by %q, want by %s on 2-3", g.Exclusive, g.ExclusiveBy, by)
	}
	sb := got[""].Group
	if sb.Exclusive || sb.Pod.ContainerID != idSbox || !slices.Equal(got[""].PIDs, []int{4300}) {
		t.Errorf("sandbox: %+v PIDs %v, want %s shared with 4300", sb, got[""].PIDs, idSbox)
	}
}

// checkMissing: a pod that does not run is a match without a group whose
// error names it.
func checkMissing(t *testing.T, matches []proc.Match, s proc.Selector, why string) {
	t.Helper()
	for _, m := range matches {
		if m.Selector != s {
			continue
		}
		err := m.Err()
		if m.Group != nil || !errors.Is(err, proc.ErrNoPod) || !strings.Contains(err.Error(), s.String()) || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: Err = %v, group %v; want ErrNoPod naming it and %q", s, err, m.Group, why)
		}
		return
	}
	t.Errorf("no match for %s", s)
}

// TestResolveCheckpointV2: a cgroup v2 node under the systemd driver
// with the v2 checkpoint: the Guaranteed pod's container is exclusive on
// its entry's CPUs, the Burstable one shared, a container found by an ID
// prefix, a missing pod named with why.
func TestResolveCheckpointV2(t *testing.T) {
	root := v2SystemdTree(t, ckV2Text)
	sel := proc.Selection{Pods: []string{"default/iperf-server", "default/gone"}, Containers: []string{idB[:12], "ffff"}}
	matches := selectPods(t, root, sel, "")
	checkIperf(t, matches, "cpu_manager_state, v2 layout")
	b := byContainer(t, matches, proc.ContainerSelector(idB[:12]))["app"]
	if b.Group == nil || b.Group.Exclusive || b.Group.Pod.Namespace != "kube-system" || b.Group.Pod.Name != "burst-0" || !slices.Equal(b.PIDs, []int{4401}) {
		t.Errorf("--container %s = %+v, want kube-system/burst-0's app, shared", idB[:12], b)
	}
	checkMissing(t, matches, proc.PodSelector("default/gone"), "no folder default_gone_UID in /var/log/pods")
	checkMissing(t, matches, proc.ContainerSelector("ffff"), "no container group with this ID")
}

// TestResolveCheckpointV1: a cgroup v1 node under the cgroupfs driver
// with the v1 checkpoint (entries by container ID).
func TestResolveCheckpointV1(t *testing.T) {
	root := v1CgroupfsTree(t, ckV1Text)
	matches := selectPods(t, root, proc.Selection{Pods: []string{"default/iperf-server", "kube-system/burst-0"}}, "")
	checkIperf(t, matches, "cpu_manager_state, v1 layout")
	app := byContainer(t, matches, proc.PodSelector("kube-system/burst-0"))["app"]
	if app.Group == nil || app.Group.Exclusive || app.Group.Version != proc.CgroupVersionV1 || !slices.Equal(app.PIDs, []int{4401}) {
		t.Errorf("kube-system/burst-0 app = %+v, want a shared v1 group with 4401", app)
	}
}

// TestResolveNoKubelet: without a checkpoint or a socket the pods are
// still found, their CPUs exclusive by nothing, and the source says so.
func TestResolveNoKubelet(t *testing.T) {
	root := v2SystemdTree(t, "")
	sel := proc.Selection{Pods: []string{"default/iperf-server"}}
	if err := Resolve(context.Background(), hosttest.Open(t, root), &sel, ""); err != nil {
		t.Fatal(err)
	}
	res := sel.Resolved[proc.PodSelector("default/iperf-server")]
	if len(res.Groups) != 2 || res.Groups[0].ExclusiveBy != "" || res.Groups[1].ExclusiveBy != "" || !strings.Contains(res.Source, "no exclusive CPUs known") {
		t.Errorf("Resolve without a kubelet = %+v", res)
	}
}

// TestResolveBadCheckpoint: a checkpoint that does not parse is an error
// naming the file, not a guess.
func TestResolveBadCheckpoint(t *testing.T) {
	root := v2SystemdTree(t, `{"policyName":"static","defaultCpuSet":"0-1,,2"}`)
	sel := proc.Selection{Pods: []string{"default/iperf-server"}}
	err := Resolve(context.Background(), hosttest.Open(t, root), &sel, "")
	if err == nil || !strings.Contains(err.Error(), CheckpointFile) {
		t.Errorf("Resolve with a bad checkpoint = %v, want an error naming %s", err, CheckpointFile)
	}
}

// TestResolveCheckpointMalformedEntry: a checkpoint entry whose CPUs
// do not parse (an id past cpuset.MaxID) leaves that container's
// exclusive CPUs unknown, saying why with the id and the bound, and the
// other pod's entry stands, as does everything when an entry of a pod
// nobody asked for is malformed.
func TestResolveCheckpointMalformedEntry(t *testing.T) {
	ck := `{"policyName":"static","defaultCpuSet":"0-1,5-7","entries":{"` + uidA + `":{"iperf3":"2-3,2000000"},"` +
		uidB + `":{"app":"4"},"00000000-0000-4000-8000-000000000000":{"x":"3-2"}},"checksum":1}`
	root := v2SystemdTree(t, ck)
	matches := selectPods(t, root, proc.Selection{Pods: []string{"default/iperf-server", "kube-system/burst-0"}}, "")
	ip := byContainer(t, matches, proc.PodSelector("default/iperf-server"))["iperf3"].Group
	if want := `cpu_manager_state, v2 layout: its entry is malformed: cpu list "2-3,2000000": id 2000000 above 1048575`; ip.Exclusive || !strings.Contains(exclusiveWhy(ip), want) {
		t.Errorf("iperf3: Exclusive %v, why %q; want not exclusive, why %q", ip.Exclusive, exclusiveWhy(ip), want)
	}
	app := byContainer(t, matches, proc.PodSelector("kube-system/burst-0"))["app"].Group
	if !app.Exclusive || !strings.Contains(app.ExclusiveBy, "gives it 4") {
		t.Errorf("app: Exclusive %v by %q, want by the checkpoint on 4", app.Exclusive, app.ExclusiveBy)
	}
}

// TestResolveAPINoCheckpoint: with the kubelet's API answering, the
// checkpoint is not read: one that does not parse is no error.
func TestResolveAPINoCheckpoint(t *testing.T) {
	root := v2SystemdTree(t, `{"policyName":"static","defaultCpuSet":"0-1,,2"}`)
	matches := selectPods(t, root, proc.Selection{Pods: []string{"default/iperf-server"}}, serve(t, &testKubelet{}))
	checkIperf(t, matches, "pod resources API: cpu_ids")
}

func TestParseContainerLink(t *testing.T) {
	tests := []struct {
		give    string
		want    containerLink
		wantErr bool
	}{
		{give: "iperf-server_default_iperf3-" + idA + ".log", want: containerLink{Pod: "iperf-server", Namespace: "default", Container: "iperf3", ID: idA}},
		{give: "coredns-5d78c9869d-abcde_kube-system_coredns-" + idB + ".log", want: containerLink{Pod: "coredns-5d78c9869d-abcde", Namespace: "kube-system", Container: "coredns", ID: idB}},
		{give: "a_b_my-side-car-" + idB + ".log", want: containerLink{Pod: "a", Namespace: "b", Container: "my-side-car", ID: idB}},
		{give: "a_b_c-" + idB[:63] + ".log", wantErr: true},
		{give: "a_b_c-" + idB, wantErr: true},
		{give: "a_c-" + idB + ".log", wantErr: true},
		{give: "a_b_-" + idB + ".log", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseContainerLink(tt.give)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseContainerLink(%q) = %+v, %v; want %+v, error %v", tt.give, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestPodUIDAndContainerID(t *testing.T) {
	uids := map[string]string{
		"kubepods-pod7d1c3b9e_5a4f_4e2b_9c8d_0123456789ab.slice":           uidA,
		"kubepods-burstable-pod0f9e8d7c_6b5a_4f3e_8d2c_1b0a99887766.slice": uidB,
		"pod" + uidA:               uidA,
		"kubepods-burstable.slice": "",
		"crio-" + idA + ".scope":   "",
		"podX":                     "",
	}
	for give, want := range uids {
		got, ok := podUID(give)
		if got != want || ok != (want != "") {
			t.Errorf("podUID(%q) = %q, %v; want %q", give, got, ok, want)
		}
	}
	ids := map[string]string{
		"crio-" + idA + ".scope":           idA,
		"cri-containerd-" + idA + ".scope": idA,
		"docker-" + idA + ".scope":         idA,
		"crio-" + idA:                      idA,
		idA:                                idA,
		"crio-conmon-" + idA + ".scope":    "",
		"crio-" + idA[:12] + ".scope":      "",
	}
	for give, want := range ids {
		got, ok := containerID(give)
		if ok != (want != "") || (ok && got != want) {
			t.Errorf("containerID(%q) = %q, %v; want %q", give, got, ok, want)
		}
	}
}

// exclusiveWhy is why the kubelet's word on g's exclusive CPUs is
// unknown, "" when it is known.
func exclusiveWhy(g *proc.Cgroup) string { return g.Pod.ExclusiveCPUs.Why().Detail }
