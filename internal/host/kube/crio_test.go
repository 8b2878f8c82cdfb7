package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// crioSpec is an OCI config as CRI-O writes a container's: the pod's
// allowed annotations beside CRI-O's own, and the CPUs of its cgroup.
func crioSpec(annotations, cpus string) string {
	return `{"ociVersion":"1.2.0","process":{"args":["iperf3","-s"]},"annotations":{` +
		`"io.kubernetes.cri-o.SandboxID":"` + idSbox + `","io.kubernetes.container.name":"iperf3"` + annotations + `},` +
		`"linux":{"resources":{"cpu":{"shares":2048,"cpus":"` + cpus + `","mems":"0"}}}}`
}

// TestParseIRQBalancing: the container's own key before the pod's;
// disable, the deprecated true and housekeeping keep IRQs off, other
// values do not; the CPUs are linux.resources.cpu.cpus.
func TestParseIRQBalancing(t *testing.T) {
	tests := []struct {
		give, name string
		value, key string
		off, hk    bool
		cpus       string
		wantErr    string
	}{
		{give: crioSpec(`,"irq-load-balancing.crio.io":"disable"`, "2-3"), name: "iperf3",
			value: "disable", key: IRQLoadBalancing, off: true, cpus: "2-3"},
		{give: crioSpec(`,"irq-load-balancing.crio.io":"disable","irq-load-balancing.crio.io/iperf3":"enable"`, "2-3"), name: "iperf3",
			value: "enable", key: IRQLoadBalancing + "/iperf3", cpus: "2-3"},
		{give: crioSpec(`,"irq-load-balancing.crio.io/other":"disable"`, "4"), name: "iperf3", cpus: "4"},
		{give: crioSpec(`,"irq-load-balancing.crio.io":"true"`, "2-3"), name: "iperf3", value: "true", key: IRQLoadBalancing, off: true, cpus: "2-3"},
		{give: crioSpec(`,"irq-load-balancing.crio.io":"housekeeping"`, "2-5"), name: "iperf3",
			value: "housekeeping", key: IRQLoadBalancing, off: true, hk: true, cpus: "2-5"},
		{give: `{"annotations":{"irq-load-balancing.crio.io":"disable"}}`, name: "iperf3", value: "disable", key: IRQLoadBalancing, off: true},
		{give: `null`, name: "iperf3"},
		{give: `[1]`, wantErr: "not a JSON object"},
		{give: `{"annotations":{"irq-load-balancing.crio.io":1}}`, wantErr: "annotations"},
		{give: crioSpec("", "3-1"), wantErr: "linux.resources.cpu.cpus"},
		{give: `{"annotations":`, wantErr: "unexpected end"},
	}
	for _, tt := range tests {
		got, err := parseIRQBalancing([]byte(tt.give), tt.name)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseIRQBalancing(%.60q) = %+v, %v; want an error saying %q", tt.give, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.Value != tt.value || got.Key != tt.key || got.Off != tt.off || got.Housekeeping != tt.hk ||
			got.CPUs.Known() != (tt.cpus != "") || got.CPUs.Or(cpuset.Set{}).List() != tt.cpus {
			t.Errorf("parseIRQBalancing(%.60q, %s) = %+v, %v; want %q from %q, off %v, housekeeping %v, CPUs %q", tt.give, tt.name, got, err, tt.value, tt.key, tt.off, tt.hk, tt.cpus)
		}
	}
}

func FuzzParseIRQBalancing(f *testing.F) {
	f.Add([]byte(crioSpec(`,"irq-load-balancing.crio.io":"disable"`, "2-3")), "iperf3")
	f.Add([]byte(`{"linux":{"resources":{"cpu":{"cpus":"0-4095"}}}}`), "")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		ib, err := parseIRQBalancing(b, name)
		if err == nil && (ib == nil || ib.Off != (ib.Value == "disable" || ib.Value == "true" || ib.Value == "housekeeping") ||
			(!ib.CPUs.Known() && !ib.CPUs.Or(cpuset.Set{}).IsEmpty())) {
			t.Fatalf("parseIRQBalancing(%q, %q) = %+v", b, name, ib)
		}
	})
}

