package tune

import (
	"fmt"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// WithinCgroup is what a pick inside group g may use: g's effective
// CPUs, said with the file they were read from. g's CPUs are known
// (g.CPUsKnown): the caller refuses a group whose CPUs are not.
func WithinCgroup(g *proc.Cgroup) *Within {
	return &Within{CPUs: g.CPUs, From: fmt.Sprintf("cgroup %s (%s %s)", g.Path, cpusFile(g.Version), g.CPUs.List())}
}

// WithinPod is what a pick inside a --pod's containers (or a
// --container) may use: what any of their groups may, the union of
// their effective CPUs, each container's said with its name ("sandbox"
// for the pod's own). matches are proc.SelectPresent's for one such
// selector, at least one; one without a group, or whose CPUs are
// unknown, is the user's to fix (usage.ErrUsage), naming it.
func WithinPod(matches []proc.Match) (*Within, error) {
	var cpus cpuset.Set
	var from []string
	file := cpusFile(proc.CgroupVersionV2)
	for _, m := range matches {
		if m.Group == nil {
			return nil, usage.Wrap(m.Err())
		}
		if !m.Group.CPUsKnown {
			return nil, usage.Errorf("%s: container %s's CPUs are unknown: %s", m.Selector, m.Group.Pod.ContainerID, m.Group.Why)
		}
		if m.Group.Version == proc.CgroupVersionV1 {
			file = cpusFile(proc.CgroupVersionV1)
		}
		cpus = cpus.Union(m.Group.CPUs)
		name := m.Group.Pod.Container
		if name == "" {
			name = "sandbox"
		}
		from = append(from, name+" "+m.Group.CPUs.List())
	}
	return &Within{CPUs: cpus, From: fmt.Sprintf("%s (%s of %s)", matches[0].Selector, file, strings.Join(from, ", "))}, nil
}

// cpusFile is the file a group of version v holds its effective CPUs
// in.
func cpusFile(v proc.CgroupVersion) string {
	if v == proc.CgroupVersionV1 {
		return "cpuset.effective_cpus"
	}
	return "cpuset.cpus.effective"
}
