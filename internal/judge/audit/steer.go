package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/units"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// What the steering checks share: the NIC's reading, the share of its
// RSS table each queue holds, and which IRQ and NAPI serve a queue.

// factSteer is the fact every steering check needs.
const factSteer fact = "the NICs' steering (ethtool, netdev netlink)" // Options.Steer

// steerSubject is the subject of the one not-checked finding a NIC (or,
// when the root holds no steering at all, the host) gets for every
// steering check that could not judge: the reason is the NIC's, not the
// check's, so it is said once.
const steerSubject = "steering"

// steerParts are the parts the steering checks read, in the order a
// not-checked finding names them.
var steerParts = []steer.Part{steer.PartChannels, steer.PartRSS, steer.PartRSSTable, steer.FlowHashPart("udp4"), steer.FlowHashPart("udp6"),
	steer.PartRules, steer.PartQueues, steer.PartNAPI}

// steerCtx is the steering of one audited NIC.
type steerCtx struct {
	n *steer.NIC // nil when not read
	// share is how many RSS table entries name each queue, and entries
	// the table's length; both zero when the table is unknown.
	share   map[uint32]int
	entries int
	// rings is how many rx rings the table chooses among: the RSS
	// reading's ETHTOOL_GRXRINGS, else the channels' rx queues; 0 when
	// neither is known.
	rings uint32
}

// steerContext reads the steering of the NIC c describes out of the
// audit's options.
func (a *auditor) steerContext(name string) steerCtx {
	s := steerCtx{n: a.opts.Steer.NIC(name)}
	if s.n == nil {
		return s
	}
	if r := s.n.RSS; r != nil && len(r.Table) > 0 {
		s.share, s.entries = r.Share(), len(r.Table)
		s.rings = r.Rings
	}
	if s.rings == 0 && s.n.Channels != nil {
		s.rings = s.n.Channels.RXQueues()
	}
	return s
}

// steerSkip is the not-checked error of a steering check that lacks
// what it reads: said once per NIC (subject "steering"), with every
// steering part the NIC lacks and why, or once for the host when the root
// holds no steering at all.
func (a *auditor) steerSkip(c *nicCtx) error {
	switch {
	case a.opts.Steer == nil:
		return &notChecked{sev: SeverityInfo, subject: steerSubject, why: "the NICs' steering was not read",
			fix: "run the audit on the live host (ethtool and netdev netlink), or on a snapshot of it"}
	case a.opts.Steer.Source == steer.SourceNone || a.opts.Steer.Source == "":
		return &notChecked{sev: SeverityInfo, subject: steerSubject,
			why: "the root holds no ethtool or netdev netlink replies: channels, RSS tables, flow rules and NAPI are unknown",
			fix: "run the audit on the live host, or take a snapshot with irqnuma snapshot, which records them"}
	case c.steer.n == nil:
		return &notChecked{sev: SeverityInfo, nic: c.nic.Name, subject: steerSubject,
			why: fmt.Sprintf("no steering reading of %s", c.nic.Name)}
	}
	why, fix := steerUnknown(c.nic.Name, c.steer.n)
	return &notChecked{sev: SeverityInfo, nic: c.nic.Name, subject: steerSubject, why: why, fix: fix}
}

// steerUnknown says which of the parts the steering checks read are
// unknown for n, grouped by why, and what would make them known. A NIC
// whose driver supports no RSS at all (no table, no hash fields, no
// rules) is said to be one.
func steerUnknown(name string, n *steer.NIC) (why, fix string) {
	if noRSS(n) {
		drv := ""
		if n.Driver != nil && n.Driver.Driver != "" {
			drv = " (" + n.Driver.Driver + ")"
		}
		return fmt.Sprintf("%s's driver%s supports no RSS table, hash fields or flow rules: which queue takes a flow is the device's choice, and it is not judged", name, drv),
			"nothing to change on this NIC; a NIC whose driver has RSS can be steered"
	}
	var unknown []steer.Part
	for _, p := range steerParts {
		if _, ok := n.Why(p); ok {
			unknown = append(unknown, p)
		}
	}
	if len(unknown) == 0 {
		return fmt.Sprintf("%s's steering does not say what the steering checks need", name), ""
	}
	return fmt.Sprintf("%s's steering is not known in part: %s", name, WhyParts(n, unknown)), unknownFix(n, unknown)
}

// unknownFix says what would make the parts known, for each reason they
// are not: a reason no one can change (the driver, the kernel) gets no
// advice to run the audit again.
func unknownFix(n *steer.NIC, parts []steer.Part) string {
	fixes := map[unknown.Kind]string{
		unknown.KindPermission:  "run the audit as root (ethtool and netdev replies need CAP_NET_ADMIN)",
		unknown.KindNotCaptured: "take the capture with irqnuma snapshot on the host, which records the replies",
		unknown.KindFailed:      "run the audit again; the kernel refused with the error named",
		unknown.KindMalformed:   "take the capture again (or read the live host again, if its channels changed meanwhile): the file or count named is not what ethtool or the kernel writes",
		unknown.KindDriver:      "nothing to change: the driver does not report it",
		unknown.KindKernel:      "a newer kernel reports it",
	}
	var out []string
	seen := map[unknown.Kind]bool{}
	for _, p := range parts {
		r, ok := n.Why(p)
		if !ok || seen[r.Kind] {
			continue
		}
		seen[r.Kind] = true
		out = append(out, fixes[r.Kind])
	}
	return strings.Join(out, "; ")
}

