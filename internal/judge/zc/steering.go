package zc

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/nslink"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// headerSplit: net_mp_open_rxq refuses a device whose tcp-data-split is
// not enabled or whose hds-thresh is not 0 (EINVAL).
func (c *checker) headerSplit() Prereq {
	const what = "tcp-data-split on and hds-thresh 0 (ethtool -g)"
	fix := "ethtool -G " + c.nic.Name + " tcp-data-split on hds-thresh 0"
	r := c.st.Rings
	if r == nil {
		return notKnown(IDHeaderSplt, what, c.partKind(steer.PartRings), c.partWhy(steer.PartRings, "ring parameters (ethtool -g):"), "")
	}
	split, ok := r.TCPDataSplit.Get()
	if !ok {
		if r.TxPush == nil && r.RXBufLen == nil && r.CQESize == nil {
			return notKnown(IDHeaderSplt, what, unknown.KindKernel, "ethtool -g reports none of the newer ring settings (an older ethtool or kernel): header split not reported", "")
		}
		return fails(IDHeaderSplt, what, "ethtool -g: TCP data split n/a (the driver has no header split)",
			"none on this NIC: the driver cannot split headers")
	}
	if split != steer.TCPDataSplitEnabled {
		return fails(IDHeaderSplt, what, "ethtool -g: TCP data split "+string(split), fix)
	}
	if r.HDSThresh == nil {
		return notKnown(IDHeaderSplt, what, unknown.KindKernel, "TCP data split on; the kernel reports no hds-thresh (before 6.14)", fix)
	}
	if *r.HDSThresh != 0 {
		return fails(IDHeaderSplt, what, fmt.Sprintf("TCP data split on, hds-thresh %d", *r.HDSThresh), "ethtool -G "+c.nic.Name+" hds-thresh 0")
	}
	return holds(IDHeaderSplt, what, "TCP data split on, hds-thresh 0")
}

// channels: the zero-copy queue and at least one other for the rest.
func (c *checker) channels() Prereq {
	const what = "at least 2 rx channels, the zero-copy queue among them (ethtool -l)"
	ch := c.st.Channels
	if ch == nil {
		return notKnown(IDChannels, what, c.partKind(steer.PartChannels), c.partWhy(steer.PartChannels, "channels (ethtool -l):"), "")
	}
	n := int(ch.RXQueues())
	need := 2
	if c.queue != nil && *c.queue+1 > need {
		need = *c.queue + 1
	}
	ev := fmt.Sprintf("%d rx queue(s) (combined %d, rx %d; at most combined %d, rx %d)", n, ch.Combined, ch.RX, ch.MaxCombined, ch.MaxRX)
	if n >= need {
		return holds(IDChannels, what, ev)
	}
	if c.queue != nil && *c.queue >= n {
		ev += fmt.Sprintf("; queue %d does not exist", *c.queue)
	}
	switch {
	case ch.Combined > 0 && int(ch.MaxCombined) >= need || ch.RX == 0 && int(ch.MaxCombined) >= need:
		return fails(IDChannels, what, ev, fmt.Sprintf("ethtool -L %s combined %d", c.nic.Name, need))
	case int(ch.MaxRX) >= need:
		return fails(IDChannels, what, ev, fmt.Sprintf("ethtool -L %s rx %d", c.nic.Name, need))
	}
	return fails(IDChannels, what, ev, fmt.Sprintf("none on this NIC: it offers at most %d", max(ch.MaxCombined, ch.MaxRX)))
}

