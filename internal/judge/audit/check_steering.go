package audit

import (
	"fmt"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/units"
)

// RPS and XPS steering off the NIC's node: rps-remote and xps-remote.
const (
	CheckRPSRemote Check = "rps-remote"
	CheckXPSRemote Check = "xps-remote"
)

func init() {
	register(&check{ids: []Check{CheckRPSRemote, CheckXPSRemote}, needs: []fact{factQueues}, nic: (*auditor).checkSteering})
}

// checkSteering: rps-remote and xps-remote. Queues whose rps_cpus or
// xps_cpus include CPUs off the NIC's node.
func (a *auditor) checkSteering(c *nicCtx) error {
	if len(c.nic.Queues) == 0 {
		return skip(c.nic.Name, "rps-remote, xps-remote", fmt.Sprintf("no /sys/class/net/%s/queues: RPS and XPS steering unknown", c.nic.Name))
	}
	known := false
	for _, kind := range []string{"rx", "tx"} {
		var idx []int
		var remote cpuset.Set
		for _, q := range c.nic.Queues {
			qcpus, ok := q.CPUs.Get()
			if string(q.Kind) != kind || !ok {
				continue
			}
			known = true
			if !c.loc.Known() || qcpus.IsEmpty() {
				continue
			}
			if r := qcpus.Difference(c.loc.CPUs); !r.IsEmpty() {
				idx = append(idx, q.Index)
				remote = remote.Union(r)
			}
		}
		if len(idx) == 0 {
			continue
		}
		check, file := CheckRPSRemote, "rps_cpus"
		fix := fmt.Sprintf(`m=$(irqnuma mask --nic %s --format mask) && echo "$m" | tee %s`, c.ifname, queueFiles(c.ifname, kind, idx, file))
		what := units.Choose(len(idx), "steers received packets to", "steer received packets to")
		if kind == "tx" {
			check, file = CheckXPSRemote, "xps_cpus"
			fix = pinFix(c.ifname) + " --xps"
			what = units.Choose(len(idx), "takes packets sent from", "take packets sent from")
		}
		nodes, _ := a.h.NodesOf(remote)
		qs := "queue"
		if len(idx) > 1 {
			qs = "queues"
		}
		a.add(Finding{Check: check, Severity: SeverityWarning, NIC: c.nic.Name,
			Subject: fmt.Sprintf("%s %s %s", kind, qs, cpuset.New(idx...).List()), CPUs: remote, Nodes: nodes.IDs(),
			Message: fmt.Sprintf("%s %s %s %s (%s) %s %s, off the NIC's %s", c.nic.Name, kind, qs, cpuset.New(idx...).List(), file, what,
				a.describeRemote(remote, c.loc.CPUs), NodeName(c.loc)),
			Fix: c.fix(fix)})
	}
	if !known {
		return skip(c.nic.Name, "rps-remote, xps-remote", fmt.Sprintf("no readable rps_cpus or xps_cpus under /sys/class/net/%s/queues", c.nic.Name))
	} else if !c.loc.Known() && len(a.h.Nodes) > 1 {
		return skip(c.nic.Name, "rps-remote, xps-remote", fmt.Sprintf("%s's locality is unknown: steering CPUs are not called local or remote", c.nic.Name))
	}
	return nil
}

// queueFiles is /sys/class/net/eth0/queues/rx-{0,2}/rps_cpus.
func queueFiles(nic, kind string, idx []int, file string) string {
	if len(idx) == 1 {
		return fmt.Sprintf("/sys/class/net/%s/queues/%s-%d/%s", nic, kind, idx[0], file)
	}
	return fmt.Sprintf("/sys/class/net/%s/queues/%s-{%s}/%s", nic, kind, intsList(idx, false), file)
}
