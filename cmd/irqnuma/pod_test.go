package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/irqnuma/irqnuma/internal/host/kube"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// A Guaranteed pod on the seed tree as the kubelet and CRI-O lay it out
// (cgroup v2, systemd driver): iperf3 (PID 5001) in its container on
// CPUs 16-17, which the v2 checkpoint gives it exclusively; its group is
// a plain member, so only the kubelet makes the CPUs its own.
const (
	podUID   = "7d1c3b9e-5a4f-4e2b-9c8d-0123456789ab"
	podCtrID = "3f2e9a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b"
	podGroup = "kubepods.slice/kubepods-pod7d1c3b9e_5a4f_4e2b_9c8d_0123456789ab.slice/crio-" + podCtrID + ".scope"
)

func addPod(t *testing.T, r string) {
	t.Helper()
	writeProc(t, r, 64, testProc{pid: 5001, comm: "iperf3", allowed: "16-17", sockets: iperf3OnEth0})
	writePod(t, r, 5001, "16-17", "1", "0-15,18-63")
}

// writePod writes the pod's container group holding pid on cpus and
// mems, the checkpoint giving it cpus (the rest, shared, the default
// set) and the kubelet's log folder and link naming it.
func writePod(t *testing.T, r string, pid int, cpus, mems, shared string) {
	t.Helper()
	put(t, r, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
	for name, data := range map[string]string{"cgroup.procs": strconv.Itoa(pid) + "\n", "cpuset.cpus.effective": cpus + "\n",
		"cpuset.mems.effective": mems + "\n", "cpuset.cpus.partition": "member\n"} {
		put(t, r, "sys/fs/cgroup/"+podGroup+"/"+name, data)
	}
	put(t, r, "var/lib/kubelet/cpu_manager_state", `{"policyName":"static","defaultCpuSet":"`+shared+`","entries":{"`+podUID+`":{"iperf3":"`+cpus+`"}},"checksum":1}`)
	logDir := "var/log/pods/default_iperf-server_" + podUID + "/iperf3"
	put(t, r, logDir+"/0.log", "")
	link := filepath.Join(r, "var/log/containers/iperf-server_default_iperf3-"+podCtrID+".log")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/"+logDir+"/0.log", link); err != nil {
		t.Fatal(err)
	}
}

// TestAuditPod: --pod takes the container's group with the kubelet's
// exclusive CPUs, so cgroup-exclusive-irq names IRQ 285 on CPU 17 and
// says the CPU manager made them exclusive; the same from a snapshot
// taken with --pod; a pod that does not run is a proc-absent finding
// naming it.
func TestAuditPod(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	addPod(t, root)
	snap := snapshotOf(t, root, "--pod", "default/iperf-server")
	for _, r := range []string{root, snap} {
		doc, _ := auditJSON(t, r, "--pod", "default/iperf-server", "--pod", "default/gone", "--container", podCtrID[:12])
		var hit int
		for _, f := range byCheck(doc, audit.CheckCgroupIRQ) {
			if slices.Equal(f.IRQ, []int{285}) && f.CPUs == "17" && strings.Contains(f.Message, "CPU manager") && strings.Contains(f.Message, podGroup) {
				hit++
			}
		}
		if hit != 2 { // once for --pod, once for --container
			t.Errorf("%s: cgroup-exclusive-irq findings %+v, want IRQ 285 on 17 by the CPU manager for --pod and --container", r, byCheck(doc, audit.CheckCgroupIRQ))
		}
		absent := byCheck(doc, audit.CheckProcAbsent)
		if len(absent) != 1 || !strings.Contains(absent[0].Message, "no pod default/gone") || !strings.Contains(absent[0].Message, "/var/log/pods") {
			t.Errorf("%s: proc-absent %+v, want one naming default/gone", r, absent)
		}
	}
}

