package snapshot

import (
	"context"
	"path"

	"github.com/irqnuma/irqnuma/internal/host/kube"
)

// podGroups are the groups of the options' --pod and --container, as
// kube.Resolve found them before the capture.
func (c *capturer) podGroups() []string {
	var out []string
	for _, res := range c.opts.Processes.Resolved {
		for _, g := range res.Groups {
			out = append(out, g.Path)
		}
	}
	return out
}

// crioConfigs records what kube.Resolve read of each container's CRI-O
// config (its irq-load-balancing.crio.io and CPUs), in a config of its
// own at the same place: the rest of it, environment included, is not
// captured.
func (c *capturer) crioConfigs() error {
	for _, res := range c.opts.Processes.Resolved {
		for _, g := range res.Groups {
			ib, ok := g.Pod.IRQBalancing.Get()
			if !ok || ib.File == "" || c.files[ib.File] {
				continue
			}
			if err := c.addDir(parent(ib.File)); err != nil {
				return err
			}
			c.files[ib.File] = true
			if err := c.w.file(ib.File, kube.RecordIRQBalancing(ib), 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

// pods records, for --pod and --container, what kube.Resolve reads
// besides the groups (recorded with the --cgroup ones): the CPU manager's
// checkpoint, the kubelet's log folders' names (not the logs), the
// /var/log/containers links, and the kubelet's List answer (asked on the
// live root; a tree's recording is copied as it is).
func (c *capturer) pods() error {
	sel := c.opts.Processes
	if len(sel.Pods) == 0 && len(sel.Containers) == 0 {
		return nil
	}
	if err := c.file(kube.CheckpointFile); err != nil {
		return err
	}
	for _, d := range c.expand("var/log/pods/*/*") {
		if err := c.dir(d); err != nil {
			return err
		}
	}
	for _, l := range c.expand("var/log/containers/*.log") {
		if _, err := c.recordLink(l); err != nil {
			c.skip(l, err)
		}
	}
	if err := c.crioConfigs(); err != nil {
		return err
	}
	if !c.fs.Live() {
		return c.copyTree(path.Dir(kube.RecordFile))
	}
	note, err := kube.Record(context.Background(), kube.LiveSocket(c.fs), func(rel string, data []byte) error {
		if err := c.addDir(parent(rel)); err != nil {
			return err
		}
		c.files[rel] = true
		return c.w.file(rel, data, 0o644)
	})
	if note != "" {
		c.note(note)
	}
	return err
}
