package kube

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
)

// testKubelet serves the real pod resources API (the generated service
// registration of k8s.io/kubelet) with the pods the tree models: the
// Guaranteed iperf3 on CPUs 2-3 with a VF on node 1, the Burstable app on
// the shared pool. Every method answers as the kubelet does; List fails
// with listErr when it is set, and answers pods instead when they are.
type testKubelet struct {
	podresourcesapi.UnimplementedPodResourcesListerServer
	listErr error
	pods    []*podresourcesapi.PodResources
}

var testPods = []*podresourcesapi.PodResources{
	{Name: "iperf-server", Namespace: "default", Containers: []*podresourcesapi.ContainerResources{{
		Name:   "iperf3",
		CpuIds: []int64{2, 3},
		Devices: []*podresourcesapi.ContainerDevices{{ResourceName: "intel.com/sriov_netdevice", DeviceIds: []string{"0000:3b:02.1"},
			Topology: &podresourcesapi.TopologyInfo{Nodes: []*podresourcesapi.NUMANode{{ID: 1}}}}},
	}}},
	{Name: "burst-0", Namespace: "kube-system", Containers: []*podresourcesapi.ContainerResources{{Name: "app"}}},
}

func (k *testKubelet) List(context.Context, *podresourcesapi.ListPodResourcesRequest) (*podresourcesapi.ListPodResourcesResponse, error) {
	if k.listErr != nil {
		return nil, k.listErr
	}
	if k.pods != nil {
		return &podresourcesapi.ListPodResourcesResponse{PodResources: k.pods}, nil
	}
	return &podresourcesapi.ListPodResourcesResponse{PodResources: testPods}, nil
}

func (k *testKubelet) Get(_ context.Context, r *podresourcesapi.GetPodResourcesRequest) (*podresourcesapi.GetPodResourcesResponse, error) {
	for _, p := range testPods {
		if p.Name == r.PodName && p.Namespace == r.PodNamespace {
			return &podresourcesapi.GetPodResourcesResponse{PodResources: p}, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "pod %s not found in %s", r.PodName, r.PodNamespace)
}

func (k *testKubelet) GetAllocatableResources(context.Context, *podresourcesapi.AllocatableResourcesRequest) (*podresourcesapi.AllocatableResourcesResponse, error) {
	return &podresourcesapi.AllocatableResourcesResponse{CpuIds: []int64{2, 3, 4, 5, 6, 7},
		Devices: []*podresourcesapi.ContainerDevices{{ResourceName: "intel.com/sriov_netdevice", DeviceIds: []string{"0000:3b:02.1", "0000:3b:02.2"},
			Topology: &podresourcesapi.TopologyInfo{Nodes: []*podresourcesapi.NUMANode{{ID: 1}}}}}}, nil
}

// serve starts k on a unix socket in a temporary folder.
func serve(t *testing.T, k *testKubelet) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "kubelet.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	podresourcesapi.RegisterPodResourcesListerServer(s, k)
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return sock
}

// TestClient: List against the real service decodes as the kubelet's
// protobuf says, and its errors keep the kubelet's status and message.
func TestClient(t *testing.T) {
	ctx := context.Background()
	c := newClient(serve(t, &testKubelet{}))
	defer c.Close()
	pods, err := c.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(pods) != 2 || pods[0].Namespace != "default" || pods[0].Name != "iperf-server" || len(pods[0].Containers) != 1 {
		t.Fatalf("List = %+v", pods)
	}
	ip := pods[0].Containers[0]
	if ip.Name != "iperf3" || !ip.CPUs.Or(cpuset.Set{}).Equal(cpuset.New(2, 3)) || len(ip.Devices) != 1 ||
		ip.Devices[0].Resource != "intel.com/sriov_netdevice" || !slices.Equal(ip.Devices[0].IDs, []string{"0000:3b:02.1"}) || !slices.Equal(ip.Devices[0].Nodes, []int{1}) {
		t.Errorf("List's iperf3 = %+v", ip)
	}
	if app := pods[1].Containers[0]; app.Name != "app" || !app.CPUs.Known() || !app.CPUs.Or(cpuset.New(0)).IsEmpty() {
		t.Errorf("List's app = %+v, want no cpu_ids", app)
	}
	// The kubelet's errors come back as its gRPC status and message.
	c2 := newClient(serve(t, &testKubelet{listErr: status.Error(codes.Unavailable, "kubelet is restarting")}))
	defer c2.Close()
	if _, err := c2.List(ctx); err == nil || !strings.Contains(err.Error(), "gRPC status 14: kubelet is restarting") {
		t.Errorf("List on a failing kubelet = %v, want status 14 with its message", err)
	}
	c3 := newClient(serve(t, &testKubelet{listErr: status.Error(codes.Unimplemented, "method List not implemented")}))
	defer c3.Close()
	if _, err := c3.List(ctx); !errors.Is(err, ErrUnimplemented) {
		t.Errorf("List on a kubelet without it = %v, want ErrUnimplemented", err)
	}
	if _, err := newClient(filepath.Join(t.TempDir(), "none.sock")).List(ctx); err == nil {
		t.Error("List on no socket succeeded")
	}
}