// TestResolveIRQBalancing: a pod's container resolved on a CRI-O node
// carries the annotation its config in CRI-O's storage holds; the
// sandbox reads none; a container CRI-O runs without a config there says
// why it is unknown; a malformed config says why, naming the file.
func TestResolveIRQBalancing(t *testing.T) {
	root := v2SystemdTree(t, "")
	cfg := filepath.Join(root, "var/lib/containers/storage/overlay-containers", idA, "userdata", "config.json")
	put := func(data string) {
		if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	put(crioSpec(`,"irq-load-balancing.crio.io":"disable"`, "2-3"))
	sel := proc.Selection{Pods: []string{"default/iperf-server", "kube-system/burst-0"}}
	matches := selectPods(t, root, sel, "")
	iperf := byContainer(t, matches, proc.PodSelector("default/iperf-server"))
	ib, ok := iperf["iperf3"].Group.Pod.IRQBalancing.Get()
	if !ok || !ib.Off || ib.Value != "disable" || !ib.CPUs.Or(cpuset.Set{}).Equal(cpuset.New(2, 3)) || !strings.HasSuffix(ib.From, idA+"/userdata/config.json") {
		t.Errorf("iperf3's IRQ balancing %+v (%s), want disable on 2-3 from its config", ib, iperf["iperf3"].Group.Pod.IRQBalancing.Why())
	}
	if sb := iperf[""].Group.Pod; sb.IRQBalancing.Known() || sb.IRQBalancing.Why().Kind != unknown.KindNotApplicable {
		t.Errorf("the sandbox's IRQ balancing %s (%s), want none read", sb.IRQBalancing, sb.IRQBalancing.Why())
	}
	app := byContainer(t, matches, proc.PodSelector("kube-system/burst-0"))["app"].Group.Pod
	if app.IRQBalancing.Known() || !strings.HasPrefix(app.IRQBalancing.Why().Detail, "CRI-O runs container 5b6c7d8e9fa0…, but no DRIVER-containers/ID/userdata/config.json of it is under /var/lib/containers/storage or /run/containers/storage") {
		t.Errorf("app, which CRI-O runs, without a config: IRQ balancing %s (%s), want unknown, saying why", app.IRQBalancing, app.IRQBalancing.Why())
	}
	put(`{"annotations":[]}`)
	iperf = byContainer(t, selectPods(t, root, sel, ""), proc.PodSelector("default/iperf-server"))
	if p := iperf["iperf3"].Group.Pod; p.IRQBalancing.Known() || !strings.Contains(p.IRQBalancing.Why().Detail, "config.json") {
		t.Errorf("a malformed config: %s (%s), want unknown and why naming it", p.IRQBalancing, p.IRQBalancing.Why())
	}
}

// TestResolveIRQBalancingContainerd: a container containerd runs (its
// group is the bare ID) has no CRI-O config to read, and that is no
// unknown.
func TestResolveIRQBalancingContainerd(t *testing.T) {
	root := v1CgroupfsTree(t, ckV1Text)
	matches := selectPods(t, root, proc.Selection{Pods: []string{"default/iperf-server"}}, "")
	for name, m := range byContainer(t, matches, proc.PodSelector("default/iperf-server")) {
		if p := m.Group.Pod; p.IRQBalancing.Known() || p.IRQBalancing.Why().Kind != unknown.KindNotApplicable {
			t.Errorf("%q: IRQ balancing %s (%s), want none read, not applicable", name, p.IRQBalancing, p.IRQBalancing.Why())
		}
	}
}

// BenchmarkParseIRQBalancing: one container's config as CRI-O writes a
// real one, about 10 KB (environment, mounts, its annotations), as an
// exporter scrape reads it for each selected container.
func BenchmarkParseIRQBalancing(b *testing.B) {
	var env, mounts []string
	for i := range 80 {
		env = append(env, fmt.Sprintf(`"SERVICE_%d_PORT=tcp://10.96.%d.%d:443"`, i, i/250, i%250))
	}
	for i := range 40 {
		mounts = append(mounts, fmt.Sprintf(`{"destination":"/var/run/secrets/%d","type":"bind","source":"/var/lib/kubelet/pods/%s/volumes/%d","options":["rbind","ro"]}`, i, uidA, i))
	}
	cfg := []byte(`{"ociVersion":"1.2.0","process":{"env":[` + strings.Join(env, ",") + `],"args":["iperf3","-s"]},"mounts":[` +
		strings.Join(mounts, ",") + `],"annotations":{"io.kubernetes.cri-o.SandboxID":"` + idSbox + `","irq-load-balancing.crio.io":"disable"},` +
		`"linux":{"resources":{"cpu":{"shares":2048,"cpus":"2-3"}}}}`)
	b.SetBytes(int64(len(cfg)))
	for b.Loop() {
		if _, err := parseIRQBalancing(cfg, "iperf3"); err != nil {
			b.Fatal(err)
		}
	}
}
