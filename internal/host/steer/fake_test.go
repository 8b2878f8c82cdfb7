package steer

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/mdlayher/netlink"
)

// This file writes a recorded root from a model of NICs: the replies a
// kernel would have sent for them, framed as Record frames them, and the
// sysfs and procfs files Read reads. The benchmark reads such a root,
// and TestRecordedModel reads one back to its model.

// featureNames is a feature string set as the kernel's begins.
var featureNames = []string{"tx-scatter-gather", "tx-checksum-ipv4", "tx-checksum-ip-generic", "tx-checksum-ipv6",
	"highdma", "tx-scatter-gather-fraglist", "tx-vlan-hw-insert", "rx-vlan-hw-parse", "rx-vlan-filter",
	"vlan-challenged", "tx-generic-segmentation", "tx-lockless", "netns-local", "rx-gro", "rx-lro",
	"tx-tcp-segmentation", "rx-hashing", "rx-checksum", "rx-ntuple-filter", "rx-gro-hw"}

var hashFuncNames = []string{"toeplitz", "xor", "crc32"}

// ethnlFamilyOps are the ethtool commands a 6.18 kernel lists, with
// RSS_GET dumpable.
var ethnlFamilyOps = map[uint32]uint32{1: 0x0e, 11: 0x0e, 15: 0x0e, 17: 0x0e, 19: 0x0e, 38: 0x0e}
var netdevFamilyOps = map[uint32]uint32{10: 0x0e, 11: 0x0e, 12: 0x0c}