// rss: the default RSS context must send no other flow to the queue
// (the selftest sets `ethtool -X IF equal N-1` and steers the flow there).
func (c *checker) rss() Prereq {
	const what = "RSS leaves the zero-copy queue out (ethtool -x)"
	if c.queue == nil {
		return notKnown(IDRSS, what, unknown.KindNotApplicable, "no queue to check: give --queue", "")
	}
	q := *c.queue
	if c.st.RSS == nil {
		return notKnown(IDRSS, what, c.partKind(steer.PartRSS), c.partWhy(steer.PartRSS, "RSS (ethtool -x):"), "")
	}
	if len(c.st.RSS.Table) == 0 {
		return notKnown(IDRSS, what, c.partKind(steer.PartRSSTable), c.partWhy(steer.PartRSSTable, "the indirection table:"), "")
	}
	share := c.st.RSS.Share()[uint32(q)]
	size := len(c.st.RSS.Table)
	if share == 0 {
		return holds(IDRSS, what, fmt.Sprintf("none of the table's %d entries is queue %d", size, q))
	}
	return fails(IDRSS, what, fmt.Sprintf("%d of the table's %d entries send flows to queue %d", share, size, q), c.rssFix(q))
}

// rssFix spreads the table over every rx queue but q: `equal q` when q
// is the last, else weights with 0 at q.
func (c *checker) rssFix(q int) string {
	n := 0
	if c.st.Channels != nil {
		n = int(c.st.Channels.RXQueues())
	}
	if n == 0 || q == n-1 {
		return fmt.Sprintf("ethtool -X %s equal %d", c.nic.Name, q)
	}
	w := make([]string, n)
	for i := range w {
		w[i] = "1"
	}
	if q < n {
		w[q] = "0"
	}
	return fmt.Sprintf("ethtool -X %s weight %s", c.nic.Name, strings.Join(w, " "))
}

func (c *checker) ntuple() Prereq {
	const what = "ntuple-filters on (ethtool -k)"
	if c.st.Features == nil {
		return notKnown(IDNtuple, what, c.partKind(steer.PartFeatures), c.partWhy(steer.PartFeatures, "features (ethtool -k):"), "")
	}
	// The kernel's name (netlink) and ethtool's (ethtool -k text).
	f, ok := c.st.Features["rx-ntuple-filter"]
	if !ok {
		f, ok = c.st.Features["ntuple-filters"]
	}
	switch {
	case !ok:
		return fails(IDNtuple, what, "the driver has no ntuple-filters feature", "none on this NIC: the driver has no flow steering")
	case f.On:
		return holds(IDNtuple, what, "ntuple-filters: on")
	case f.Fixed:
		return fails(IDNtuple, what, "ntuple-filters: off [fixed]", "none on this NIC: the driver cannot turn ntuple-filters on")
	}
	return fails(IDNtuple, what, "ntuple-filters: off", "ethtool -K "+c.nic.Name+" ntuple on")
}

// flowRule: a TCP rule steering the port (any destination port without
// --port) to the queue, directly or through an RSS context whose table
// holds only the queue.
func (c *checker) flowRule() Prereq {
	what := "a flow rule steering the port to the queue (ethtool -n)"
	port := "PORT"
	if c.o.Port != nil {
		port = strconv.Itoa(*c.o.Port)
		what = "a flow rule steering TCP port " + port + " to the queue (ethtool -n)"
	}
	if c.queue == nil {
		return notKnown(IDFlowRule, what, unknown.KindNotApplicable, "no queue to check: give --queue", "")
	}
	q := *c.queue
	fix := fmt.Sprintf("ethtool -N %s flow-type tcp6 dst-port %s action %d", c.nic.Name, port, q)
	if c.st.Rules == nil {
		return notKnown(IDFlowRule, what, c.partKind(steer.PartRules), c.partWhy(steer.PartRules, "flow rules (ethtool -n):"), fix)
	}
	var elsewhere []string
	for _, r := range c.st.Rules.Rules {
		if !c.rulePort(r) {
			continue
		}
		to, ok := c.ruleQueue(r)
		if ok && to == q {
			return holds(IDFlowRule, what, fmt.Sprintf("rule %d: %s dst-port %d to queue %d", r.Location, r.FlowType, *r.DstPort, q))
		}
		elsewhere = append(elsewhere, fmt.Sprintf("rule %d sends %s dst-port %d to %s", r.Location, r.FlowType, *r.DstPort, ruleTarget(r)))
	}
	ev := fmt.Sprintf("none of the %d rules steers ", len(c.st.Rules.Rules))
	if c.o.Port != nil {
		ev += "TCP port " + port
	} else {
		ev += "a TCP destination port"
	}
	ev += fmt.Sprintf(" to queue %d", q)
	if len(elsewhere) > 0 {
		ev += " (" + strings.Join(elsewhere, "; ") + ")"
	}
	return fails(IDFlowRule, what, ev, fix)
}

