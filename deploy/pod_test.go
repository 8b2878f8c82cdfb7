package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/judge/nicuse"
	"github.com/irqnuma/irqnuma/internal/run/exporter"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// node1Series are the exporter's series for node1 of the promtool test:
// the seed host (eth0 on node 1; IRQ 285 delivered to CPU 17, IRQ 284 to
// CPU 50) with a cgroup v2 hierarchy of three pods' containers and one
// plain group, their files as the kernel writes them:
//
//	/kubepods.slice/bad     isolated partition, CPUs 16-17 (IRQ 285 on 17)
//	/kubepods.slice/good    root partition, CPUs 18-19 (no IRQ)
//	/kubepods.slice/remote  root partition, CPUs 2-3 (node 0)
//	/batch                  isolated partition, CPU 50, no pod
//
// The pods are set on the groups as a --pod selection sets them, and
// each pod's process (7001-7003) uses eth0 as nicuse would say from its
// sockets; the tree itself has no processes.
func node1Series(t *testing.T) map[string]string {
	t.Helper()
	root := hosttest.Copy(t, "seed")
	put := func(rel, data string) {
		p := filepath.Join(root, "sys/fs/cgroup", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	put("cgroup.controllers", "cpuset cpu io memory pids\n")
	put("cgroup.procs", "")
	groups := []struct{ path, cpus, mems, partition, pod string }{
		{"/kubepods.slice/bad", "16-17", "1", "isolated", "iperf-bad"},
		{"/kubepods.slice/good", "18-19", "1", "root", "iperf-good"},
		{"/kubepods.slice/remote", "2-3", "0", "root", "iperf-remote"},
		{"/batch", "50", "1", "isolated", ""},
	}
	var sel audit.Selection
	for _, g := range groups {
		for name, data := range map[string]string{"cgroup.procs": "", "cpuset.cpus.effective": g.cpus + "\n",
			"cpuset.mems.effective": g.mems + "\n", "cpuset.cpus.partition": g.partition + "\n"} {
			put(strings.TrimPrefix(g.path, "/")+"/"+name, data)
		}
		sel.Cgroups = append(sel.Cgroups, g.path)
	}
	st, err := audit.Read(hosttest.Open(t, root), sel)
	if err != nil {
		t.Fatal(err)
	}
	for i := range st.Matches {
		g, pid := st.Matches[i].Group, 7001+i
		if g == nil || groups[i].pod == "" {
			continue
		}
		g.Pod = &proc.PodRef{Namespace: "bench", Name: groups[i].pod, Container: "iperf3", ExclusiveCPUs: unknown.Of(cpuset.Set{})}
		st.Matches[i].PIDs = []int{pid}
		st.Uses = append(st.Uses, nicuse.Use{PID: pid, NICs: []string{"eth0"}, Attribution: unknown.Of(nicuse.AttributionSockets)})
	}
	return samples(t, exporter.Series(st))
}

// TestRulesTestPodSeriesAreReal: the node1 series of the promtool test
// (pods whose exclusive CPUs take IRQs, a pod off its NIC's node, a good
// pod) are what the exporter answers for node1Series' host, label for
// label and value for value.
func TestRulesTestPodSeriesAreReal(t *testing.T) {
	var f struct {
		Tests []struct {
			InputSeries []struct{ Series, Values string } `yaml:"input_series"`
		} `yaml:"tests"`
	}
	b, err := os.ReadFile("prometheus/irqnuma-rules_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	exported := node1Series(t)
	checked := 0
	for _, tt := range f.Tests {
		for _, in := range tt.InputSeries {
			if !strings.Contains(in.Series, `instance="node1:9143"`) {
				continue
			}
			s := strings.NewReplacer(`instance="node1:9143",`, "", `job="irqnuma",`, "").Replace(in.Series)
			value, _, _ := strings.Cut(in.Values, "x")
			if got, ok := exported[s]; !ok || got != value {
				t.Errorf("input series %s %s: the exporter answers %q (present %v) for node1", s, value, got, ok)
			}
			checked++
		}
	}
	if checked < 8 {
		t.Errorf("%d node1 series checked, want the test's pod series", checked)
	}
}
