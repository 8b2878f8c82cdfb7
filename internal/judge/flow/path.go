package flow

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/irqnuma/irqnuma/rsshash"
)

// Path is where one flow's received packets go and are processed. A
// fact that is not known is an unknown Value with its reason.
type Path struct {
	Flow     string         `json:"flow"`
	Proto    string         `json:"proto"`
	Src      string         `json:"src"`
	Dst      string         `json:"dst"`
	FlowType steer.FlowType `json:"flow_type"`
	// NIC receives the flow ("" with what-if values only); NICBy says
	// how it was chosen ("--nic" or whose address the destination is).
	NIC    string       `json:"nic,omitempty"`
	NICBy  string       `json:"nic_by"`
	Source steer.Source `json:"steering_source,omitempty"`

	RSS RSSPath `json:"rss"`
	// Rule is the ntuple rule the flow matches, which overrides RSS; nil
	// when none does.
	Rule *steer.Rule `json:"ntuple_rule,omitempty"`
	// Queue is the rx queue the flow lands on, QueueBy how that is known
	// ("rss" or "ntuple rule N"); unknown, its reason's Detail says why
	// in words ("queue unknown: ...", "no queue: ...").
	Queue   unknown.Value[uint32] `json:"queue"`
	QueueBy string                `json:"queue_by,omitempty"`
	// ARFS says when accelerated RFS may move the flow off Queue.
	ARFS string `json:"arfs,omitempty"`

	IRQ  unknown.Value[QueueIRQ]  `json:"irq"`
	NAPI unknown.Value[QueueNAPI] `json:"napi"`
	// Processing says what runs the queue's NET_RX work.
	Processing unknown.Value[Processing] `json:"processing"`
	// RPS is the queue's rps_cpus: "" when RPS is off.
	RPS unknown.Value[string] `json:"rps_cpus"`
	// Node is the NIC's node; CPUNodes the nodes of the CPUs the
	// processing may land on.
	Node     unknown.Value[int] `json:"nic_node"`
	CPUNodes string             `json:"cpu_nodes,omitempty"`
	Notes    []string           `json:"notes,omitempty"`
	// Threads are, for a process's flow, where each of its threads last
	// ran relative to the CPU processing the flow.
	Threads []ThreadPlace `json:"threads,omitempty"`
	// Observed is what the NIC's per-queue counters did while the flow
	// ran (--observe), judged against Queue; nil without --observe.
	Observed *Observation `json:"observed,omitempty"`
}

