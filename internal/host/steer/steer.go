// Package steer reads where a NIC sends the packets it receives, past the
// interrupt: its channels and rings, its RSS indirection table, key and
// hash function, the fields it hashes per flow type, its ntuple rules,
// its features and coalescing (ethtool), and which NAPI instance serves
// each queue, on which IRQ and in which kernel thread (netdev netlink),
// with the kernel's own knobs beside them (threaded NAPI, defer and GRO
// flush timeouts, RPS, busy polling).
//
// Most of it is not in files: the live host answers over generic netlink
// and the ethtool ioctl. Those answers sit behind ethnl's Asker
// interface, which has three forms: the live host's sockets, the same replies
// recorded under a root's irqnuma/ folder (a snapshot stores exactly
// what the live reads returned, and reading a snapshot decodes them
// again), and the ethtool text a sosreport keeps under
// sos_commands/networking/. Every fact is known, or says why not in
// NIC.Unknown: never a guess and never a zero.
package steer

import (
	"sort"

	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Part names one reading of a NIC's steering, as NIC.Unknown keys it.
type Part string

// The parts of a NIC's steering. A flow type's hash fields are the part
// PartFlowHash + ":" + the flow type ("rx-flow-hash:udp4"), see
// FlowHashPart.
const (
	PartChannels  Part = "channels"
	PartRings     Part = "rings"
	PartRSS       Part = "rss"
	PartContexts  Part = "rss-contexts"
	PartFeatures  Part = "features"
	PartCoalesce  Part = "coalesce"
	PartFlowHash  Part = "rx-flow-hash"
	PartRules     Part = "ntuple"
	PartQueues    Part = "queues"   // netdev queue-get
	PartNAPI      Part = "napi"     // netdev napi-get
	PartQStats    Part = "qstats"   // netdev qstats-get
	PartThreaded  Part = "threaded" // sysfs threaded
	PartDriver    Part = "driver"   // ethtool -i
	PartNAPIDefer Part = "napi-defer"
	// PartRSSTable and PartRSSKey say why a known RSS context has no
	// Table or Key (a driver that reports only its hash function);
	// PartRSSRings why RSS.Rings is 0 (ETHTOOL_GRXRINGS failed).
	PartRSSTable  Part = "rss-table"
	PartRSSKey    Part = "rss-key"
	PartRSSRings  Part = "rss-rings"
	PartPrivFlags Part = "priv-flags" // ethtool --show-priv-flags
)

// FlowHashPart is the part of one flow type's hash fields.
func FlowHashPart(ft FlowType) Part { return PartFlowHash + Part(":"+string(ft)) }

// NIC is everything read about one interface's steering. A part that is
// nil (or an empty map) is unknown, and Unknown says why; a part that is
// set is what the kernel, or the capture of it, said.
type NIC struct {
	Name  string `json:"name"`
	Index int    `json:"ifindex,omitempty"` // 0 when not known (a capture without it)

	Driver   *DriverInfo `json:"driver,omitempty"`
	Channels *Channels   `json:"channels,omitempty"`
	Rings    *Rings      `json:"rings,omitempty"`
	RSS      *RSS        `json:"rss,omitempty"`
	// Contexts are the extra RSS contexts (1 and up), empty when the NIC
	// has none; absent when they could not be read, as every part: then
	// Unknown[PartContexts] says why.
	Contexts []RSS              `json:"rss_contexts,omitempty"`
	Features map[string]Feature `json:"features,omitempty"`
	Coalesce map[string]uint32  `json:"coalesce,omitempty"` // ethtool's names: rx-usecs, adaptive-rx (0/1), ...
	// FlowHash is, per flow type, the fields the NIC hashes; a flow
	// type absent from it is unknown (FlowHashPart says why).
	FlowHash map[FlowType]HashFields `json:"rx_flow_hash,omitempty"`
	Rules    *Rules                  `json:"ntuple,omitempty"`
	// PrivFlags are the driver's private flags (ethtool
	// --show-priv-flags: i40e's flow-director-atr steers flows past
	// RSS); absent when not read, and Unknown[PartPrivFlags] says why
	// when the capture has them and they do not parse.
	PrivFlags map[string]bool `json:"priv_flags,omitempty"`

	// Queues and NAPIs come from netdev netlink (queue-get, napi-get).
	Queues []NetdevQueue `json:"queues,omitempty"`
	NAPIs  []NAPI        `json:"napis,omitempty"`
	QStats []QStats      `json:"qstats,omitempty"`

	// Kernel knobs from sysfs, per interface.
	Sysfs Sysfs `json:"sysfs"`

	// Unknown says why each part that is not set is not known.
	Unknown map[Part]unknown.Reason `json:"unknown,omitempty"`
}

// SetUnknown records why part is not known.
func (n *NIC) SetUnknown(p Part, r unknown.Reason) {
	if n.Unknown == nil {
		n.Unknown = make(map[Part]unknown.Reason)
	}
	n.Unknown[p] = r
}

// Why returns why part is unknown, and false when nothing says it is.
func (n *NIC) Why(p Part) (unknown.Reason, bool) {
	r, ok := n.Unknown[p]
	return r, ok
}

// UnknownParts lists the unknown parts in order.
func (n *NIC) UnknownParts() []Part {
	out := make([]Part, 0, len(n.Unknown))
	for p := range n.Unknown {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// DriverInfo is what ethtool -i (ETHTOOL_GDRVINFO) says.
type DriverInfo struct {
	Driver   string `json:"driver"`
	Version  string `json:"version,omitempty"`
	Firmware string `json:"firmware,omitempty"`
	BusInfo  string `json:"bus_info,omitempty"`
}

// Channels is ethtool -l: the maxima and the current counts. A maximum of
// 0 is the kernel's "n/a" (the driver has no such channel kind), and so
// is its count.
type Channels struct {
	MaxRX       uint32 `json:"max_rx"`
	MaxTX       uint32 `json:"max_tx"`
	MaxOther    uint32 `json:"max_other"`
	MaxCombined uint32 `json:"max_combined"`
	RX          uint32 `json:"rx"`
	TX          uint32 `json:"tx"`
	Other       uint32 `json:"other"`
	Combined    uint32 `json:"combined"`
}

// RXQueues is how many queues can receive: combined plus rx-only.
func (c Channels) RXQueues() uint32 { return c.Combined + c.RX }

// TCPDataSplit is ethtool's tcp-data-split ring setting, as read.
type TCPDataSplit string

// The values of tcp-data-split a driver reports (ETHTOOL_TCP_DATA_SPLIT_*
// but UNKNOWN, which a reading says as an unknown Rings.TCPDataSplit).
const (
	TCPDataSplitDisabled TCPDataSplit = "off"
	TCPDataSplitEnabled  TCPDataSplit = "on"
)

// The reasons a tcp-data-split is unknown: the driver says
// ETHTOOL_TCP_DATA_SPLIT_UNKNOWN (ethtool's "n/a": it has no header
// split), or the kernel or the capture does not report the setting.
var (
	DataSplitNA          = unknown.Reason{Kind: unknown.KindDriver, Detail: "the driver reports tcp-data-split n/a (no header split)"}
	DataSplitNotReported = unknown.Reason{Kind: unknown.KindKernel, Detail: "ethtool -g reports no tcp-data-split (a kernel or ethtool older than it)"}
)

// Rings is ethtool -g. A pointer field is nil when the kernel or the
// capture did not report it (an older kernel, a driver without it).
type Rings struct {
	MaxRX      uint32 `json:"max_rx"`
	MaxRXMini  uint32 `json:"max_rx_mini"`
	MaxRXJumbo uint32 `json:"max_rx_jumbo"`
	MaxTX      uint32 `json:"max_tx"`
	RX         uint32 `json:"rx"`
	RXMini     uint32 `json:"rx_mini"`
	RXJumbo    uint32 `json:"rx_jumbo"`
	TX         uint32 `json:"tx"`

	RXBufLen *uint32 `json:"rx_buf_len,omitempty"`
	CQESize  *uint32 `json:"cqe_size,omitempty"`
	TxPush   *bool   `json:"tx_push,omitempty"`
	RxPush   *bool   `json:"rx_push,omitempty"`
	// TCPDataSplit is unknown with DataSplitNA or DataSplitNotReported.
	TCPDataSplit unknown.Value[TCPDataSplit] `json:"tcp_data_split"`
	HDSThresh    *uint32                     `json:"hds_thresh,omitempty"`
	HDSThreshMax *uint32                     `json:"hds_thresh_max,omitempty"`
}

// MarshalJSON writes the tcp-data-split's reason beside it when it is
// unknown.
func (r Rings) MarshalJSON() ([]byte, error) {
	type plain Rings
	return unknown.MarshalObject(plain(r))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (r *Rings) UnmarshalJSON(b []byte) error {
	type plain Rings
	return unknown.UnmarshalObject(b, (*plain)(r))
}

// RSS is one RSS context: its indirection table, key and hash function.
// An empty Table or Key is one the NIC did not report (a driver that has
// only a hash function, as virtio_net without RSS); Unknown says why at
// the NIC.
type RSS struct {
	Context uint32 `json:"context"`
	// Rings is the number of rx rings ETHTOOL_GRXRINGS reports, which
	// ethtool -x prints as "with N RX ring(s)"; 0 when unknown.
	Rings uint32   `json:"rx_rings,omitempty"`
	Table []uint32 `json:"table,omitempty"`
	Key   Key      `json:"key,omitempty"`
	// HashFunc is the active hash function's name as the kernel's
	// string set calls it ("toeplitz", "xor", "crc32"); "" when unknown.
	HashFunc string `json:"hash_function,omitempty"`
	// InputXfrm is ETHTOOL_A_RSS_INPUT_XFRM (1: symmetric-xor, 2:
	// symmetric-or-xor); nil when not reported.
	InputXfrm *uint32 `json:"input_xfrm,omitempty"`
}

// Share returns, per queue, how many table entries point at it.
func (r RSS) Share() map[uint32]int {
	out := make(map[uint32]int)
	for _, q := range r.Table {
		out[q]++
	}
	return out
}

// Feature is one netdev feature (ethtool -k): whether it is on, and
// whether it can be changed.
type Feature struct {
	On    bool `json:"on"`
	Fixed bool `json:"fixed,omitempty"`
}

// FlowType is an ethtool flow type as ethtool's rx-flow-hash names it:
// tcp4, udp4, sctp4, ah4, esp4, ip4, tcp6, ... .
type FlowType string

// HashFields are the fields a NIC hashes for one flow type, in ethtool's
// letters (m: L2 destination, v: VLAN, t: L3 protocol, s: IP source, d:
// IP destination, f: L4 bytes 0-1 (source port), n: L4 bytes 2-3
// (destination port), r: discard), in that order; "" hashes nothing.
type HashFields string

// HasPorts reports whether both L4 port halves are hashed.
func (h HashFields) HasPorts() bool {
	var f, n bool
	for _, c := range h {
		f = f || c == 'f'
		n = n || c == 'n'
	}
	return f && n
}

// Rules are a NIC's ntuple (flow steering) rules, ethtool -n.
type Rules struct {
	// TableSize is the rule table's size when the driver says it (0 when
	// not); Count the rules it says it holds.
	TableSize uint32 `json:"table_size,omitempty"`
	Count     uint32 `json:"count"`
	Rules     []Rule `json:"rules,omitempty"`
}

// RuleAction is what a rule does with a matching packet.
type RuleAction string

// The rule actions.
const (
	RuleActionQueue RuleAction = "queue" // deliver to Queue (in Context when set)
	RuleActionDrop  RuleAction = "drop"
	RuleActionWake  RuleAction = "wake"
)

// Rule is one ntuple rule, as ETHTOOL_GRXCLSRULE (struct
// ethtool_rx_flow_spec) or ethtool -n says it: an address and its mask,
// a port and its mask, each mask in the kernel's sense (a set bit must
// match; ethtool prints masks inverted, and ParseEthtoolN turns them
// back).
type Rule struct {
	Location uint32   `json:"location"`
	FlowType FlowType `json:"flow_type"`
	SrcIP    string   `json:"src_ip,omitempty"`
	SrcMask  string   `json:"src_ip_mask,omitempty"`
	DstIP    string   `json:"dst_ip,omitempty"`
	DstMask  string   `json:"dst_ip_mask,omitempty"`
	SrcPort  *uint16  `json:"src_port,omitempty"`
	DstPort  *uint16  `json:"dst_port,omitempty"`
	// PortMask is the masks of SrcPort and DstPort (0xffff: exact).
	SrcPortMask uint16 `json:"src_port_mask,omitempty"`
	DstPortMask uint16 `json:"dst_port_mask,omitempty"`

	Action  RuleAction `json:"action"`
	Queue   uint64     `json:"queue,omitempty"`
	VF      uint32     `json:"vf,omitempty"`      // a rule for a VF's queue (ring_cookie's VF byte)
	Context *uint32    `json:"context,omitempty"` // FLOW_RSS: the RSS context Queue is an offset in
}

// QueueType is rx or tx.
type QueueType string

// The queue types of netdev queue-get.
const (
	QueueTypeRX QueueType = "rx"
	QueueTypeTX QueueType = "tx"
)

// NetdevQueue is one queue as netdev queue-get reports it.
type NetdevQueue struct {
	ID   uint32    `json:"id"`
	Type QueueType `json:"type"`
	// NAPI is the NAPI instance's id; 0 when the queue has none.
	NAPI uint32 `json:"napi_id,omitempty"`
	// What else owns the queue's memory, as the kernel reports it on
	// the queue (netdev_nl_queue_fill): the id of a bound dmabuf
	// (devmem TCP, 6.12+), an io_uring zero-copy receive area (6.15+),
	// an AF_XDP socket (6.15+). A kernel older than the attribute never
	// reports it, so false is "none" only on a kernel that has it.
	DMABuf  *uint32 `json:"dmabuf,omitempty"`
	IOURing bool    `json:"io_uring,omitempty"`
	XSK     bool    `json:"xsk,omitempty"`
}

// NAPI is one NAPI instance as netdev napi-get reports it. A pointer
// field is nil when the kernel did not report it (older kernels have
// neither the timeouts nor the threaded state).
type NAPI struct {
	ID uint32 `json:"id"`
	// IRQ is the interrupt the instance is tied to, unknown when napi-get
	// reports none (a driver that ties no IRQ to the instance).
	IRQ unknown.Value[int] `json:"irq"`
	// PID is the napi/IF-ID kernel thread's when NAPI is threaded; 0
	// when it is not.
	PID               int     `json:"pid,omitempty"`
	DeferHardIRQs     *uint32 `json:"defer_hard_irqs,omitempty"`
	GROFlushTimeout   *uint64 `json:"gro_flush_timeout,omitempty"` // ns
	IRQSuspendTimeout *uint64 `json:"irq_suspend_timeout,omitempty"`
	Threaded          *bool   `json:"threaded,omitempty"`
}

// MarshalJSON writes the IRQ's reason beside it when it is unknown.
func (n NAPI) MarshalJSON() ([]byte, error) {
	type plain NAPI
	return unknown.MarshalObject(plain(n))
}

// UnmarshalJSON reads what MarshalJSON writes, the reasons included.
func (n *NAPI) UnmarshalJSON(b []byte) error {
	type plain NAPI
	return unknown.UnmarshalObject(b, (*plain)(n))
}

// NoIRQ is why a NAPI instance has no IRQ: napi-get did not report one.
var NoIRQ = unknown.Reason{Kind: unknown.KindDriver, Detail: "netdev napi-get reports no irq: the driver ties none to the instance"}

// QStats is one queue's counters from netdev qstats-get.
type QStats struct {
	Queue   uint32    `json:"queue"`
	Type    QueueType `json:"type"`
	Packets *uint64   `json:"packets,omitempty"`
	Bytes   *uint64   `json:"bytes,omitempty"`
}

// Sysfs is what /sys/class/net/IF says of the kernel's processing: nil
// fields are files the root does not have.
type Sysfs struct {
	Threaded        *int    `json:"threaded,omitempty"` // 0, 1 (2 busy-poll on 6.18+)
	DeferHardIRQs   *uint32 `json:"napi_defer_hard_irqs,omitempty"`
	GROFlushTimeout *uint64 `json:"gro_flush_timeout,omitempty"`
	// RPSFlowCnt is rx-N/rps_flow_cnt by rx queue.
	RPSFlowCnt map[int]uint32 `json:"rps_flow_cnt,omitempty"`
}

// Host is the steering of the NICs read, with the kernel-wide knobs.
type Host struct {
	NICs []*NIC `json:"nics"`
	// Sysctls are net.core.{rps_sock_flow_entries,busy_poll,busy_read}
	// by name, for those the root has.
	Sysctls map[string]int64 `json:"sysctls,omitempty"`
	// Source says where the answers came from.
	Source Source `json:"source"`
}

// Source is where a Host's answers came from.
type Source string

// The sources of a Host.
const (
	SourceNetlink   Source = "netlink"   // the live host
	SourceRecorded  Source = "recorded"  // a snapshot's irqnuma/ folder
	SourceSosreport Source = "sosreport" // a sosreport's ethtool text
	SourceNone      Source = "none"      // nothing answers
)

// NIC returns the reading of the interface name, or nil.
func (h *Host) NIC(name string) *NIC {
	if h == nil {
		return nil
	}
	for _, n := range h.NICs {
		if n.Name == name {
			return n
		}
	}
	return nil
}
