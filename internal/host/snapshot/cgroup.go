package snapshot

import (
	"errors"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/proc"
)

// What proc.ReadCgroup reads: the files that say which hierarchy a host
// has, and in each place a group may be, its files (v2's, then v1
// cpuset's).
var (
	cgroupProbes = []string{"sys/fs/cgroup/cgroup.controllers", "sys/fs/cgroup/unified/cgroup.controllers"}
	cgroupDirs   = []string{"sys/fs/cgroup", "sys/fs/cgroup/cpuset", "sys/fs/cgroup/unified"}
	cgroupFiles  = []string{
		"cgroup.procs", "cpuset.cpus.effective", "cpuset.mems.effective", "cpuset.cpus.partition", "memory.numa_stat",
		"cpuset.effective_cpus", "cpuset.effective_mems", "cpuset.cpu_exclusive",
	}
)

// wanted returns the PIDs to capture in full: the options' --pid and
// the processes in their --cgroup groups (which it records).
func (c *capturer) wanted() (map[string]bool, error) {
	want, err := c.cgroups()
	if err != nil {
		return nil, err
	}
	for _, p := range c.opts.Processes.PIDs {
		want[strconv.Itoa(p)] = true
	}
	return want, nil
}

// cgroups records the groups the options name (--cgroup, and the
// containers' of --pod and --container with what found them) and returns
// the PIDs in them, which are captured in full as a --pid's are.
func (c *capturer) cgroups() (map[string]bool, error) {
	pids := map[string]bool{}
	groups := append(slices.Clone(c.opts.Processes.Cgroups), c.podGroups()...)
	if err := c.pods(); err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return pids, nil
	}
	for _, f := range cgroupProbes {
		if err := c.file(f); err != nil {
			return nil, err
		}
	}
	for _, g := range groups {
		p, err := proc.CleanCgroupPath(g)
		if err != nil {
			return nil, err
		}
		for _, d := range cgroupDirs {
			for _, f := range cgroupFiles {
				if err := c.file(path.Join(d, strings.TrimPrefix(p, "/"), f)); err != nil {
					return nil, err
				}
			}
		}
		grp, err := proc.ReadCgroup(c.fs, p)
		if errors.Is(err, proc.ErrNoCgroup) {
			continue
		}
		if err != nil { // a malformed file: captured as it is, for the reader to refuse
			c.note("--cgroup " + g + ": its processes not captured in full: " + stripRoot(err, c.root))
			continue
		}
		for _, pid := range grp.PIDs {
			pids[strconv.Itoa(pid)] = true
		}
	}
	return pids, nil
}
