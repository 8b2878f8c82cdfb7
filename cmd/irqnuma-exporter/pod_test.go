package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/irqnuma/irqnuma/internal/host/kube"
	"github.com/irqnuma/irqnuma/internal/run/exporter"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// A Guaranteed pod on the seed tree as the kubelet and CRI-O lay it out
// (cgroup v2, systemd driver), as cmd/irqnuma's pod tests have it: its
// iperf3 container's group on CPUs 16-17, node 1, a plain member, so only
// the kubelet makes the CPUs its own.
const (
	podUID   = "7d1c3b9e-5a4f-4e2b-9c8d-0123456789ab"
	podCtrID = "3f2e9a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b"
	podGroup = "kubepods.slice/kubepods-pod7d1c3b9e_5a4f_4e2b_9c8d_0123456789ab.slice/crio-" + podCtrID + ".scope"
)

// writeFile writes data at rel under root.
func writeFile(t testing.TB, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writePod writes the pod's container group and the kubelet's log folder
// and link naming it: default/iperf-server, container iperf3.
func writePod(t testing.TB, r string) {
	t.Helper()
	writeFile(t, r, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
	for name, data := range map[string]string{"cgroup.procs": "", "cpuset.cpus.effective": "16-17\n",
		"cpuset.mems.effective": "1\n", "cpuset.cpus.partition": "member\n"} {
		writeFile(t, r, "sys/fs/cgroup/"+podGroup+"/"+name, data)
	}
	logDir := "var/log/pods/default_iperf-server_" + podUID + "/iperf3"
	writeFile(t, r, logDir+"/0.log", "")
	link := filepath.Join(r, "var/log/containers/iperf-server_default_iperf3-"+podCtrID+".log")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/"+logDir+"/0.log", link); err != nil {
		t.Fatal(err)
	}
}

// podHandler is the binary's handler on root with args' selection and
// its reading (reader: --pod and --container resolved at each scrape).
func podHandler(t *testing.T, root string, args ...string) http.Handler {
	t.Helper()
	o, done, err := parse(args, io.Discard)
	if err != nil || done {
		t.Fatalf("parse %q: %v, done %v", args, err, done)
	}
	fsys := hosttest.Open(t, root)
	h, err := newHandler(exporter.NewReader(reader(context.Background(), fsys, o.sel, o.budget), nil).Scrape, io.Discard, "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// scrapeHas scrapes h and reports the series of want it lacks; it
// checks every answer with promtool, in the text format and OpenMetrics.
func scrapeHas(t *testing.T, h http.Handler, want []string, unwanted []string) {
	t.Helper()
	_, text := get(t, h, http.MethodGet, "/metrics", "")
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("scrape lacks %s", w)
		}
	}
	for _, u := range unwanted {
		if strings.Contains(text, u) {
			t.Errorf("scrape has %s", u)
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", irqnumaPart(text))
	}
	promtool(t, text)
	_, om := get(t, h, http.MethodGet, "/metrics", "application/openmetrics-text; version=1.0.0; charset=utf-8")
	promtool(t, irqnumaPart(om))
}

const (
	podLabels  = `cgroup="/` + podGroup + `",container="iperf3",namespace="default",pod="iperf-server"`
	irqsSeries = `irqnuma_pod_exclusive_cpu_irqs{cgroup="/` + podGroup + `",container="iperf3",namespace="default",nic="eth0",pod="iperf-server"} 1`
)

// TestPodFlag: --pod and --container reach the selection as written, a
// bad one is a usage error naming it; a scrape answers the pod's
// container's series labelled with its namespace, pod and container, and
// as the pod comes and goes between scrapes so do they (resolution at
// each scrape); with the CPU manager's v2 checkpoint its exclusive CPU 17
// takes eth0's IRQ 285; a pod that does not run has no series and
// irqnuma_process_present 0.
func TestPodFlag(t *testing.T) {
	o, _, err := parse([]string{"--pod", "default/a", "--container", "3f2e9a4b", "--pod", "kube-system/b"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"default/a", "kube-system/b"}; !slices.Equal(o.sel.Pods, want) {
		t.Errorf("Pods = %q, want %q", o.sel.Pods, want)
	}
	if want := []string{"3f2e9a4b"}; !slices.Equal(o.sel.Containers, want) {
		t.Errorf("Containers = %q, want %q", o.sel.Containers, want)
	}
	for _, bad := range [][]string{{"--pod", "gone"}, {"--container", "not/an/id"}} {
		if _, _, err := parse(bad, io.Discard); err == nil || !strings.Contains(err.Error(), bad[1]) {
			t.Errorf("parse %q = %v, want a usage error naming %q", bad, err, bad[1])
		}
	}

	root := hosttest.Copy(t, "seed")
	h := podHandler(t, root, "--pod", "default/iperf-server", "--pod", "default/gone", "--container", podCtrID[:12])
	scrapeHas(t, h, []string{`irqnuma_process_present{selector="--pod default/iperf-server"} 0`},
		[]string{"irqnuma_pod_cpus{"})

	writePod(t, root)
	writeFile(t, root, "var/lib/kubelet/cpu_manager_state",
		`{"policyName":"static","defaultCpuSet":"0-15,18-63","entries":{"`+podUID+`":{"iperf3":"16-17"}},"checksum":1}`)
	scrapeHas(t, h, []string{
		`irqnuma_pod_cpus{` + podLabels + `} 2`,
		`irqnuma_pod_exclusive{` + podLabels + `} 1`,
		irqsSeries,
		`irqnuma_pod_finding{cgroup="/` + podGroup + `",check="cgroup-exclusive-irq",container="iperf3",namespace="default",nic="eth0",pod="iperf-server",severity="warning"} 1`,
		`irqnuma_process_present{selector="--pod default/gone"} 0`,
		`irqnuma_finding{check="proc-absent",nic="",severity="warning",subject="--pod default/gone"} 1`,
	}, nil)
}

// TestPodRecorded: on a tree with the kubelet's List answer recorded (as
// a snapshot keeps it, kube.RecordFile) and no checkpoint, --pod takes
// the exclusive CPUs from that answer: cpu_ids 17 only, so the group is
// exclusive and takes IRQ 285; the same tree without the answer knows no
// exclusive CPUs, and says so with irqnuma_pod_exclusive 0.
func TestPodRecorded(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	writePod(t, root)
	h := podHandler(t, root, "--pod", "default/iperf-server")
	scrapeHas(t, h, []string{`irqnuma_pod_exclusive{` + podLabels + `} 0`}, []string{"irqnuma_pod_exclusive_cpu_irqs{"})

	list, err := proto.Marshal(&podresourcesapi.ListPodResourcesResponse{PodResources: []*podresourcesapi.PodResources{
		{Name: "iperf-server", Namespace: "default", Containers: []*podresourcesapi.ContainerResources{{Name: "iperf3", CpuIds: []int64{17}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, kube.RecordFile, string(list))
	scrapeHas(t, h, []string{
		`irqnuma_pod_cpus{` + podLabels + `} 2`,
		`irqnuma_pod_exclusive{` + podLabels + `} 1`,
		irqsSeries,
	}, nil)
}

// TestPodResolveError: an answer that cannot be read (a recorded List
// that is not the protobuf message) fails the scrape, which says so with
// irqnuma_scrape_error 1 and serves no host series, and logs why.
func TestPodResolveError(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	writePod(t, root)
	writeFile(t, root, kube.RecordFile, "\xff\xff\xff")
	o, _, err := parse([]string{"--pod", "default/iperf-server"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	fsys := hosttest.Open(t, root)
	h, err := newHandler(exporter.NewReader(reader(context.Background(), fsys, o.sel, o.budget), &log).Scrape, io.Discard, "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	scrapeHas(t, h, []string{"irqnuma_scrape_error 1"}, []string{"irqnuma_pod_cpus{", "irqnuma_irq_local{"})
	if !strings.Contains(log.String(), "--pod, --container:") || !strings.Contains(log.String(), kube.RecordFile) {
		t.Errorf("log = %q, want the --pod lookup's error naming %s", log.String(), kube.RecordFile)
	}
}

// BenchmarkPodRead is one scrape's reading with --pod (kube.Resolve then
// audit.Read) on the seed tree with the pod and its checkpoint; compare
// BenchmarkCgroupRead, the same group named by --cgroup.
func BenchmarkPodRead(b *testing.B) {
	benchRead(b, "--pod", "default/iperf-server")
}

// BenchmarkCgroupRead: see BenchmarkPodRead.
func BenchmarkCgroupRead(b *testing.B) {
	benchRead(b, "--cgroup", "/"+podGroup)
}

func benchRead(b *testing.B, args ...string) {
	root := hosttest.Copy(b, "seed")
	writePod(b, root)
	writeFile(b, root, "var/lib/kubelet/cpu_manager_state",
		`{"policyName":"static","defaultCpuSet":"0-15,18-63","entries":{"`+podUID+`":{"iperf3":"16-17"}},"checksum":1}`)
	o, _, err := parse(args, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	fsys := hosttest.Open(b, root)
	read := reader(context.Background(), fsys, o.sel, o.budget)
	b.ResetTimer()
	for b.Loop() {
		if _, err := read(); err != nil {
			b.Fatal(err)
		}
	}
}

// listPods is a kubelet's pod resources List: default/iperf-server's
// iperf3 on the shared pool (no cpu_ids).
type listPods struct {
	podresourcesapi.UnimplementedPodResourcesListerServer
}

func (listPods) List(context.Context, *podresourcesapi.ListPodResourcesRequest) (*podresourcesapi.ListPodResourcesResponse, error) {
	return &podresourcesapi.ListPodResourcesResponse{PodResources: []*podresourcesapi.PodResources{
		{Name: "iperf-server", Namespace: "default", Containers: []*podresourcesapi.ContainerResources{{Name: "iperf3"}}},
	}}, nil
}

// hostileList is a kubelet whose List gives iperf3 the cpu_ids ids.
type hostileList struct {
	podresourcesapi.UnimplementedPodResourcesListerServer
	ids []int64
}

func (k hostileList) List(context.Context, *podresourcesapi.ListPodResourcesRequest) (*podresourcesapi.ListPodResourcesResponse, error) {
	return &podresourcesapi.ListPodResourcesResponse{PodResources: []*podresourcesapi.PodResources{
		{Name: "iperf-server", Namespace: "default", Containers: []*podresourcesapi.ContainerResources{{Name: "iperf3", CpuIds: k.ids}}},
	}}, nil
}

// TestPodHostileCPUIDs: a kubelet answering List with iperf3's cpu_ids
// {16, N}, N past cpuset.MaxID (1048575), over the socket under the root
// or as a snapshot recorded it, neither panics the exporter (its first
// reading is the one it takes before it listens) nor fails the scrape:
// the group's CPUs are served, irqnuma_pod_exclusive is left out (the
// checkpoint, saying 16-17, is not asked: the API answered), the audit's
// warning not-checked names the container, and the log says why.
func TestPodHostileCPUIDs(t *testing.T) {
	for _, id := range []int64{2000000, 4194303} {
		for _, via := range []string{"socket", "recorded"} {
			t.Run(fmt.Sprintf("%d %s", id, via), func(t *testing.T) {
				root := hosttest.Copy(t, "seed")
				writePod(t, root)
				writeFile(t, root, "var/lib/kubelet/cpu_manager_state",
					`{"policyName":"static","defaultCpuSet":"0-15,18-63","entries":{"`+podUID+`":{"iperf3":"16-17"}},"checksum":1}`)
				k := hostileList{ids: []int64{16, id}}
				if via == "recorded" {
					b, err := proto.Marshal(func() *podresourcesapi.ListPodResourcesResponse {
						r, _ := k.List(context.Background(), nil)
						return r
					}())
					if err != nil {
						t.Fatal(err)
					}
					writeFile(t, root, kube.RecordFile, string(b))
				} else {
					sock := filepath.Join(root, kube.SocketFile)
					if len(sock) > 107 {
						t.Skipf("%s: longer than a unix socket's path may be", sock)
					}
					if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
						t.Fatal(err)
					}
					l, err := net.Listen("unix", sock)
					if err != nil {
						t.Fatal(err)
					}
					s := grpc.NewServer()
					podresourcesapi.RegisterPodResourcesListerServer(s, k)
					go s.Serve(l)
					t.Cleanup(s.Stop)
				}
				o, _, err := parse([]string{"--pod", "default/iperf-server"}, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				var log strings.Builder
				read := reader(context.Background(), hosttest.Open(t, root), o.sel, o.budget)
				if _, err := read(); err != nil {
					t.Fatalf("first reading: %v", err)
				}
				h, err := newHandler(exporter.NewReader(read, &log).Scrape, io.Discard, "/metrics")
				if err != nil {
					t.Fatal(err)
				}
				get(t, h, http.MethodGet, "/metrics", "")
				want := fmt.Sprintf("cpu_ids malformed: %d is past 1048575, the largest CPU id", id)
				if !strings.Contains(log.String(), `--pod default/iperf-server container "iperf3"`) || !strings.Contains(log.String(), want) {
					t.Errorf("log %q, want the container and %q", log.String(), want)
				}
				scrapeHas(t, h, []string{
					"irqnuma_scrape_error 0",
					`irqnuma_pod_cpus{` + podLabels + `} 2`,
					`irqnuma_finding{check="not-checked",nic="",severity="warning",subject="cgroup-exclusive-irq for --pod default/iperf-server container iperf3"} 1`,
				}, []string{"irqnuma_pod_exclusive{", "irqnuma_pod_exclusive_cpu_irqs{"})
			})
		}
	}
}

// TestPodSocketUnderRoot: under a --root folder holding the kubelet's
// socket (the DaemonSet's /host), a scrape asks the real pod resources
// API there, ahead of the checkpoint: the API gives the container no
// exclusive CPUs, so the group is not exclusive and has no IRQ count;
// once the socket is gone the next scrape falls back to the checkpoint,
// which gives it 16-17, and counts eth0's IRQ 285 on 17.
func TestPodSocketUnderRoot(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	writePod(t, root)
	writeFile(t, root, "var/lib/kubelet/cpu_manager_state",
		`{"policyName":"static","defaultCpuSet":"0-15,18-63","entries":{"`+podUID+`":{"iperf3":"16-17"}},"checksum":1}`)
	sock := filepath.Join(root, kube.SocketFile)
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		t.Fatal(err)
	}
	if len(sock) > 107 {
		t.Skipf("%s: longer than a unix socket's path may be", sock)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	podresourcesapi.RegisterPodResourcesListerServer(s, listPods{})
	go s.Serve(l)
	defer s.Stop()

	h := podHandler(t, root, "--pod", "default/iperf-server")
	scrapeHas(t, h, []string{`irqnuma_pod_exclusive{` + podLabels + `} 0`}, []string{"irqnuma_pod_exclusive_cpu_irqs{"})
	s.Stop()
	if err := os.Remove(sock); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	scrapeHas(t, h, []string{`irqnuma_pod_exclusive{` + podLabels + `} 1`, irqsSeries}, nil)
}
