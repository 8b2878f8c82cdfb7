package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/run/exporter"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// treePod is a pod as the kubelet and CRI-O lay it out on a node: its
// one container's group (cgroup v2, systemd driver) and the kubelet's
// log folder and link naming it.
type treePod struct {
	ns, name, uid, container, id, cpus string
}

func (p treePod) group() string {
	return "kubepods.slice/kubepods-pod" + strings.ReplaceAll(p.uid, "-", "_") + ".slice/crio-" + p.id + ".scope"
}

func (p treePod) write(t *testing.T, root string) {
	t.Helper()
	writeFile(t, root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
	for name, data := range map[string]string{"cgroup.procs": "", "cpuset.cpus.effective": p.cpus + "\n",
		"cpuset.mems.effective": "0-1\n", "cpuset.cpus.partition": "member\n"} {
		writeFile(t, root, "sys/fs/cgroup/"+p.group()+"/"+name, data)
	}
	logDir := fmt.Sprintf("var/log/pods/%s_%s_%s/%s", p.ns, p.name, p.uid, p.container)
	writeFile(t, root, logDir+"/0.log", "")
	link := filepath.Join(root, fmt.Sprintf("var/log/containers/%s_%s_%s-%s.log", p.name, p.ns, p.container, p.id))
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(link) // written again: a pod started again
	if err := os.Symlink("/"+logDir+"/0.log", link); err != nil {
		t.Fatal(err)
	}
}

// threePods are three pods of the seed node, in NAMESPACE/NAME order.
var threePods = []treePod{
	{"default", "iperf-server", podUID, "iperf3", podCtrID, "16-17"},
	{"kube-system", "coredns", "0f9e8d7c-6b5a-4f3e-8d2c-1b0a99887766", "coredns", strings.Repeat("5b6c7d8e", 8), "0-15"},
	{"monitoring", "node-agent", "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "agent", strings.Repeat("c0ffee00", 8), "0-15,18-63"},
}

// podCPUs is a scrape's irqnuma_pod_cpus of p's container, if it has one.
func podCPUs(t *testing.T, addr string, p treePod) (float64, bool) {
	t.Helper()
	return scrapeValue(t, addr, exporter.MetricPodCPUs, map[string]string{
		"cgroup": "/" + p.group(), "namespace": p.ns, "pod": p.name, "container": p.container})
}

// TestPodsAll: --pods all on the seed tree with three pods gives each
// pod's container its series, and irqnuma_pods_dropped 0; a pod that
// starts between scrapes is taken at the next, one that stops is gone.
// With --pods-max 2 the first two by NAMESPACE/NAME have theirs, the
// third none, and irqnuma_pods_dropped is 1.
func TestPodsAll(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	for _, p := range threePods[:2] {
		p.write(t, root)
	}
	addr := start(t, "--root", root, "--pods", "all")
	if v, ok := scrapeValue(t, addr, metricPodsDropped, nil); !ok || v != 0 {
		t.Errorf("two pods: irqnuma_pods_dropped = %v (%v), want 0", v, ok)
	}
	threePods[2].write(t, root)
	wantCPUs := []float64{2, 16, 62}
	for i, p := range threePods {
		if v, ok := podCPUs(t, addr, p); !ok || v != wantCPUs[i] {
			t.Errorf("three pods: %s/%s: irqnuma_pod_cpus = %v (%v), want %v", p.ns, p.name, v, ok, wantCPUs[i])
		}
		if v, ok := scrapeValue(t, addr, exporter.MetricProcessPresent, map[string]string{"selector": "--pod " + p.ns + "/" + p.name}); !ok || v != 0 {
			t.Errorf("three pods: irqnuma_process_present{--pod %s/%s} = %v (%v), want 0: no process runs in it", p.ns, p.name, v, ok)
		}
	}
	if v, ok := scrapeValue(t, addr, metricPodsDropped, nil); !ok || v != 0 {
		t.Errorf("three pods: irqnuma_pods_dropped = %v (%v), want 0", v, ok)
	}
	if err := os.RemoveAll(filepath.Join(root, "sys/fs/cgroup", filepath.Dir(threePods[1].group()))); err != nil {
		t.Fatal(err)
	}
	if _, ok := podCPUs(t, addr, threePods[1]); ok {
		t.Errorf("a stopped pod (its group gone) still has irqnuma_pod_cpus")
	}
	threePods[1].write(t, root)

	bounded := start(t, "--root", root, "--pods", "all", "--pods-max", "2")
	for i, p := range threePods {
		if _, ok := podCPUs(t, bounded, p); ok != (i < 2) {
			t.Errorf("--pods-max 2: %s/%s has series %v, want %v", p.ns, p.name, ok, i < 2)
		}
	}
	if v, ok := scrapeValue(t, bounded, metricPodsDropped, nil); !ok || v != 1 {
		t.Errorf("--pods-max 2: irqnuma_pods_dropped = %v (%v), want 1", v, ok)
	}
}

// TestPodsAllAbsent: without --pods all there is no irqnuma_pods_dropped
// (the golden scrapes are unchanged), and with it on a node whose pods
// cannot be listed (a /var/log/pods that is a file) the scrape fails
// and the gauge has no sample, rather than a 0 that would say none were
// left out.
func TestPodsAllAbsent(t *testing.T) {
	if _, ok := scrapeValue(t, start(t, "--root", hosttest.Root("seed")), metricPodsDropped, nil); ok {
		t.Error("irqnuma_pods_dropped without --pods all")
	}
	root := hosttest.Copy(t, "seed")
	writeFile(t, root, "var/log/pods", "not a folder\n")
	addr := start(t, "--root", root, "--pods", "all")
	if v, _ := scrapeValue(t, addr, exporter.MetricScrapeError, nil); v != 1 {
		t.Errorf("unlistable pods: irqnuma_scrape_error %v, want 1", v)
	}
	if _, ok := scrapeValue(t, addr, metricPodsDropped, nil); ok {
		t.Error("unlistable pods: irqnuma_pods_dropped has a sample")
	}
}
