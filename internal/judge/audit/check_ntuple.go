package audit

import (
	"fmt"
	"strings"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/host/steer"
)

// Flow rules that bypass RSS to a remote queue: ntuple-remote.
const CheckNtupleRemote Check = "ntuple-remote"

func init() {
	register(&check{ids: []Check{CheckNtupleRemote}, needs: []fact{factSteer}, nic: (*auditor).checkNtuple})
}

// checkNtuple: an ntuple rule delivering to a queue whose IRQ, or whose
// NAPI kthread when NAPI is threaded, is off the NIC's node.
func (a *auditor) checkNtuple(c *nicCtx) error {
	n := c.steer.n
	if n == nil || n.Rules == nil {
		return a.steerSkip(c)
	}
	if len(n.Rules.Rules) == 0 {
		return nil
	}
	if !c.loc.Known() {
		if len(a.h.Nodes) > 1 {
			return skip(c.nic.Name, string(CheckNtupleRemote), fmt.Sprintf("%s's locality is unknown: the queues its flow rules steer to are not called local or remote", c.nic.Name))
		}
		return nil
	}
	for _, r := range n.Rules.Rules {
		if r.Action != steer.RuleActionQueue || r.VF != 0 || r.Context != nil || r.Queue > 1<<31 {
			continue
		}
		q := uint32(r.Queue)
		irqs := c.queueIRQs(q)
		where, what := c.remoteWhere(irqs), ""
		if !where.IsEmpty() {
			what = fmt.Sprintf("whose %s %s delivered to %s", irqWord(irqs), isAre(len(irqs)), a.describeRemote(where, c.loc.CPUs))
		} else if t, cpus := a.remoteKthread(c, q); t != "" {
			where, what = cpus, "whose NAPI kthread "+t
		}
		if what == "" {
			continue
		}
		nodes, _ := a.h.NodesOf(where)
		a.add(Finding{Check: CheckNtupleRemote, Severity: SeverityError, NIC: c.nic.Name,
			Subject: fmt.Sprintf("rule %d (queue %d)", r.Location, q), IRQ: irqNumbers(irqs), CPUs: where, Nodes: nodes.IDs(),
			Message: fmt.Sprintf("ntuple rule %d of %s (%s) sends its flows to queue %d, %s, off the NIC's %s: RSS does not apply to them",
				r.Location, c.nic.Name, ruleWords(r), q, what, NodeName(c.loc)),
			Fix: c.fix(fmt.Sprintf("%s  # or send the rule to a local queue: ethtool -N %s delete %d, then add it again with a local action",
				pinFix(c.ifname), c.ifname, r.Location))})
	}
	return nil
}

// remoteKthread says how the NAPI kthread of queue q runs off the NIC's
// node ("napi/eth0-8193 (PID 812) may only run on CPUs 0-15 (node 0)"),
// with those CPUs; "" when it does not, or is not known to.
func (a *auditor) remoteKthread(c *nicCtx, q uint32) (string, cpuset.Set) {
	napi := c.queueNAPI(q)
	if napi == nil || napi.PID <= 0 {
		return "", cpuset.Set{}
	}
	p := a.opts.NAPIThreads[napi.PID]
	if p == nil {
		return "", cpuset.Set{}
	}
	allowed := a.online(p.Allowed)
	if !allowed.IsEmpty() && !allowed.Intersects(c.loc.CPUs) {
		return fmt.Sprintf("%s may only run on %s", threadName(p.Comm, napi.PID), a.describeRemote(allowed, c.loc.CPUs)), allowed
	}
	if last := lastCPU(p.Threads); last >= 0 && !c.loc.CPUs.Contains(last) && a.h.NodeOf(last).Known() {
		cpus := cpuset.New(last)
		return fmt.Sprintf("%s last ran on %s", threadName(p.Comm, napi.PID), a.describeRemote(cpus, c.loc.CPUs)), cpus
	}
	return "", cpuset.Set{}
}

// threadName is "napi/eth0-8193 (PID 812)".
func threadName(comm string, pid int) string {
	if comm == "" {
		return fmt.Sprintf("PID %d", pid)
	}
	return fmt.Sprintf("%s (PID %d)", comm, pid)
}

// irqWord is "IRQ 290" or "IRQs 290, 306".
func irqWord(qs []*irq.IRQ) string { return irqsSubjectList(irqNumbers(qs)) }

// isAre is "is" for one, "are" for more.
func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// ruleWords says what a rule matches as ethtool -N takes it: "tcp4
// dst-ip 192.0.2.2 dst-port 5201".
func ruleWords(r steer.Rule) string {
	w := []string{string(r.FlowType)}
	// An address of mask 0 (the kernel's sense: no bit compared), or
	// unspecified, and a port of mask 0 match anything: they are left
	// out, as ethtool -N takes a rule without them.
	if matchesAddr(r.SrcIP, r.SrcMask) {
		w = append(w, "src-ip "+r.SrcIP)
	}
	if matchesAddr(r.DstIP, r.DstMask) {
		w = append(w, "dst-ip "+r.DstIP)
	}
	if r.SrcPort != nil && r.SrcPortMask != 0 {
		w = append(w, fmt.Sprintf("src-port %d", *r.SrcPort))
	}
	if r.DstPort != nil && r.DstPortMask != 0 {
		w = append(w, fmt.Sprintf("dst-port %d", *r.DstPort))
	}
	return strings.Join(w, " ")
}

// matchesAddr reports whether a rule's address match says anything.
func matchesAddr(ip, mask string) bool {
	unspecified := func(s string) bool { return s == "" || s == "0.0.0.0" || s == "::" }
	return !unspecified(ip) && !unspecified(mask)
}