// rulePort reports whether r matches exactly the TCP destination port
// asked for (any port without --port).
func (c *checker) rulePort(r steer.Rule) bool {
	if r.FlowType != "tcp4" && r.FlowType != "tcp6" || r.Action != steer.RuleActionQueue || r.VF != 0 {
		return false
	}
	if r.DstPort == nil || r.DstPortMask != 0xffff {
		return false
	}
	return c.o.Port == nil || int(*r.DstPort) == *c.o.Port
}

// ruleQueue is the one queue r delivers to: its queue, or through an RSS
// context, the queue every entry of the context's table plus the rule's
// offset names; false when that is not one queue or not known.
func (c *checker) ruleQueue(r steer.Rule) (int, bool) {
	if r.Context == nil {
		return int(r.Queue), true
	}
	for _, ctx := range c.st.Contexts {
		if ctx.Context != *r.Context || len(ctx.Table) == 0 {
			continue
		}
		first := ctx.Table[0]
		for _, e := range ctx.Table {
			if e != first {
				return 0, false
			}
		}
		return int(uint64(first) + r.Queue), true
	}
	return 0, false
}

func ruleTarget(r steer.Rule) string {
	if r.Context != nil {
		return fmt.Sprintf("RSS context %d (offset %d)", *r.Context, r.Queue)
	}
	return fmt.Sprintf("queue %d", r.Queue)
}

// xdp: net_mp_open_rxq refuses a device with an XDP program (EEXIST).
// Whether one is attached is the NIC's IFLA_XDP in the host namespace's
// links (nslink): asked of the kernel live, read from a root's recording.
func (c *checker) xdp() Prereq {
	const what = "no XDP program on the NIC"
	name := c.nic.Name
	fix := "ip link set dev " + name + " xdp off"
	ls, why := hostLinks(c.fsys)
	if ls == nil {
		return notKnown(IDXDP, what, linksKind(why), why, fix+" (when `ip -d link show "+name+"` shows one)")
	}
	l, ok := ls.ByName(name)
	switch {
	case !ok && ls.Namespace == "":
		return notKnown(IDXDP, what, unknown.KindNotCaptured, fmt.Sprintf("%s is not among the links of the %s", name, ls.Source), fix+" (when ip link shows one)")
	case !ok:
		return notKnown(IDXDP, what, unknown.KindNotCaptured, fmt.Sprintf("%s is not among the links of %s (%s)", name, ls.Namespace, ls.Source), fix+" (when ip link shows one)")
	case !l.XDP.Reported:
		return notKnown(IDXDP, what, unknown.KindKernel, "the kernel sent no IFLA_XDP for "+name, fix+" (when ip link shows one)")
	case l.XDP.Attached == nslink.XDPAttachedNone && ls.Namespace == "":
		return holds(IDXDP, what, fmt.Sprintf("no XDP program attached (%s: no xdp on %s)", ls.Source, name))
	case l.XDP.Attached == nslink.XDPAttachedNone:
		return holds(IDXDP, what, "no XDP program attached (IFLA_XDP: none)")
	}
	from := ""
	if ls.Namespace == "" {
		from = " (" + ls.Source + ")"
	}
	return fails(IDXDP, what, xdpEvidence(l.XDP)+from+"; zero-copy receive refuses a queue of a device with XDP (EEXIST)", fix)
}

// xdpEvidence says which programs are attached in which mode.
func xdpEvidence(x nslink.XDP) string {
	var ps []string
	for _, m := range []struct {
		id   uint32
		mode string
	}{{x.DrvProgID, "driver"}, {x.SKBProgID, "generic"}, {x.HWProgID, "offload"}} {
		if m.id != 0 {
			ps = append(ps, fmt.Sprintf("program id %d attached in %s mode", m.id, m.mode))
		}
	}
	if len(ps) == 0 {
		if x.ProgID != 0 {
			return fmt.Sprintf("program id %d attached in %s mode", x.ProgID, x.Mode())
		}
		return "a program attached in " + x.Mode() + " mode (IFLA_XDP gives no id)"
	}
	return strings.Join(ps, ", ")
}