// recordList writes, as a snapshot records it (kube.RecordFile), the
// kubelet's List answer giving default/iperf-server's iperf3 cpuIDs.
func recordList(t *testing.T, root string, cpuIDs []int64) {
	t.Helper()
	b, err := proto.Marshal(&podresourcesapi.ListPodResourcesResponse{PodResources: []*podresourcesapi.PodResources{
		{Name: "iperf-server", Namespace: "default", Containers: []*podresourcesapi.ContainerResources{{Name: "iperf3", CpuIds: cpuIDs}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	put(t, root, kube.RecordFile, string(b))
}

// TestAuditPodHostileCPUIDs: the kubelet's List answer (as recorded)
// giving iperf3 cpu_ids {16, N} with N past cpuset.MaxID (1048575), or
// a million cpu_ids on the 64-CPU seed host, is an audit with a finding,
// not an internal error nor the container holding CPUs 0-999999: a
// warning not-checked of cgroup-exclusive-irq naming the container and
// N and the bound, or the CPUs the host does not have, and no IRQ on its
// CPUs called one on exclusive CPUs; the same answer with cpu_ids 16-17
// is the finding that IRQ 285 lands on CPU 17.
func TestAuditPodHostileCPUIDs(t *testing.T) {
	t.Parallel()
	million := make([]int64, 1000000)
	for i := range million {
		million[i] = int64(i)
	}
	tests := []struct {
		give    []int64
		wantIRQ int    // cgroup-exclusive-irq findings
		want    string // in the not-checked's message; "" for none
	}{
		{give: []int64{16, 2000000}, want: "cpu_ids malformed: 2000000 is past 1048575, the largest CPU id"},
		{give: []int64{16, 4194303}, want: "cpu_ids malformed: 4194303 is past 1048575, the largest CPU id"},
		{give: million, want: "cpu_ids 0-999999, naming CPUs 64-999999, which this host does not have (it has 0-63)"},
		{give: []int64{16, 17}, wantIRQ: 1},
	}
	for _, tt := range tests {
		root := hosttest.Copy(t, "seed")
		addPod(t, root)
		recordList(t, root, tt.give)
		doc, _ := auditJSON(t, root, "--pod", "default/iperf-server")
		if got := byCheck(doc, audit.CheckCgroupIRQ); len(got) != tt.wantIRQ {
			t.Errorf("%d cpu_ids: cgroup-exclusive-irq %+v, want %d", len(tt.give), got, tt.wantIRQ)
		}
		var nc []auditFinding
		for _, f := range byCheck(doc, audit.CheckNotChecked) {
			if strings.HasPrefix(f.Subject, string(audit.CheckCgroupIRQ)) {
				nc = append(nc, f)
			}
		}
		switch {
		case tt.want == "" && len(nc) != 0:
			t.Errorf("%d cpu_ids: not-checked %+v, want none", len(tt.give), nc)
		case tt.want != "" && (len(nc) != 1 || nc[0].Severity != "warning" || nc[0].Subject != "cgroup-exclusive-irq for --pod default/iperf-server container iperf3" ||
			!strings.Contains(nc[0].Message, "pod default/iperf-server container iperf3") || !strings.Contains(nc[0].Message, tt.want)):
			t.Errorf("%d cpu_ids: not-checked %+v, want one warning naming iperf3 and saying %q", len(tt.give), nc, tt.want)
		}
	}
}

// TestMaskPod: mask --pod offers the CPUs of the pod's containers, and a
// pod or container that is not there is a usage error naming it.
func TestMaskPod(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	addPod(t, root)
	tests := []struct {
		give     []string
		want     string
		wantCode int
		wantErr  string
	}{
		{[]string{"--pod", "default/iperf-server"}, "16-17\n", 0, ""},
		{[]string{"--container", podCtrID[:8], "--count", "1"}, "16\n", 0, ""},
		{[]string{"--pod", "default/gone"}, "", 2, "--pod default/gone: no such pod or container (no folder default_gone_UID in /var/log/pods)"},
		{[]string{"--container", "abcdef"}, "", 2, "--container abcdef: no such pod or container"},
		{[]string{"--pod", "gone"}, "", 2, "want NAMESPACE/NAME"},
		{[]string{"--pod", "default/iperf-server", "--cgroup", "/x"}, "", 2, "--cgroup and --pod: give one group"},
	}
	for _, tt := range tests {
		out, errOut, code := runCLI(t, append([]string{"--root", root, "mask"}, tt.give...)...)
		if out != tt.want || code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) {
			t.Errorf("mask %s = %q, %q, exit %d; want %q, exit %d, stderr with %q", strings.Join(tt.give, " "), out, errOut, code, tt.want, tt.wantCode, tt.wantErr)
		}
	}
}

// TestAuditPodGroupChecks: the group checks name a pod's container in
// their message and give a pod's fixes: on node 0's CPUs 2-3 with eth0
// on node 1, cgroup-nic-remote names the topology manager; on 18-19, the
// SMT siblings of IRQ CPUs 50-51, cgroup-shared-core is a warning (the
// CPU manager made them the container's) naming CRI-O's annotation.
func TestAuditPodGroupChecks(t *testing.T) {
	t.Parallel()
	const named = "pod default/iperf-server container iperf3 (control group /" + podGroup + ")"
	tests := []struct {
		cpus, mems, shared string
		check              audit.Check
		sev, fix           string
	}{
		{"2-3", "0", "0-1,4-63", audit.CheckCgroupNICRemote, "error", "--topology-manager-policy=single-numa-node"},
		{"18-19", "1", "0-17,20-63", audit.CheckCgroupSharedCore, "warning", `irq-load-balancing.crio.io: "disable"`},
	}
	for _, tt := range tests {
		root := hosttest.Copy(t, "seed")
		writeProc(t, root, 64, testProc{pid: 5001, comm: "iperf3", allowed: tt.cpus, sockets: iperf3OnEth0})
		writePod(t, root, 5001, tt.cpus, tt.mems, tt.shared)
		doc, _ := auditJSON(t, root, "--pod", "default/iperf-server")
		got := byCheck(doc, tt.check)
		if len(got) != 1 || got[0].Severity != tt.sev || got[0].Subject != "--pod default/iperf-server" ||
			!strings.Contains(got[0].Message, named) || !strings.Contains(got[0].Fix, tt.fix) {
			t.Errorf("pod on %s: %s = %+v, want one %s naming the container, its fix saying %q", tt.cpus, tt.check, got, tt.sev, tt.fix)
		}
	}
}

// writeCRIOConfig writes the pod container's OCI config as CRI-O keeps
// it in its storage, with the pod's irq-load-balancing.crio.io value
// and, as real configs do, an environment irqnuma must not capture.
func writeCRIOConfig(t *testing.T, r, value, cpus string) {
	t.Helper()
	put(t, r, "var/lib/containers/storage/overlay-containers/"+podCtrID+"/userdata/config.json",
		`{"ociVersion":"1.2.0","process":{"env":["PATH=/usr/bin","API_TOKEN=s3cr3t"],"args":["iperf3","-s"]},`+
			`"annotations":{"io.kubernetes.container.name":"iperf3","irq-load-balancing.crio.io":"`+value+`"},`+
			`"linux":{"resources":{"cpu":{"shares":2048,"cpus":"`+cpus+`"}}}}`)
}

// TestAuditPodIRQBalancing: the pod asked CRI-O to keep IRQs off its
// container's CPUs 16-17, and eth0's IRQ 285 is on CPU 17: a
// pod-irq-balancing finding naming the annotation and the config, the
// same from a snapshot taken with --pod, which keeps the annotation and
// the CPUs of the config and nothing else of it.
func TestAuditPodIRQBalancing(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	addPod(t, root)
	writeCRIOConfig(t, root, "disable", "16-17")
	snap := snapshotOf(t, root, "--pod", "default/iperf-server")
	for _, r := range []string{root, snap} {
		doc, _ := auditJSON(t, r, "--pod", "default/iperf-server")
		got := byCheck(doc, audit.CheckPodIRQBalancing)
		if len(got) != 1 || !slices.Equal(got[0].IRQ, []int{285}) || got[0].CPUs != "17" ||
			!strings.Contains(got[0].Message, `(irq-load-balancing.crio.io: "disable", `) ||
			!strings.Contains(got[0].Message, "overlay-containers/"+podCtrID+"/userdata/config.json") {
			t.Errorf("%s: pod-irq-balancing %+v, want IRQ 285 on CPU 17 naming the annotation and its config", r, got)
		}
		for _, f := range byCheck(doc, audit.CheckCgroupIRQ) {
			if strings.Contains(f.Fix, "annotate the pod") {
				t.Errorf("%s: cgroup-exclusive-irq's fix %q asks for the annotation the pod has", r, f.Fix)
			}
		}
	}
	out, errOut, code := runCLI(t, "snapshot", "--root", root, "--pod", "default/iperf-server", "-o", "-")
	if code != 0 {
		t.Fatalf("snapshot -o -: %d %s", code, errOut)
	}
	text := tarText(t, out)
	if !strings.Contains(text, `{"annotations":{"irq-load-balancing.crio.io":"disable"},"linux":{"resources":{"cpu":{"cpus":"16-17"}}}}`) {
		t.Error("the snapshot does not keep the container's annotation and CPUs")
	}
	if strings.Contains(text, "s3cr3t") {
		t.Error("the snapshot holds the container's environment")
	}
}

// tarText is every file's bytes of a gzip-compressed tar archive, one
// after another.
func tarText(t *testing.T, archive string) string {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	tr := tar.NewReader(zr)
	for {
		_, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return all.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(&all, tr); err != nil {
			t.Fatal(err)
		}
	}
}