// TestResolveAPI: with the kubelet answering, its cpu_ids make the
// container exclusive (the checkpoint, saying otherwise, is not read for
// it), and a pod the API does not list is missing, named with why.
func TestResolveAPI(t *testing.T) {
	root := v2SystemdTree(t, `{"policyName":"static","defaultCpuSet":"0-7","checksum":1}`)
	sock := serve(t, &testKubelet{})
	matches := selectPods(t, root, proc.Selection{Pods: []string{"default/iperf-server", "default/gone"}}, sock)
	checkIperf(t, matches, "pod resources API: cpu_ids")
	checkMissing(t, matches, proc.PodSelector("default/gone"), "the kubelet's pod resources API lists no pod default/gone")
	ip := byContainer(t, matches, proc.PodSelector("default/iperf-server"))["iperf3"].Group.Pod
	if len(ip.Devices) != 1 || ip.Devices[0].Resource != "intel.com/sriov_netdevice" || !slices.Equal(ip.Devices[0].IDs, []string{"0000:3b:02.1"}) || !slices.Equal(ip.Devices[0].Nodes, []int{1}) {
		t.Errorf("iperf3's devices = %+v, want the VF 0000:3b:02.1 on node 1", ip.Devices)
	}
}

// TestResolveAPIHostileCPUIDs: a List answer whose cpu_ids for iperf3
// (or for its pod) hold an id no CPU has, past cpuset.MaxID or below 0,
// leaves whether the container's CPUs are its own unknown, saying why
// with the id and the bound; the group is still found, and the other
// pod of the answer still reads.
func TestResolveAPIHostileCPUIDs(t *testing.T) {
	root := v2SystemdTree(t, "")
	tests := []struct {
		give    []int64 // iperf3's cpu_ids
		givePod []int64 // the pod's
		want    string
	}{
		{give: []int64{16, 2000000}, want: "the kubelet's pod resources API: cpu_ids malformed: 2000000 is past 1048575, the largest CPU id"},
		{give: []int64{2, 4194303}, want: "cpu_ids malformed: 4194303 is past 1048575"},
		{give: []int64{2, 1 << 22}, want: "cpu_ids malformed: 4194304 is past 1048575"},
		{give: []int64{1<<63 - 1}, want: "cpu_ids malformed: 9223372036854775807 is past 1048575"},
		{give: []int64{2, -1}, want: "cpu_ids malformed: -1 is not a CPU id"},
		{give: []int64{2, 3}, givePod: []int64{2000000}, want: "the kubelet's pod resources API, the pod's cpu_ids malformed: 2000000 is past 1048575"},
	}
	for _, tt := range tests {
		pods := []*podresourcesapi.PodResources{
			{Name: "iperf-server", Namespace: "default", CpuIds: tt.givePod, Containers: []*podresourcesapi.ContainerResources{{Name: "iperf3", CpuIds: tt.give}}},
			{Name: "burst-0", Namespace: "kube-system", Containers: []*podresourcesapi.ContainerResources{{Name: "app", CpuIds: []int64{4}}}},
		}
		sock := serve(t, &testKubelet{pods: pods})
		matches := selectPods(t, root, proc.Selection{Pods: []string{"default/iperf-server", "kube-system/burst-0"}}, sock)
		g := byContainer(t, matches, proc.PodSelector("default/iperf-server"))["iperf3"].Group
		if g == nil || g.Exclusive || g.ExclusiveBy != "" || !strings.Contains(exclusiveWhy(g), tt.want) {
			t.Errorf("cpu_ids %d (pod %d): iperf3 = %+v, want not exclusive, why %q", tt.give, tt.givePod, g, tt.want)
		}
		app := byContainer(t, matches, proc.PodSelector("kube-system/burst-0"))["app"].Group
		if app == nil || !app.Exclusive || exclusiveWhy(app) != "" || !strings.Contains(app.ExclusiveBy, "cpu_ids 4") {
			t.Errorf("cpu_ids %d: the other pod's app = %+v, want exclusive by cpu_ids 4", tt.give, app)
		}
	}
}

