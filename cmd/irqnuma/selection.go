package main

import (
	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/kube"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
)

// selection is the --nic, --pid, --comm, --cgroup, --pod and --container of every command
// that looks at NICs and watched processes (audit, serve, map, watch,
// snapshot).
type selection struct{ audit.Selection }

// flags adds --nic (with the command's own wording; none when nicHelp is
// ""), and --pid, --comm and --cgroup, saying what the command does with
// the processes ("watch", "capture").
func (s *selection) flags(c *cobra.Command, nicHelp, verb string) {
	if nicHelp != "" {
		c.Flags().StringArrayVar(&s.NICs, "nic", nil, nicHelp)
	}
	c.Flags().IntSliceVar(&s.PIDs, "pid", nil, verb+" this process and all its threads (repeatable)")
	c.Flags().StringArrayVar(&s.Comms, "comm", nil, verb+" every process whose comm is exactly this (repeatable)")
	c.Flags().StringArrayVar(&s.Cgroups, "cgroup", nil, verb+" every process in this control group: its path as /proc/PID/cgroup shows it, v2 or the v1 cpuset hierarchy's (repeatable)")
	podFlags(c, &s.Selection.Selection, verb)
}

// podFlags adds --pod and --container to c.
func podFlags(c *cobra.Command, s *proc.Selection, verb string) {
	c.Flags().StringArrayVar(&s.Pods, "pod", nil, verb+" every process in this Kubernetes pod's containers, NAMESPACE/NAME, each container as a --cgroup (repeatable)")
	c.Flags().StringArrayVar(&s.Containers, "container", nil, verb+" every process in this container, its runtime ID or a unique prefix (crictl ps), as a --cgroup (repeatable)")
}

// resolvePods validates s as usage errors and finds its pods' and
// containers' groups on the root (the kubelet's socket on the live one).
func (a *app) resolvePods(s *proc.Selection) error {
	if err := s.Validate(); err != nil {
		return cli.Usage(err)
	}
	return kube.Resolve(a.ctx, a.fs, s, kube.LiveSocket(a.fs))
}

// processes is the --pid, --comm and --cgroup alone, for the commands that take
// the processes apart from the NICs (watch, snapshot).
func (s *selection) processes() proc.Selection { return s.Selection.Selection }

// check validates the values as usage errors and resolves --pod and
// --container.
func (s *selection) check(a *app) error {
	if err := s.Validate(); err != nil {
		return cli.Usage(err)
	}
	return a.resolvePods(&s.Selection.Selection)
}