// WhyParts says why parts of n are unknown, grouped by why: "rss,
// queues: not captured; ntuple: not permitted (EPERM)". A group's detail
// is said when its parts share it, as the errno of one refusal.
func WhyParts(n *steer.NIC, parts []steer.Part) string {
	type group struct {
		parts   []string
		detail  string
		details bool // the parts' details differ
	}
	groups := map[unknown.Kind]*group{}
	var order []unknown.Kind
	for _, p := range parts {
		r, ok := n.Why(p)
		if !ok {
			continue
		}
		g := groups[r.Kind]
		if g == nil {
			g = &group{detail: r.Detail}
			groups[r.Kind] = g
			order = append(order, r.Kind)
		}
		g.parts = append(g.parts, string(p))
		g.details = g.details || r.Detail != g.detail
	}
	out := make([]string, len(order))
	for i, w := range order {
		g := groups[w]
		r := unknown.Reason{Kind: w}
		if !g.details {
			r.Detail = g.detail
		}
		out[i] = strings.Join(g.parts, ", ") + ": " + r.String()
	}
	return strings.Join(out, "; ")
}

// noRSS reports whether the driver said it supports none of the RSS
// table, the hash fields and the flow rules: the table (or all of RSS)
// and the rules are unknown by the driver, and udp4's hash fields are
// unknown by the driver or empty (virtio_net without RSS answers
// ETHTOOL_GRXFH with no fields).
func noRSS(n *steer.NIC) bool {
	driver := func(p steer.Part) bool {
		r, ok := n.Why(p)
		return ok && r.Kind == unknown.KindDriver
	}
	if !driver(steer.PartRSS) && !driver(steer.PartRSSTable) {
		return false
	}
	if !driver(steer.PartRules) {
		return false
	}
	f, ok := n.FlowHash["udp4"]
	return driver(steer.FlowHashPart("udp4")) || (ok && f == "")
}

// tableKnown reports whether the NIC's RSS table is known.
func (s steerCtx) tableKnown() bool { return s.entries > 0 }

// shareOf says how much of the table names queue q: "64 of 128 RSS
// table entries (50%)".
func (s steerCtx) shareOf(q uint32) string {
	n := s.share[q]
	return fmt.Sprintf("%d of %d RSS table entries (%d%%)", n, s.entries, percent(n, s.entries))
}

// percent is 100*n/of rounded to the nearest integer.
func percent(n, of int) int {
	if of == 0 {
		return 0
	}
	return (200*n + of) / (2 * of)
}

// ruleTargets returns the queues the NIC's ntuple rules deliver to
// (rules of the main context and of no VF).
func (s steerCtx) ruleTargets() map[uint32][]uint32 {
	out := map[uint32][]uint32{}
	if s.n == nil || s.n.Rules == nil {
		return out
	}
	for _, r := range s.n.Rules.Rules {
		if r.Action != steer.RuleActionQueue || r.VF != 0 || r.Context != nil || r.Queue > 1<<31 {
			continue
		}
		out[uint32(r.Queue)] = append(out[uint32(r.Queue)], r.Location)
	}
	return out
}

// queueIRQs returns the IRQs that serve rx queue q: the IRQ of its NAPI
// instance when netdev netlink said it, else the queue IRQs named for it
// (a combined vector, or the rx one).
func (c *nicCtx) queueIRQs(q uint32) []*irq.IRQ {
	if napi := c.queueNAPI(q); napi != nil && napi.IRQ.Known() {
		for _, x := range c.irqs {
			if unknown.Is(napi.IRQ, x.IRQ) {
				return []*irq.IRQ{x}
			}
		}
	}
	var out []*irq.IRQ
	for _, x := range c.queues {
		if unknown.Is(x.Owner.Queue, int(q)) && x.Owner.Dir != "tx" {
			out = append(out, x)
		}
	}
	return out
}

// queueNAPI returns the NAPI instance serving rx queue q, or nil when
// netdev netlink did not say.
func (c *nicCtx) queueNAPI(q uint32) *steer.NAPI {
	n := c.steer.n
	if n == nil {
		return nil
	}
	for _, nq := range n.Queues {
		if nq.Type != steer.QueueTypeRX || nq.ID != q || nq.NAPI == 0 {
			continue
		}
		for i := range n.NAPIs {
			if n.NAPIs[i].ID == nq.NAPI {
				return &n.NAPIs[i]
			}
		}
	}
	return nil
}

// remoteWhere returns the CPUs off the NIC's node that the IRQs of a
// queue are delivered to, when every one of them is; empty otherwise.
func (c *nicCtx) remoteWhere(qs []*irq.IRQ) cpuset.Set {
	var remote cpuset.Set
	for _, q := range qs {
		w, ok := c.where[q.IRQ]
		if !ok || w.IsEmpty() || w.Intersects(c.loc.CPUs) {
			return cpuset.Set{}
		}
		remote = remote.Union(w)
	}
	return remote
}

// queuesList is "2-3" or "0,5" for a set of queue numbers (any u32 a
// table or rule names: units.List, never a CPU set).
func queuesList(qs []uint32) string { return units.List(qs) }

// queuesWord is "queue 2" or "queues 2-3".
func queuesWord(qs []uint32) string {
	if len(qs) == 1 {
		return fmt.Sprintf("queue %d", qs[0])
	}
	return "queues " + queuesList(qs)
}

// sortedQueues returns the keys of m, ascending.
func sortedQueues[V any](m map[uint32]V) []uint32 {
	out := make([]uint32, 0, len(m))
	for q := range m {
		out = append(out, q)
	}
	slices.Sort(out)
	return out
}