func enc(t testing.TB, fn func(ae *netlink.AttributeEncoder)) []byte {
	ae := netlink.NewAttributeEncoder()
	fn(ae)
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func msg(cmd uint8, attrs []byte) ethnl.Msg {
	return ethnl.Msg{Type: 0x20, Cmd: cmd, Version: 1, Attrs: attrs}
}

// The generic netlink controller's reply (linux/genetlink.h), written
// here from the header rather than taken from ethnl, so that the model
// checks ethnl's decoder against the uapi.
const (
	genlIDCtrl         = 0x10 // GENL_ID_CTRL
	ctrlAttrFamilyID   = 1
	ctrlAttrFamilyName = 2
	ctrlAttrVersion    = 3
	ctrlAttrOps        = 6
	ctrlAttrOpID       = 1
	ctrlAttrOpFlags    = 2
)

func familyReply(t testing.TB, name string, id uint16, ops map[uint32]uint32) []byte {
	ids := make([]uint32, 0, len(ops))
	for id := range ops {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ethnl.EncodeMsgs([]ethnl.Msg{{Type: genlIDCtrl, Cmd: 1, Version: 2, Attrs: enc(t, func(ae *netlink.AttributeEncoder) {
		ae.Uint16(ctrlAttrFamilyID, id)
		ae.String(ctrlAttrFamilyName, name)
		ae.Uint32(ctrlAttrVersion, 1)
		ae.Nested(ctrlAttrOps, func(ops2 *netlink.AttributeEncoder) error {
			for i, id := range ids {
				ops2.Nested(uint16(i+1), func(op *netlink.AttributeEncoder) error {
					op.Uint32(ctrlAttrOpID, id)
					op.Uint32(ctrlAttrOpFlags, ops[id])
					return nil
				})
			}
			return nil
		})
	})}})
}

func strsetReply(t testing.TB) []byte {
	sets := map[uint32][]string{ethSSFeatures: featureNames, ethSSRSSHashFuncs: hashFuncNames}
	return ethnl.EncodeMsgs([]ethnl.Msg{msg(1, enc(t, func(ae *netlink.AttributeEncoder) {
		ae.Nested(ethnlAttrHeader, func(*netlink.AttributeEncoder) error { return nil })
		ae.Nested(ethnlStrsetStringsets, func(ss *netlink.AttributeEncoder) error {
			for _, id := range []uint32{ethSSFeatures, ethSSRSSHashFuncs} {
				ss.Nested(ethnlStringsetsSet, func(s *netlink.AttributeEncoder) error {
					s.Uint32(ethnlStringsetID, id)
					s.Uint32(ethnlStringsetCount, uint32(len(sets[id])))
					s.Nested(ethnlStringsetStrings, func(strs *netlink.AttributeEncoder) error {
						for i, v := range sets[id] {
							strs.Nested(ethnlStringsString, func(st *netlink.AttributeEncoder) error {
								st.Uint32(ethnlStringIndex, uint32(i))
								st.String(ethnlStringValue, v)
								return nil
							})
						}
						return nil
					})
					return nil
				})
			}
			return nil
		})
	}))})
}

func header(ae *netlink.AttributeEncoder, name string) {
	ae.Nested(ethnlAttrHeader, func(h *netlink.AttributeEncoder) error {
		h.Uint32(1, 7)
		h.String(ethnlHeaderDevName, name)
		return nil
	})
}

func bitsetAttr(ae *netlink.AttributeEncoder, typ uint16, on func(i int) bool) {
	ae.Nested(typ, func(bs *netlink.AttributeEncoder) error {
		bs.Flag(ethnlBitsetNomask, true)
		bs.Uint32(ethnlBitsetSize, uint32(len(featureNames)))
		bs.Nested(ethnlBitsetBits, func(bits *netlink.AttributeEncoder) error {
			for i, name := range featureNames {
				if on(i) {
					bits.Nested(ethnlBitsetBitsBit, func(b *netlink.AttributeEncoder) error {
						b.Uint32(ethnlBitsetBitIndex, uint32(i))
						b.String(2, name)
						return nil
					})
				}
			}
			return nil
		})
		return nil
	})
}

func rssAttrs(ae *netlink.AttributeEncoder, r RSS) {
	if r.Context != 0 {
		ae.Uint32(ethnlRSSContext, r.Context)
	}
	if len(r.Table) > 0 {
		b := make([]byte, 4*len(r.Table))
		for i, q := range r.Table {
			native.PutUint32(b[4*i:], q)
		}
		ae.Bytes(ethnlRSSIndir, b)
	}
	for i, name := range hashFuncNames {
		if name == r.HashFunc {
			ae.Uint32(ethnlRSSHfunc, 1<<i)
		}
	}
	if r.InputXfrm != nil {
		ae.Uint32(ethnlRSSInputXfrm, *r.InputXfrm)
	}
	if len(r.Key) > 0 {
		ae.Bytes(ethnlRSSHkey, r.Key)
	}
}

// nicReplies are the recorded answers for one NIC of the model, by key.
func nicReplies(t testing.TB, n *NIC) map[string][]byte {
	out := map[string][]byte{}
	c := n.Channels
	out["ethtool.channels"] = ethnl.EncodeMsgs([]ethnl.Msg{msg(18, enc(t, func(ae *netlink.AttributeEncoder) {
		header(ae, n.Name)
		for i, v := range []uint32{c.MaxRX, c.MaxTX, c.MaxOther, c.MaxCombined, c.RX, c.TX, c.Other, c.Combined} {
			ae.Uint32(uint16(2+i), v)
		}
	}))})
	r := n.Rings
	out["ethtool.rings"] = ethnl.EncodeMsgs([]ethnl.Msg{msg(16, enc(t, func(ae *netlink.AttributeEncoder) {
		header(ae, n.Name)
		for i, v := range []uint32{r.MaxRX, r.MaxRXMini, r.MaxRXJumbo, r.MaxTX, r.RX, r.RXMini, r.RXJumbo, r.TX} {
			ae.Uint32(uint16(2+i), v)
		}
		if r.RXBufLen != nil {
			ae.Uint32(10, *r.RXBufLen)
		}
		if s, ok := r.TCPDataSplit.Get(); ok {
			ae.Uint8(11, map[TCPDataSplit]uint8{TCPDataSplitDisabled: 1, TCPDataSplitEnabled: 2}[s])
		} else if r.TCPDataSplit.Why() == DataSplitNA {
			ae.Uint8(11, 0)
		}
		if r.HDSThresh != nil {
			ae.Uint32(17, *r.HDSThresh)
		}
	}))})
	out["ethtool.coalesce"] = ethnl.EncodeMsgs([]ethnl.Msg{msg(20, enc(t, func(ae *netlink.AttributeEncoder) {
		header(ae, n.Name)
		for typ, c := range coalesceNames {
			if v, ok := n.Coalesce[c.name]; ok {
				if c.u8 {
					ae.Uint8(typ, uint8(v))
				} else {
					ae.Uint32(typ, v)
				}
			}
		}
	}))})
	out["ethtool.features"] = ethnl.EncodeMsgs([]ethnl.Msg{msg(12, enc(t, func(ae *netlink.AttributeEncoder) {
		header(ae, n.Name)
		f := func(i int) Feature { return n.Features[featureNames[i]] }
		bitsetAttr(ae, ethnlFeaturesHW, func(i int) bool { return !f(i).Fixed })
		bitsetAttr(ae, 3, func(i int) bool { return f(i).On })
		bitsetAttr(ae, ethnlFeaturesActive, func(i int) bool { return f(i).On })
		bitsetAttr(ae, ethnlFeaturesNochange, func(int) bool { return false })
	}))})
	out["ethtool.rss"] = ethnl.EncodeMsgs([]ethnl.Msg{msg(38, enc(t, func(ae *netlink.AttributeEncoder) {
		header(ae, n.Name)
		rssAttrs(ae, *n.RSS)
	}))})
	dump := []ethnl.Msg{msg(38, enc(t, func(ae *netlink.AttributeEncoder) { header(ae, n.Name); rssAttrs(ae, *n.RSS) }))}
	for _, c := range n.Contexts {
		dump = append(dump, msg(38, enc(t, func(ae *netlink.AttributeEncoder) { header(ae, n.Name); rssAttrs(ae, c) })))
		dump[len(dump)-1].Flags = 2 // NLM_F_MULTI
	}
	out["ethtool.rss-dump"] = ethnl.EncodeMsgs(dump)
	netdevReplies(t, n, out)
	ioctlReplies(n, out)
	return out
}

func netdevReplies(t testing.TB, n *NIC, out map[string][]byte) {
	var qs, napis, stats []ethnl.Msg
	for _, q := range n.Queues {
		qs = append(qs, msg(netdevCmdQueueGet, enc(t, func(ae *netlink.AttributeEncoder) {
			ae.Uint32(netdevQueueID, q.ID)
			ae.Uint32(netdevQueueIfindex, uint32(n.Index))
			ae.Uint32(netdevQueueType, map[QueueType]uint32{QueueTypeRX: 0, QueueTypeTX: 1}[q.Type])
			if q.NAPI != 0 {
				ae.Uint32(netdevQueueNAPIID, q.NAPI)
			}
		})))
	}
	for _, p := range n.NAPIs {
		napis = append(napis, msg(netdevCmdNAPIGet, enc(t, func(ae *netlink.AttributeEncoder) {
			ae.Uint32(netdevNAPIIfindex, uint32(n.Index))
			ae.Uint32(netdevNAPIID, p.ID)
			if irq, ok := p.IRQ.Get(); ok {
				ae.Uint32(netdevNAPIIRQ, uint32(irq))
			}
			if p.PID != 0 {
				ae.Uint32(netdevNAPIPID, uint32(p.PID))
			}
			if p.DeferHardIRQs != nil {
				ae.Uint32(netdevNAPIDeferHardIRQs, *p.DeferHardIRQs)
			}
			if p.GROFlushTimeout != nil {
				ae.Uint64(netdevNAPIGROFlush, *p.GROFlushTimeout)
			}
		})))
	}
	for _, s := range n.QStats {
		stats = append(stats, msg(netdevCmdQStats, enc(t, func(ae *netlink.AttributeEncoder) {
			ae.Uint32(netdevQStatsIfindex, uint32(n.Index))
			typ, base := uint32(0), uint16(netdevQStatsRxPackets)
			if s.Type == QueueTypeTX {
				typ, base = 1, netdevQStatsTxPackets
			}
			ae.Uint32(netdevQStatsQueueType, typ)
			ae.Uint32(netdevQStatsQueueID, s.Queue)
			ae.Uint64(base, *s.Packets)
			ae.Uint32(base+1, uint32(*s.Bytes))
		})))
	}
	out["netdev.queue-get"] = ethnl.EncodeMsgs(qs)
	out["netdev.napi-get"] = ethnl.EncodeMsgs(napis)
	out["netdev.qstats-get"] = ethnl.EncodeMsgs(stats)
}

func ioctlReplies(n *NIC, out map[string][]byte) {
	d := make([]byte, drvinfoSize)
	native.PutUint32(d, ethtoolGDrvinfo)
	copy(d[4:], n.Driver.Driver)
	copy(d[36:], n.Driver.Version)
	copy(d[68:], n.Driver.Firmware)
	copy(d[100:], n.Driver.BusInfo)
	out["ioctl.drvinfo"] = d
	b := newRxnfc(ethtoolGRXRings, rxnfcSize)
	native.PutUint64(b[rxnfcData:], uint64(n.RSS.Rings))
	out["ioctl.rxrings"] = b
	for _, ft := range hashFlowTypes {
		b := newRxnfc(ethtoolGRXFH, rxnfcSize)
		native.PutUint32(b[4:], ft.code)
		var v uint64
		for _, c := range n.FlowHash[ft.name] {
			for _, h := range hashLetters {
				if byte(c) == h.letter {
					v |= h.bit
				}
			}
		}
		native.PutUint64(b[rxnfcData:], v)
		out["ioctl.rxfh."+string(ft.name)] = b
	}
	cnt := newRxnfc(ethtoolGRXClsRlCnt, rxnfcSize)
	native.PutUint64(cnt[rxnfcData:], uint64(n.Rules.TableSize)|rxClsLocSpecial)
	native.PutUint32(cnt[rxnfcRuleCnt:], n.Rules.Count)
	out["ioctl.rxclsrlcnt"] = cnt
	if n.Rules.Count == 0 {
		return
	}
	all := newRxnfc(ethtoolGRXClsRlAll, ruleLocsSize(n.Rules.Count))
	native.PutUint64(all[rxnfcData:], uint64(n.Rules.TableSize))
	native.PutUint32(all[rxnfcRuleCnt:], n.Rules.Count)
	for i, r := range n.Rules.Rules {
		native.PutUint32(all[rxnfcRuleLocs+4*i:], r.Location)
		out["ioctl.rxclsrule."+strconv.Itoa(int(r.Location))] = encodeRule(r)
	}
	out["ioctl.rxclsrlall"] = all
}

// encodeRule writes a tcp4/udp4 rule as GRXCLSRULE fills it.
func encodeRule(r Rule) []byte {
	b := newRxnfc(ethtoolGRXClsRule, rxnfcSize)
	fs := b[rxnfcFS:]
	codes := map[FlowType]uint32{"tcp4": 1, "udp4": 2}
	ft := codes[r.FlowType]
	if r.Context != nil {
		ft |= flowRSS
		native.PutUint32(b[rxnfcRuleCnt:], *r.Context)
	}
	native.PutUint32(fs, ft)
	if r.DstPort != nil {
		fs[fsHU+10], fs[fsHU+11] = byte(*r.DstPort>>8), byte(*r.DstPort)
		fs[fsMU+10], fs[fsMU+11] = byte(r.DstPortMask>>8), byte(r.DstPortMask)
	}
	cookie := r.Queue | uint64(r.VF)<<32
	switch r.Action {
	case RuleActionDrop:
		cookie = rxClsFlowDisc
	case RuleActionWake:
		cookie = rxClsFlowWake
	}
	native.PutUint64(fs[fsRingCookie:], cookie)
	native.PutUint32(fs[fsLocation:], r.Location)
	return b
}

// modelNIC is a NIC of q queues with a table of size entries, read as
// the recorded root says: everything known.
func modelNIC(i, q, size int) *NIC {
	u32 := func(v uint32) *uint32 { return &v }
	u64 := func(v uint64) *uint64 { return &v }
	split := unknown.Of(TCPDataSplitEnabled)
	n := &NIC{Name: fmt.Sprintf("eth%d", i), Index: 2 + i,
		Driver:   &DriverInfo{Driver: "mlx5_core", Version: "6.18.0", Firmware: "28.39.1002 (MT_0000000436)", BusInfo: fmt.Sprintf("0000:%02x:00.0", 0x17+i)},
		Channels: &Channels{MaxCombined: uint32(q), Combined: uint32(q), MaxOther: 1, Other: 1},
		Rings:    &Rings{MaxRX: 8192, MaxTX: 8192, RX: 1024, TX: 1024, RXBufLen: u32(4096), TCPDataSplit: split, HDSThresh: u32(256)},
		RSS:      &RSS{Rings: uint32(q), HashFunc: "toeplitz", Key: make([]byte, 40)},
		Contexts: []RSS{{Context: 1, Table: []uint32{0, 1, 2, 3}, HashFunc: "xor"}},
		Features: map[string]Feature{},
		Coalesce: map[string]uint32{"rx-usecs": 8, "rx-frames": 128, "tx-usecs": 16, "tx-frames": 32, "adaptive-rx": 1, "adaptive-tx": 0},
		FlowHash: map[FlowType]HashFields{},
		Rules: &Rules{TableSize: 1024, Count: 2, Rules: []Rule{
			{Location: 3, FlowType: "tcp4", DstPort: new(uint16(5201)), DstPortMask: 0xffff, Action: RuleActionQueue, Queue: 7},
			{Location: 9, FlowType: "udp4", DstPort: new(uint16(53)), DstPortMask: 0xffff, Action: RuleActionDrop},
		}},
		Sysfs: Sysfs{Threaded: new(1), DeferHardIRQs: u32(2), GROFlushTimeout: u64(200000), RPSFlowCnt: map[int]uint32{}},
	}
	for j := range size {
		n.RSS.Table = append(n.RSS.Table, uint32(j%q))
	}
	for j := range n.RSS.Key {
		n.RSS.Key[j] = byte(j * 7)
	}
	for j, f := range featureNames {
		n.Features[f] = Feature{On: j%3 != 0, Fixed: j%5 == 0}
	}
	for _, ft := range hashFlowTypes {
		n.FlowHash[ft.name] = "sdfn"
	}
	n.FlowHash["udp4"] = "sd"
	for j := range q {
		napi := uint32(8192 + 64*i + j)
		n.Queues = append(n.Queues, NetdevQueue{ID: uint32(j), Type: QueueTypeRX, NAPI: napi})
		n.NAPIs = append(n.NAPIs, NAPI{ID: napi, IRQ: unknown.Of(100 + 64*i + j), PID: 4000 + 64*i + j, DeferHardIRQs: u32(2), GROFlushTimeout: u64(200000)})
		n.QStats = append(n.QStats, QStats{Queue: uint32(j), Type: QueueTypeRX, Packets: u64(uint64(1e10) + uint64(j)), Bytes: u64(uint64(j) * 1500)})
		n.Sysfs.RPSFlowCnt[j] = 0
	}
	for j := range q {
		n.Queues = append(n.Queues, NetdevQueue{ID: uint32(j), Type: QueueTypeTX, NAPI: uint32(8192 + 64*i + j)})
	}
	return n
}

// writeRecorded writes a recorded root for nics under root.
func writeRecorded(t testing.TB, root string, nics []*NIC) {
	put := func(rel string, data []byte) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(recordDir+"/"+ethnl.KernelDir+"/nlctrl.ethtool", familyReply(t, "ethtool", 0x1a, ethnlFamilyOps))
	put(recordDir+"/"+ethnl.KernelDir+"/nlctrl.netdev", familyReply(t, "netdev", 0x1b, netdevFamilyOps))
	put(recordDir+"/"+ethnl.KernelDir+"/ethtool.strset", strsetReply(t))
	for _, k := range sysctls {
		put("proc/sys/net/core/"+k, []byte("0\n"))
	}
	for _, n := range nics {
		for key, b := range nicReplies(t, n) {
			put(recordDir+"/"+n.Name+"/"+key, b)
		}
		dir := "sys/class/net/" + n.Name + "/"
		put(dir+"ifindex", []byte(strconv.Itoa(n.Index)+"\n"))
		put(dir+"threaded", []byte(strconv.Itoa(*n.Sysfs.Threaded)+"\n"))
		put(dir+"napi_defer_hard_irqs", []byte(strconv.Itoa(int(*n.Sysfs.DeferHardIRQs))+"\n"))
		put(dir+"gro_flush_timeout", []byte(strconv.FormatUint(*n.Sysfs.GROFlushTimeout, 10)+"\n"))
		for q, v := range n.Sysfs.RPSFlowCnt {
			put(fmt.Sprintf("%squeues/rx-%d/rps_flow_cnt", dir, q), []byte(strconv.Itoa(int(v))+"\n"))
		}
	}
}
