package tune

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
	"github.com/irqnuma/irqnuma/internal/usage"
)

// WithinGroup reads the group a --cgroup names (its path as
// /proc/PID/cgroup shows it) and what a pick inside it may use. A group
// the host lacks, or whose CPUs are unknown, is the user's to fix
// (usage.ErrUsage), naming it: there is nothing to pick inside.
func WithinGroup(fsys kfile.FS, group string) (*Within, *proc.Cgroup, error) {
	g, err := proc.ReadCgroup(fsys, group)
	if errors.Is(err, proc.ErrNoCgroup) || errors.Is(err, proc.ErrSelection) {
		return nil, nil, usage.Wrap(fmt.Errorf("--cgroup: %w", err))
	}
	if err != nil {
		return nil, nil, err
	}
	if !g.CPUs.Known() {
		return nil, nil, usage.Errorf("--cgroup %s: its CPUs are unknown: %s", group, g.CPUs.Why().Detail)
	}
	return withinCgroup(g), g, nil
}

// OpenJoin opens g for sched to start a command inside it (exec --join):
// a v2 group's folder, which clone3 clones into, or a v1 group's
// cgroup.procs, which the command is moved into before it runs. The
// command is the one process the join moves, and it is irqnuma's own
// child: nothing of the host is changed that a restore would put back.
// release closes the handle.
func OpenJoin(fsys kfile.FS, g *proc.Cgroup) (join *sched.Group, release func(), err error) {
	p, flag := g.Dir, unix.O_RDONLY|unix.O_DIRECTORY
	if g.Version == proc.CgroupVersionV1 {
		p, flag = path.Join(g.Dir, "cgroup.procs"), unix.O_WRONLY
	}
	f, err := fsys.OpenFile(p, flag)
	if err != nil {
		return nil, nil, fmt.Errorf("--join %s: %w", g.Path, err)
	}
	join = &sched.Group{Path: g.Path}
	if g.Version == proc.CgroupVersionV1 {
		join.Procs = f
	} else {
		join.Dir = f
	}
	return join, func() { f.Close() }, nil
}

// withinCgroup is what a pick inside group g may use: g's effective
// CPUs, said with the file they were read from. g's CPUs are known
// (g.CPUs.Known()): the caller refuses a group whose CPUs are not.
func withinCgroup(g *proc.Cgroup) *Within {
	return &Within{CPUs: g.CPUs.Or(cpuset.Set{}), From: fmt.Sprintf("cgroup %s (%s %s)", g.Path, cpusFile(g.Version), g.CPUs.Or(cpuset.Set{}).List())}
}

// WithinPod is what a pick inside a --pod's containers (or a --container)
// may use: the groups sel names once resolved (kube.Resolve), read on
// fsys (proc.SelectPresent), and the union of their CPUs (withinMatches).
func WithinPod(fsys kfile.FS, sel proc.Selection) (*Within, error) {
	_, matches, err := proc.SelectPresent(fsys, sel)
	if err != nil {
		return nil, err
	}
	return withinMatches(matches)
}

// withinMatches is what a pick inside a --pod's containers (or a
// --container) may use: what any of their groups may, the union of
// their effective CPUs, each container's said with its name ("sandbox"
// for the pod's own). matches are proc.SelectPresent's for one such
// selector, at least one; one without a group, or whose CPUs are
// unknown, is the user's to fix (usage.ErrUsage), naming it.
func withinMatches(matches []proc.Match) (*Within, error) {
	var cpus cpuset.Set
	var from []string
	file := cpusFile(proc.CgroupVersionV2)
	for _, m := range matches {
		if m.Group == nil {
			return nil, usage.Wrap(m.Err())
		}
		if !m.Group.CPUs.Known() {
			return nil, usage.Errorf("%s: container %s's CPUs are unknown: %s", m.Selector, m.Group.Pod.ContainerID, m.Group.CPUs.Why().Detail)
		}
		if m.Group.Version == proc.CgroupVersionV1 {
			file = cpusFile(proc.CgroupVersionV1)
		}
		cpus = cpus.Union(m.Group.CPUs.Or(cpuset.Set{}))
		name := m.Group.Pod.Container
		if name == "" {
			name = "sandbox"
		}
		from = append(from, name+" "+m.Group.CPUs.Or(cpuset.Set{}).List())
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
