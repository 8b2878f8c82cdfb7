package audit

import (
	"fmt"
	"strings"
)

// The RSS indirection table against the rx rings: rss-queue-missing (the
// table names queues that do not exist) and rss-queue-unused (queues the
// table leaves out get no RSS traffic).
const (
	CheckRSSQueueMissing Check = "rss-queue-missing"
	CheckRSSQueueUnused  Check = "rss-queue-unused"
)

func init() {
	register(&check{ids: []Check{CheckRSSQueueMissing, CheckRSSQueueUnused}, needs: []fact{factSteer}, nic: (*auditor).checkRSSTable})
}

// checkRSSTable compares the table with the rings it chooses among.
func (a *auditor) checkRSSTable(c *nicCtx) error {
	s := c.steer
	if !s.tableKnown() || s.rings == 0 {
		return a.steerSkip(c)
	}
	var missing, used []uint32
	gone := 0
	for _, q := range sortedQueues(s.share) {
		if q >= s.rings {
			missing = append(missing, q)
			gone += s.share[q]
		} else {
			used = append(used, q)
		}
	}
	fix := c.fix(fmt.Sprintf("ethtool -X %s equal %d", c.ifname, s.rings))
	if len(missing) > 0 {
		a.add(Finding{Check: CheckRSSQueueMissing, Severity: SeverityWarning, NIC: c.nic.Name, Subject: queuesWord(missing),
			Message: fmt.Sprintf("%s's RSS table sends %d of its %d entries (%d%%) to %s, which do not exist: the NIC has %d rx %s",
				c.nic.Name, gone, s.entries, percent(gone, s.entries), queuesWord(missing), s.rings, ringsWord(s.rings)),
			Fix: fix})
	}
	var unused []uint32
	for q := uint32(0); q < s.rings; q++ {
		if s.share[q] == 0 {
			unused = append(unused, q)
		}
	}
	if len(unused) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s get no RSS traffic: the table of %d entries names %s only", queuesWord(unused), s.entries, namesWord(used))
	if len(unused) == 1 {
		msg = strings.Replace(msg, " get ", " gets ", 1)
	}
	if targets := s.ruleTargets(); len(targets) > 0 {
		var ruled []uint32
		for _, q := range unused {
			if len(targets[q]) > 0 {
				ruled = append(ruled, q)
			}
		}
		if len(ruled) > 0 {
			msg += fmt.Sprintf(" (ntuple rules send flows to %s)", queuesWord(ruled))
		}
	}
	a.add(Finding{Check: CheckRSSQueueUnused, Severity: SeverityInfo, NIC: c.nic.Name, Subject: queuesWord(unused),
		Message: msg + ": their IRQs' placement matters little, the named queues' matters",
		Fix:     c.fix(fmt.Sprintf("ethtool -X %s equal %d  # or keep only the named queues: %s", c.ifname, s.rings, channelsFix(c, len(used))))})
	return nil
}

// namesWord is "queues 0-15" or "no queue" for the queues a table names.
func namesWord(qs []uint32) string {
	if len(qs) == 0 {
		return "no existing queue"
	}
	return queuesWord(qs)
}

// ringsWord is "ring" or "rings".
func ringsWord(n uint32) string {
	if n == 1 {
		return "ring"
	}
	return "rings"
}

// channelsFix is the ethtool -L command that leaves n rx queues, in the
// kind of channel the NIC counts them in.
func channelsFix(c *nicCtx, n int) string {
	kind := "combined"
	if ch := c.steer.n.Channels; ch != nil && ch.Combined == 0 && ch.RX > 0 {
		kind = "rx"
	}
	return fmt.Sprintf("ethtool -L %s %s %d", c.ifname, kind, n)
}