// FuzzDecodeList: any bytes decode or are an error, never a panic, and
// CPUs said malformed are none.
func FuzzDecodeList(f *testing.F) {
	f.Add([]byte{0x0a, 0x08, 0x0a, 0x01, 'a', 0x22, 0x02, 0x02, 0x03, 0x1a, 0x00})
	f.Add([]byte{0x0a, 0x08, 0x1a, 0x06, 0x1a, 0x04, 0x10, 0x80, 0x89, 0x7a}) // a container's cpu_ids {16, 2000000}
	f.Fuzz(func(t *testing.T, b []byte) {
		pods, err := decodeList(b)
		if err != nil {
			return
		}
		for _, p := range pods {
			if !p.CPUs.Known() && !p.CPUs.Or(cpuset.Set{}).IsEmpty() {
				t.Fatalf("pod %+v: CPUs beside why", p)
			}
			for _, c := range p.Containers {
				if !c.CPUs.Known() && !c.CPUs.Or(cpuset.Set{}).IsEmpty() {
					t.Fatalf("container %+v: CPUs beside why", c)
				}
			}
		}
	})
}

// TestRecordReplay: what Record takes from the kubelet, written into a
// tree as a snapshot does, is read back on the tree as the API's answer.
func TestRecordReplay(t *testing.T) {
	root := v2SystemdTree(t, "")
	sock := serve(t, &testKubelet{})
	note, err := Record(context.Background(), sock, func(rel string, data []byte) error {
		writeTree(t, root, map[string]string{rel: string(data)})
		return nil
	})
	if err != nil || note != "" {
		t.Fatalf("Record = %q, %v", note, err)
	}
	matches := selectPods(t, root, proc.Selection{Pods: []string{"default/iperf-server"}}, "")
	checkIperf(t, matches, "pod resources API: cpu_ids")
	if note, err := Record(context.Background(), filepath.Join(t.TempDir(), "none.sock"), nil); err != nil || !strings.Contains(note, "none.sock") {
		t.Errorf("Record without a socket = %q, %v; want a note naming it", note, err)
	}
}

// TestResolveCPUsOffHost: on the 8-CPU node, the kubelet's word on
// iperf3's CPUs, from the API (a million cpu_ids among them) or the
// checkpoint, naming CPUs the node does not have is not taken: the
// container is not exclusive by it, and why names those CPUs and the
// node's; on a node whose CPUs cannot be read it is not taken either.
// Within the node's CPUs it is taken.
func TestResolveCPUsOffHost(t *testing.T) {
	million := make([]int64, 1000000)
	for i := range million {
		million[i] = int64(i)
	}
	ckOff := `{"policyName":"static","defaultCpuSet":"0-1,4-7","entries":{"` + uidA + `":{"iperf3":"2-3,64"}},"checksum":1}`
	tests := []struct {
		name       string
		give       []int64 // iperf3's cpu_ids; nil: no kubelet, the checkpoint ckOff says
		noCPUFiles bool
		want       string // in why ExclusiveCPUs is unknown; "" for exclusive on 2-3
	}{
		{name: "a million cpu_ids", give: million,
			want: "the kubelet's pod resources API: cpu_ids 0-999999, naming CPUs 8-999999, which this host does not have (it has 0-7)"},
		{name: "one CPU off the node", give: []int64{2, 9}, want: "cpu_ids 2,9, naming CPUs 9, which this host does not have (it has 0-7)"},
		{name: "the checkpoint", want: "gives it 2-3,64, naming CPUs 64, which this host does not have (it has 0-7)"},
		{name: "no CPU files", give: []int64{2, 3}, noCPUFiles: true, want: "but which CPUs this host has is unknown"},
		{name: "on the node", give: []int64{2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := v2SystemdTree(t, ckOff)
			if tt.noCPUFiles {
				if err := os.RemoveAll(filepath.Join(root, "sys/devices/system/cpu")); err != nil {
					t.Fatal(err)
				}
			}
			sock := ""
			if tt.give != nil {
				sock = serve(t, &testKubelet{pods: []*podresourcesapi.PodResources{{Name: "iperf-server", Namespace: "default",
					Containers: []*podresourcesapi.ContainerResources{{Name: "iperf3", CpuIds: tt.give}}}}})
			}
			matches := selectPods(t, root, proc.Selection{Pods: []string{"default/iperf-server"}}, sock)
			g := byContainer(t, matches, proc.PodSelector("default/iperf-server"))["iperf3"].Group
			switch {
			case tt.want == "" && (!g.Exclusive || exclusiveWhy(g) != "" || !strings.Contains(g.ExclusiveBy, "cpu_ids 2-3")):
				t.Errorf("iperf3: Exclusive %v by %q, why %q; want exclusive by cpu_ids 2-3", g.Exclusive, g.ExclusiveBy, exclusiveWhy(g))
			case tt.want != "" && (g.Exclusive || g.ExclusiveBy != "" || !strings.Contains(exclusiveWhy(g), tt.want)):
				t.Errorf("iperf3: Exclusive %v by %q, why %q; want not exclusive, why %q", g.Exclusive, g.ExclusiveBy, exclusiveWhy(g), tt.want)
			}
		})
	}
}