// MarshalJSON writes each unknown field's reason beside it.
func (p Path) MarshalJSON() ([]byte, error) {
	type plain Path
	return unknown.MarshalObject(plain(p))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (p *Path) UnmarshalJSON(b []byte) error {
	type plain Path
	return unknown.UnmarshalObject(b, (*plain)(p))
}

// Processing is what runs a queue's NET_RX work.
type Processing string

// The ways a queue's receive work runs.
const (
	// ProcessingIRQ: the NET_RX softirq after the queue's IRQ, on the
	// CPU the IRQ lands on.
	ProcessingIRQ Processing = "irq"
	// ProcessingNAPIThread: the queue's threaded NAPI kernel thread.
	ProcessingNAPIThread Processing = "napi-thread"
)

// RSSPath is the RSS part: each input, where it came from, and the result.
type RSSPath struct {
	Fields     unknown.Value[steer.HashFields] `json:"fields"`
	FieldsFrom string                          `json:"fields_from,omitempty"` // "nic" or "--rss-fields"
	Func       string                          `json:"function,omitempty"`
	FuncFrom   string                          `json:"function_from,omitempty"`
	Key        steer.Key                       `json:"key,omitempty"` // colon-separated hex, as ethtool -x
	KeyFrom    string                          `json:"key_from,omitempty"`
	TableSize  int                             `json:"table_size,omitempty"`
	TableFrom  string                          `json:"table_from,omitempty"`
	// Hash, Index and Queue are the result; each unknown says why in its
	// reason's Detail (the hash's inputs that are missing, the table).
	Hash      unknown.Value[uint32] `json:"hash"`
	HashHex   string                `json:"hash_hex,omitempty"` // "0x51ccc178"
	Index     unknown.Value[int]    `json:"index"`
	IndexRule string                `json:"index_rule,omitempty"`
	Queue     unknown.Value[uint32] `json:"queue"`
}

// MarshalJSON writes each unknown field's reason beside it.
func (r RSSPath) MarshalJSON() ([]byte, error) {
	type plain RSSPath
	return unknown.MarshalObject(plain(r))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (r *RSSPath) UnmarshalJSON(b []byte) error {
	type plain RSSPath
	return unknown.UnmarshalObject(b, (*plain)(r))
}

// QueueIRQ is the queue's interrupt and where it lands.
type QueueIRQ struct {
	IRQ       int                   `json:"irq"`
	Name      string                `json:"name,omitempty"`
	Requested string                `json:"requested_cpus"`
	Effective unknown.Value[string] `json:"effective_cpus"`
	By        string                `json:"by"` // "netdev napi" or the irq package's match
}

// MarshalJSON writes each unknown field's reason beside it.
func (q QueueIRQ) MarshalJSON() ([]byte, error) {
	type plain QueueIRQ
	return unknown.MarshalObject(plain(q))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (q *QueueIRQ) UnmarshalJSON(b []byte) error {
	type plain QueueIRQ
	return unknown.UnmarshalObject(b, (*plain)(q))
}

// QueueNAPI is the queue's NAPI instance and, when threaded, its thread.
type QueueNAPI struct {
	ID       uint32 `json:"id"`
	Threaded bool   `json:"threaded"`
	// PID is the NAPI kthread's; unknown, its reason says why the thread
	// is not known (netdev names none, its /proc entry is unreadable).
	PID  unknown.Value[int] `json:"pid"`
	Comm string             `json:"comm,omitempty"`
	// Allowed are the thread's allowed CPUs; unknown, why the thread
	// is not known.
	Allowed unknown.Value[string] `json:"allowed_cpus"`
	LastCPU unknown.Value[int]    `json:"last_cpu"`
}

// MarshalJSON writes each unknown field's reason beside it.
func (n QueueNAPI) MarshalJSON() ([]byte, error) {
	type plain QueueNAPI
	return unknown.MarshalObject(plain(n))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (n *QueueNAPI) UnmarshalJSON(b []byte) error {
	type plain QueueNAPI
	return unknown.UnmarshalObject(b, (*plain)(n))
}

// steer fills the RSS part and the queue: a matching ntuple rule first,
// else RSS.
func (p *Path) steer(f Flow, n *steer.NIC, w WhatIf) {
	p.rss(f, n, w)
	if n != nil && p.rule(f, n) {
		return
	}
	if p.RSS.Queue.Known() {
		p.Queue, p.QueueBy = p.RSS.Queue, "rss"
		return
	}
	why := p.RSS.Queue.Why()
	p.Queue = unknown.NotAs[uint32](why.Kind, "queue unknown: "+why.Detail)
}

// rss computes the hash, index and queue, or says why it cannot.
func (p *Path) rss(f Flow, n *steer.NIC, w WhatIf) {
	r := &p.RSS
	var nicRSS *steer.RSS
	if n != nil {
		nicRSS = n.RSS
	}
	var whys []unknown.Reason
	fields, why := fieldsOf(f, n, w, r)
	whys = appendWhy(whys, why)
	fn, why := funcOf(n, nicRSS, w, r)
	whys = appendWhy(whys, why)
	key, why := keyOf(n, nicRSS, w, r)
	whys = appendWhy(whys, why)
	// The table picks the queue, not the hash: without it the hash is
	// still said (fields, function and key make it), the queue not.
	table, tableWhy := tableOf(n, nicRSS, w, r)
	if len(whys) > 0 {
		r.noHash(joinWhys(appendWhy(whys, tableWhy)))
		return
	}
	if nicRSS != nil && nicRSS.InputXfrm != nil && *nicRSS.InputXfrm != 0 && w.Func == nil {
		r.noHash(unknown.Because(unknown.KindFailed, fmt.Sprintf("hash unknown: the NIC transforms the hash input (input_xfrm %d, symmetric hashing), a layout irqnuma does not compute", *nicRSS.InputXfrm)))
		return
	}
	if err := rsshash.Undefined(fn); err != nil {
		r.noHash(hashReason(err, fn))
		return
	}
	if !f.HasSrcPort() || !f.HasDstPort() {
		if fields.HasPorts() {
			r.noHash(unknown.Because(unknown.KindNotApplicable, fmt.Sprintf("hash unknown: the NIC hashes %s's ports (%s) and the flow gives %s", f.FlowType(), fields, missingPorts(f))))
			return
		}
	}
	if !fields.HasPorts() && (f.HasSrcPort() || f.HasDstPort()) {
		p.Notes = append(p.Notes, fmt.Sprintf("the NIC does not hash %s's ports (%s): every %s flow between these two addresses lands on one queue", f.FlowType(), fieldsOrNone(fields), f.Proto))
	}
	in, err := rsshash.Input(string(fields), f.Tuple())
	var h uint32
	if err == nil {
		h, err = rsshash.Toeplitz(key, in)
	}
	if err != nil {
		r.noHash(hashReason(err, fn))
		return
	}
	r.Hash, r.HashHex = unknown.Of(h), fmt.Sprintf("0x%08x", h)
	if tableWhy.Kind != "" {
		r.noQueue(tableWhy)
		return
	}
	idx, rule, err := rsshash.Index(h, len(table))
	if err != nil {
		r.noQueue(unknown.Because(unknown.KindFailed, "queue unknown: "+err.Error()))
		return
	}
	r.Index, r.IndexRule, r.Queue = unknown.Of(idx), rule, unknown.Of(table[idx])
}

// noHash says the hash, and so the index and queue, are unknown for why.
func (r *RSSPath) noHash(why unknown.Reason) {
	r.Hash = unknown.Not[uint32](why)
	r.noQueue(why)
}

// noQueue says the index and queue are unknown for why.
func (r *RSSPath) noQueue(why unknown.Reason) {
	r.Index, r.Queue = unknown.Not[int](why), unknown.Not[uint32](why)
}

// hashReason is why a hash of function fn is unknown after rsshash's
// err: rsshash.ErrUndefined (a function or input layout not defined
// exactly) is a hash irqnuma cannot compute, reported by the host (none
// named) or not; another error is the inputs' (a key too short).
func hashReason(err error, fn rsshash.Func) unknown.Reason {
	switch {
	case errors.Is(err, rsshash.ErrUndefined) && fn == "":
		return unknown.Because(unknown.KindNotReported, err.Error())
	case errors.Is(err, rsshash.ErrUndefined):
		return unknown.Because(unknown.KindFailed, err.Error())
	}
	return unknown.Because(unknown.KindMalformed, "hash unknown: "+err.Error())
}

func fieldsOrNone(h steer.HashFields) string {
	if h == "" {
		return "none"
	}
	return string(h)
}

func appendWhy(whys []unknown.Reason, why unknown.Reason) []unknown.Reason {
	if why.Kind == "" {
		return whys
	}
	return append(whys, why)
}

// joinWhys is one reason for several: the first's kind, and every
// detail.
func joinWhys(whys []unknown.Reason) unknown.Reason {
	d := make([]string, len(whys))
	for i, w := range whys {
		d[i] = w.Detail
	}
	return unknown.Because(whys[0].Kind, strings.Join(d, "; "))
}

func missingPorts(f Flow) string {
	switch {
	case !f.HasSrcPort() && !f.HasDstPort():
		return "neither port"
	case !f.HasSrcPort():
		return "no source port"
	}
	return "no destination port"
}

// reasonOf is why part of n is unknown, in words.
func reasonOf(n *steer.NIC, parts ...steer.Part) string {
	return whyOf(n, "", "", parts...).Detail
}

// whyOf is why part of n is unknown: the part's kind, and a detail of
// before, the reason in words and after ("no NIC" when there is no NIC:
// not applicable; "eth0 reports no rss" when no part says: not
// reported).
func whyOf(n *steer.NIC, before, after string, parts ...steer.Part) unknown.Reason {
	if n == nil {
		return unknown.Because(unknown.KindNotApplicable, before+"no NIC"+after)
	}
	for _, part := range parts {
		if r, ok := n.Why(part); ok {
			return unknown.Because(r.Kind, before+fmt.Sprintf("%s %s: %s", n.Name, part, r)+after)
		}
	}
	return unknown.Because(unknown.KindNotReported, before+fmt.Sprintf("%s reports no %s", n.Name, parts[0])+after)
}

func fieldsOf(f Flow, n *steer.NIC, w WhatIf, r *RSSPath) (steer.HashFields, unknown.Reason) {
	if w.Fields != nil {
		r.Fields, r.FieldsFrom = unknown.Of(*w.Fields), "--rss-fields"
		return *w.Fields, unknown.Reason{}
	}
	ft := f.FlowType()
	if n != nil {
		if h, ok := n.FlowHash[ft]; ok {
			r.Fields, r.FieldsFrom = unknown.Of(h), "nic"
			return h, unknown.Reason{}
		}
	}
	why := whyOf(n, "hash fields of "+string(ft)+" unknown (", ")", steer.FlowHashPart(ft))
	r.Fields = unknown.Not[steer.HashFields](why)
	return "", why
}

func funcOf(n *steer.NIC, rss *steer.RSS, w WhatIf, r *RSSPath) (rsshash.Func, unknown.Reason) {
	if w.Func != nil {
		r.Func, r.FuncFrom = string(*w.Func), "--rss-func"
		return *w.Func, unknown.Reason{}
	}
	if rss != nil && rss.HashFunc != "" {
		r.Func, r.FuncFrom = rss.HashFunc, "nic"
		return rsshash.Func(rss.HashFunc), unknown.Reason{}
	}
	if n == nil {
		// What-if values alone: Toeplitz, the one function every RSS NIC has.
		r.Func, r.FuncFrom = string(rsshash.FuncToeplitz), "default (no NIC, no --rss-func)"
		return rsshash.FuncToeplitz, unknown.Reason{}
	}
	return "", whyOf(n, "hash function unknown (", "; --rss-func names it)", steer.PartRSS)
}

func keyOf(n *steer.NIC, rss *steer.RSS, w WhatIf, r *RSSPath) ([]byte, unknown.Reason) {
	k, from := w.Key, "--rss-key"
	if len(k) == 0 && rss != nil {
		k, from = rss.Key, "nic"
	}
	if len(k) == 0 {
		return nil, whyOf(n, "key unknown (", ")", steer.PartRSSKey, steer.PartRSS)
	}
	r.Key, r.KeyFrom = steer.Key(k), from
	return k, unknown.Reason{}
}

func tableOf(n *steer.NIC, rss *steer.RSS, w WhatIf, r *RSSPath) ([]uint32, unknown.Reason) {
	t, from := w.Table, "--rss-table"
	if len(t) == 0 && rss != nil {
		t, from = rss.Table, "nic"
	}
	if len(t) == 0 {
		return nil, whyOf(n, "indirection table unknown (", ")", steer.PartRSSTable, steer.PartRSS)
	}
	r.TableSize, r.TableFrom = len(t), from
	return t, unknown.Reason{}
}

// rule applies the first (lowest-location) ntuple rule the flow matches:
// ethtool_rx_flow_spec's location "must be numbered such that a flow
// matching multiple rules will be classified according to the first
// (lowest numbered) rule". It reports whether a rule decided the queue
// (or that it cannot be known).
func (p *Path) rule(f Flow, n *steer.NIC) bool {
	if n.Rules == nil {
		// A driver without ntuple support has no rules to override RSS.
		if r, ok := n.Why(steer.PartRules); ok && r.Kind != unknown.KindDriver {
			p.Notes = append(p.Notes, fmt.Sprintf("ntuple rules unknown (%s): a rule could override RSS", r))
		}
		return false
	}
	rules := append([]steer.Rule(nil), n.Rules.Rules...)
	sort.Slice(rules, func(i, j int) bool { return rules[i].Location < rules[j].Location })
	ft := f.FlowType()
	for i := range rules {
		r := &rules[i]
		if !ruleMatches(r, f) {
			if needsPort(r, f) {
				p.Notes = append(p.Notes, fmt.Sprintf("ntuple rule %d matches on a port the flow does not give: with it, the rule may override RSS", r.Location))
			}
			continue
		}
		if r.FlowType != ft {
			// ip4/ip6 user rules match by L3; their L4 protocol is not read.
			p.Notes = append(p.Notes, fmt.Sprintf("ntuple rule %d (%s) matches the addresses and may match this flow: its L4 protocol is not read", r.Location, r.FlowType))
			continue
		}
		p.Rule = r
		p.decideByRule(r)
		return true
	}
	return false
}

// decideByRule sets the queue a matching rule gives.
func (p *Path) decideByRule(r *steer.Rule) {
	by := fmt.Sprintf("ntuple rule %d", r.Location)
	switch {
	case r.Action == steer.RuleActionDrop:
		p.Queue = unknown.NotAs[uint32](unknown.KindNotApplicable, "no queue: "+by+" drops the flow")
	case r.Action != steer.RuleActionQueue:
		p.Queue = unknown.NotAs[uint32](unknown.KindNotApplicable, fmt.Sprintf("queue unknown: %s's action is %s", by, r.Action))
	case r.VF != 0:
		p.Queue = unknown.NotAs[uint32](unknown.KindNotApplicable, fmt.Sprintf("no queue of this host: %s sends the flow to VF %d's queue %d", by, r.VF, r.Queue))
	case r.Context != nil:
		p.Queue = unknown.NotAs[uint32](unknown.KindFailed, fmt.Sprintf("queue unknown: %s sends the flow into RSS context %d (queue offset %d), which irqnuma does not compute", by, *r.Context, r.Queue))
	case r.Queue > 0xffffffff:
		p.Queue = unknown.NotAs[uint32](unknown.KindMalformed, fmt.Sprintf("queue unknown: %s's queue %d is out of range", by, r.Queue))
	default:
		p.Queue, p.QueueBy = unknown.Of(uint32(r.Queue)), by
	}
}

// ruleMatches reports whether the flow's fields match a rule's: a rule
// of the flow's type, or an ip4/ip6 (user IP) rule of its family, whose
// each set mask bit matches (steer.Rule's masks are the kernel's).
func ruleMatches(r *steer.Rule, f Flow) bool {
	ft := f.FlowType()
	ip := steer.FlowType("ip4")
	if !f.Dst.Addr().Is4() {
		ip = "ip6"
	}
	if r.FlowType != ft && r.FlowType != ip {
		return false
	}
	return addrMatches(r.SrcIP, r.SrcMask, f.Src.Addr()) && addrMatches(r.DstIP, r.DstMask, f.Dst.Addr()) &&
		portMatches(r.SrcPort, r.SrcPortMask, f.Src.Port(), f.HasSrcPort()) &&
		portMatches(r.DstPort, r.DstPortMask, f.Dst.Port(), f.HasDstPort())
}

// needsPort reports whether the rule would be judged on a port the flow
// does not give, its other fields matching.
func needsPort(r *steer.Rule, f Flow) bool {
	srcNeeded := r.SrcPort != nil && r.SrcPortMask != 0 && !f.HasSrcPort()
	dstNeeded := r.DstPort != nil && r.DstPortMask != 0 && !f.HasDstPort()
	if !srcNeeded && !dstNeeded {
		return false
	}
	g := f
	if srcNeeded {
		g.Src, g.srcPort = netip.AddrPortFrom(f.Src.Addr(), *r.SrcPort), true
	}
	if dstNeeded {
		g.Dst, g.dstPort = netip.AddrPortFrom(f.Dst.Addr(), *r.DstPort), true
	}
	return ruleMatches(r, g)
}

func addrMatches(ip, mask string, a netip.Addr) bool {
	if ip == "" {
		return true
	}
	ri, err1 := netip.ParseAddr(ip)
	m, err2 := netip.ParseAddr(mask)
	if err1 != nil || err2 != nil || ri.Is4() != a.Is4() || m.Is4() != a.Is4() {
		return false
	}
	rb, mb, ab := ri.AsSlice(), m.AsSlice(), a.AsSlice()
	for i := range ab {
		if (rb[i]^ab[i])&mb[i] != 0 {
			return false
		}
	}
	return true
}

// portMatches: a rule port with a non-zero mask needs the flow's port; a
// flow that does not give it cannot match.
func portMatches(port *uint16, mask, have uint16, known bool) bool {
	if port == nil || mask == 0 {
		return true
	}
	return known && (*port^have)&mask == 0
}