// hostLinks reads the links of the host's network namespace: live, by
// PID 1's namespace or irqnuma's own; on a captured root, its
// recording, else a sosreport's `ip -s -d link` (nslink.ReadSos: no
// Namespace, Source names the file). nil with why when they cannot be
// had.
func hostLinks(fsys kfile.FS) (*nslink.Links, string) {
	ns := nslink.HostNamespace(fsys)
	if ns == "" {
		if !fsys.Live() {
			if ls, found := nslink.ReadSos(fsys); found {
				if !ls.Links.Known() {
					return nil, "not read: " + ls.Links.Why().Detail
				}
				return ls, ""
			}
			return nil, "not captured: the root records no host network namespace (" + nslink.RecordDir + "/host) and holds no sosreport ip -s -d link"
		}
		return nil, "not read: the host's network namespace is unknown"
	}
	pids := []int{0}
	if fsys.Live() {
		pids = []int{1, os.Getpid()}
	}
	var whys []string
	for _, pid := range pids {
		ls, err := nslink.Read(fsys, pid, ns)
		if err != nil {
			return nil, "not read: " + err.Error()
		}
		if ls.Links.Known() {
			return ls, ""
		}
		whys = append(whys, ls.Links.Why().Detail)
	}
	if !fsys.Live() {
		return nil, "not captured: " + strings.Join(whys, "; ")
	}
	return nil, "not read: " + strings.Join(whys, "; ")
}

// queueFree: net_mp_open_rxq refuses a queue that already has a memory
// provider (io_uring or devmem dmabuf, EEXIST) or an AF_XDP socket
// (EBUSY); netdev queue-get reports each on the queue from 6.15.
func (c *checker) queueFree() Prereq {
	const what = "no other memory provider or AF_XDP socket on the queue (netdev queue-get)"
	if c.queue == nil {
		return notKnown(IDQueueFree, what, unknown.KindNotApplicable, "no queue to check: give --queue", "")
	}
	q := *c.queue
	if len(c.st.Queues) == 0 {
		return notKnown(IDQueueFree, what, c.partKind(steer.PartQueues), c.partWhy(steer.PartQueues, "netdev queue-get:"), "")
	}
	for _, nq := range c.st.Queues {
		if nq.Type != steer.QueueTypeRX || int(nq.ID) != q {
			continue
		}
		switch {
		case nq.IOURing:
			return fails(IDQueueFree, what, fmt.Sprintf("rx queue %d has an io_uring zero-copy area", q), "close the io_uring that registered it, or pick another --queue")
		case nq.DMABuf != nil:
			return fails(IDQueueFree, what, fmt.Sprintf("rx queue %d is bound to dmabuf %d (devmem TCP)", q, *nq.DMABuf), "close the netlink socket that bound it, or pick another --queue")
		case nq.XSK:
			return fails(IDQueueFree, what, fmt.Sprintf("rx queue %d has an AF_XDP socket", q), "close the AF_XDP socket, or pick another --queue")
		case !c.versionKnown() || !c.version.AtLeast(recvKernel):
			return notKnown(IDQueueFree, what, unknown.KindKernel, fmt.Sprintf("rx queue %d reports none, but only a 6.15 or later kernel reports io-uring and xsk on a queue", q), "")
		}
		return holds(IDQueueFree, what, fmt.Sprintf("rx queue %d: no dmabuf, io-uring or xsk", q))
	}
	return notKnown(IDQueueFree, what, unknown.KindNotReported, fmt.Sprintf("netdev queue-get lists no rx queue %d", q), "")
}

// linksKind is the kind of hostLinks' why: not captured, or not read.
func linksKind(why string) unknown.Kind {
	if strings.HasPrefix(why, "not captured") {
		return unknown.KindNotCaptured
	}
	return unknown.KindFailed
}
