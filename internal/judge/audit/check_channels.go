package audit

import (
	"fmt"
)

// More channels than local cores: channels-vs-cores.
const CheckChannelsVsCores Check = "channels-vs-cores"

func init() {
	register(&check{ids: []Check{CheckChannelsVsCores}, needs: []fact{factSteer}, nic: (*auditor).checkChannels})
}

// checkChannels: channels-vs-cores. More rx channels (combined plus
// rx-only, ethtool -l) than the NIC's node has cores (not isolated): the
// queues past them share cores or run remote.
func (a *auditor) checkChannels(c *nicCtx) error {
	n := c.steer.n
	if n == nil || n.Channels == nil {
		return a.steerSkip(c)
	}
	if !c.loc.Known() {
		return nil // queues-vs-cpus and nic-node-unknown say what locality lacks
	}
	local := a.online(c.loc.CPUs).Difference(a.h.IsolatedCPUs())
	cores := len(a.h.Cores(local))
	ch := *n.Channels
	count, most, kind := ch.Combined, ch.MaxCombined, "combined"
	if ch.Combined == 0 && ch.RX > 0 {
		count, most, kind = ch.RX, ch.MaxRX, "rx"
	}
	if cores == 0 || int(count) <= cores {
		return nil
	}
	a.add(Finding{Check: CheckChannelsVsCores, Severity: SeverityInfo, NIC: c.nic.Name, Subject: fmt.Sprintf("%d %s channels", count, kind),
		CPUs: local, Nodes: nodeIDs(c.loc.Node.Or(-1)),
		Message: fmt.Sprintf("%s has %d %s channels (at most %d) for %d local cores on its %s: the queues past %d share cores or are served off the node",
			c.nic.Name, count, kind, most, cores, NodeName(c.loc), cores),
		Fix: c.fix(fmt.Sprintf("ethtool -L %s %s %d", c.ifname, kind, cores))})
	return nil
}
