package steer

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// nlSource reads a NIC's steering through an asker: the live kernel's
// answers or a root's recorded ones, decoded alike.
type nlSource struct {
	ask   ethnl.Asker
	label Source
	fams  map[string]famResult
	strs  *strsResult
	// trips counts the requests made: netlink round trips and ioctls.
	trips struct{ genl, ioctl int }
}

type famResult struct {
	f   *ethnl.Family
	err error
}

type strsResult struct {
	sets stringSets
	err  error
}

func newNLSource(a ethnl.Asker, label Source) *nlSource {
	return &nlSource{ask: a, label: label, fams: map[string]famResult{}}
}

func (s *nlSource) name() Source { return s.label }
func (s *nlSource) close() error { return s.ask.Close() }
func (s *nlSource) read(n *NIC)  { s.readEthtool(n); s.readIoctl(n); s.readNetdev(n) }
func (s *nlSource) genl(req ethnl.Request) ([]ethnl.Msg, error) {
	s.trips.genl++
	return s.ask.Genl(req)
}

// family resolves a generic netlink family once per reading.
func (s *nlSource) family(name string) (*ethnl.Family, error) {
	if r, ok := s.fams[name]; ok {
		return r.f, r.err
	}
	req := ethnl.FamilyRequest(name)
	msgs, err := s.genl(req)
	var f *ethnl.Family
	switch {
	case isErrno(err, unix.ENOENT):
		err = &kernelError{what: "no generic netlink family " + name}
	case err == nil:
		if f, err = ethnl.DecodeFamily(name, msgs); err != nil {
			err = &unreadableError{what: s.ask.Where(req.Dir, req.Key), err: err}
		}
	}
	s.fams[name] = famResult{f, err}
	return f, err
}

// command returns the family when it has cmd, or why not.
func (s *nlSource) command(fam string, cmd uint8, cmdName string) (*ethnl.Family, error) {
	f, err := s.family(fam)
	if err != nil {
		return nil, err
	}
	if !f.Has(cmd) {
		// The kernel would answer EOPNOTSUPP, as a driver without it
		// does: ask the family's list of commands instead.
		return nil, &kernelError{what: fmt.Sprintf("%s netlink has no %s command", fam, cmdName)}
	}
	return f, nil
}

// strings returns the string sets the ethtool decoders name bits by.
func (s *nlSource) strings() (stringSets, error) {
	if s.strs != nil {
		return s.strs.sets, s.strs.err
	}
	s.strs = &strsResult{}
	f, err := s.command("ethtool", ethnlMsgStrsetGet, "strset-get")
	if err != nil {
		s.strs.err = err
		return nil, err
	}
	const key = "ethtool.strset"
	msgs, err := s.genl(ethnl.Request{
		Dir: ethnl.KernelDir, Key: key, Family: f.ID, Cmd: ethnlMsgStrsetGet, Version: ethnlVersion,
		Attrs: ethnl.Encode(func(ae *netlink.AttributeEncoder) {
			ae.Nested(ethnlAttrHeader, func(*netlink.AttributeEncoder) error { return nil })
			ae.Nested(ethnlStrsetStringsets, func(sets *netlink.AttributeEncoder) error {
				for _, id := range []uint32{ethSSFeatures, ethSSRSSHashFuncs} {
					sets.Nested(ethnlStringsetsSet, func(set *netlink.AttributeEncoder) error {
						set.Uint32(ethnlStringsetID, id)
						return nil
					})
				}
				return nil
			})
		}),
	})
	if err == nil {
		s.strs.sets, err = s.one(msgs, ethnl.KernelDir, key, decodeStrset)
	}
	s.strs.err = err
	return s.strs.sets, err
}

// one decodes the single message of a get's reply.
func (s *nlSource) one(msgs []ethnl.Msg, dir, key string, dec func([]byte) (stringSets, error)) (stringSets, error) {
	if len(msgs) != 1 {
		return nil, &unreadableError{what: s.ask.Where(dir, key), err: fmt.Errorf("%d messages, want 1", len(msgs))}
	}
	v, err := dec(msgs[0].Attrs)
	if err != nil {
		return nil, &unreadableError{what: s.ask.Where(dir, key), err: err}
	}
	return v, nil
}

// ethtoolGet asks one ethtool get of n and returns its one message's
// attributes.
func (s *nlSource) ethtoolGet(n *NIC, key string, cmd uint8, cmdName string, dump bool) ([]ethnl.Msg, error) {
	f, err := s.command("ethtool", cmd, cmdName)
	if err != nil {
		return nil, err
	}
	if dump && !f.CanDump(cmd) {
		return nil, &kernelError{what: "ethtool netlink cannot dump " + cmdName}
	}
	msgs, err := s.genl(ethnl.Request{
		Dir: n.Name, Key: key, Family: f.ID, Cmd: cmd, Version: ethnlVersion, Dump: dump,
		Attrs: ethnl.Encode(func(ae *netlink.AttributeEncoder) {
			ae.Nested(ethnlAttrHeader, func(h *netlink.AttributeEncoder) error {
				h.String(ethnlHeaderDevName, n.Name)
				return nil
			})
		}),
	})
	if err != nil {
		return nil, err
	}
	if !dump && len(msgs) != 1 {
		return nil, &unreadableError{what: s.ask.Where(n.Name, key), err: fmt.Errorf("%d messages, want 1", len(msgs))}
	}
	return msgs, nil
}

// getPart reads one ethtool part with dec, or says why not.
func getPart[T any](s *nlSource, n *NIC, p Part, key string, cmd uint8, cmdName string, dec func([]byte) (T, error)) (T, bool) {
	var zero T
	msgs, err := s.ethtoolGet(n, key, cmd, cmdName, false)
	if err != nil {
		n.SetUnknown(p, ReasonOf(err))
		return zero, false
	}
	v, err := dec(msgs[0].Attrs)
	if err != nil {
		n.SetUnknown(p, ReasonOf(&unreadableError{what: s.ask.Where(n.Name, key), err: err}))
		return zero, false
	}
	return v, true
}

func (s *nlSource) readEthtool(n *NIC) {
	if v, ok := getPart(s, n, PartChannels, "ethtool.channels", ethnlMsgChannelsGet, "channels-get", decodeChannels); ok {
		n.Channels = v
	}
	if v, ok := getPart(s, n, PartRings, "ethtool.rings", ethnlMsgRingsGet, "rings-get", decodeRings); ok {
		n.Rings = v
	}
	if v, ok := getPart(s, n, PartCoalesce, "ethtool.coalesce", ethnlMsgCoalesceGet, "coalesce-get", decodeCoalesce); ok {
		n.Coalesce = v
	}
	sets, setsErr := s.strings()
	s.readFeatures(n, sets, setsErr)
	s.readRSS(n, sets[ethSSRSSHashFuncs])
}

func (s *nlSource) readFeatures(n *NIC, sets stringSets, setsErr error) {
	if setsErr != nil {
		n.SetUnknown(PartFeatures, ReasonOf(setsErr))
		return
	}
	names, ok := sets[ethSSFeatures]
	if !ok {
		n.SetUnknown(PartFeatures, ReasonOf(&unreadableError{what: s.ask.Where(ethnl.KernelDir, "ethtool.strset"), err: fmt.Errorf("no feature names")}))
		return
	}
	dec := func(b []byte) (map[string]Feature, error) { return decodeFeatures(b, names) }
	if v, ok := getPart(s, n, PartFeatures, "ethtool.features", ethnlMsgFeaturesGet, "features-get", dec); ok {
		n.Features = v
	}
}

// readRSS reads context 0 with a get, then the other contexts with a
// dump where the kernel can (6.11 and later).
func (s *nlSource) readRSS(n *NIC, hfuncs []string) {
	dec := func(b []byte) (rssReply, error) { return decodeRSS(b, hfuncs) }
	var r rssReply
	var ok bool
	if f, err := s.family("ethtool"); err == nil && !f.Has(ethnlMsgRSSGet) {
		// Before 6.2 netlink has no RSS message: ethtool -x asks the
		// ioctl, and so does this.
		r, ok = s.readRSSIoctl(n, hfuncs)
	} else {
		r, ok = getPart(s, n, PartRSS, "ethtool.rss", ethnlMsgRSSGet, "rss-get", dec)
	}
	if ok {
		rss := r.rss
		n.RSS = &rss
		if !r.hasTable {
			n.SetUnknown(PartRSSTable, unknown.Reason{Kind: unknown.KindDriver, Detail: "the driver reports no indirection table"})
		}
		if !r.hasKey {
			n.SetUnknown(PartRSSKey, unknown.Reason{Kind: unknown.KindDriver, Detail: "the driver reports no hash key"})
		}
	}
	if !ok {
		// Without context 0 there are no others to read.
		n.SetUnknown(PartContexts, n.Unknown[PartRSS])
		return
	}
	const key = "ethtool.rss-dump"
	msgs, err := s.ethtoolGet(n, key, ethnlMsgRSSGet, "rss-get", true)
	if err != nil {
		n.SetUnknown(PartContexts, ReasonOf(err))
		return
	}
	ctxs := make([]RSS, 0)
	for _, m := range msgs {
		c, err := decodeRSS(m.Attrs, hfuncs)
		if err != nil {
			n.SetUnknown(PartContexts, ReasonOf(&unreadableError{what: s.ask.Where(n.Name, key), err: err}))
			return
		}
		if c.rss.Context != 0 {
			ctxs = append(ctxs, c.rss)
		}
	}
	n.Contexts = ctxs
}

// readRSSIoctl reads context 0 with ETHTOOL_GRSSH: once with no room
// for the table and key, which returns their sizes and the hash
// function, then, when either is not empty, with room for both.
func (s *nlSource) readRSSIoctl(n *NIC, hfuncs []string) (rssReply, bool) {
	sizes, ok := ioctlPart(s, n, PartRSS, "ioctl.rssh-sizes", newRxnfc(ethtoolGRSSH, rxfhSize), decodeRxfhSizes)
	if !ok {
		return rssReply{}, false
	}
	if sizes.indir == 0 && sizes.key == 0 {
		name, err := hashFuncName(sizes.hfunc, hfuncs)
		if err != nil {
			n.SetUnknown(PartRSS, ReasonOf(&unreadableError{what: s.ask.Where(n.Name, "ioctl.rssh-sizes"), err: err}))
			return rssReply{}, false
		}
		return rssReply{rss: RSS{HashFunc: name}}, true
	}
	buf := newRxnfc(ethtoolGRSSH, rxfhSize+4*int(sizes.indir)+int(sizes.key))
	native.PutUint32(buf[8:], sizes.indir)
	native.PutUint32(buf[12:], sizes.key)
	return ioctlPart(s, n, PartRSS, "ioctl.rssh", buf, func(b []byte) (rssReply, error) { return decodeRxfh(b, sizes, hfuncs) })
}

// netdevDump dumps one netdev command filtered by the interface's index.
func (s *nlSource) netdevDump(n *NIC, p Part, key string, cmd uint8, cmdName string, attrs func(ae *netlink.AttributeEncoder)) ([]ethnl.Msg, bool) {
	f, err := s.command("netdev", cmd, cmdName)
	if _, replay := s.ask.(*replayer); err == nil && n.Index <= 0 && !replay {
		// A live dump without the index would list every interface's.
		err = fmt.Errorf("the interface's index is not known")
	}
	if err != nil {
		n.SetUnknown(p, ReasonOf(err))
		return nil, false
	}
	msgs, err := s.genl(ethnl.Request{Dir: n.Name, Key: key, Family: f.ID, Cmd: cmd, Version: netdevVersion, Dump: true, Attrs: ethnl.Encode(attrs)})
	if err != nil {
		n.SetUnknown(p, ReasonOf(err))
		return nil, false
	}
	return msgs, true
}

// dumpPart decodes every message of a netdev dump.
func dumpPart[T any](s *nlSource, n *NIC, p Part, key string, cmd uint8, cmdName string, attrs func(ae *netlink.AttributeEncoder), dec func([]byte) (T, error)) ([]T, bool) {
	msgs, ok := s.netdevDump(n, p, key, cmd, cmdName, attrs)
	if !ok {
		return nil, false
	}
	out := make([]T, 0, len(msgs))
	for _, m := range msgs {
		v, err := dec(m.Attrs)
		if err != nil {
			n.SetUnknown(p, ReasonOf(&unreadableError{what: s.ask.Where(n.Name, key), err: err}))
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

func (s *nlSource) readNetdev(n *NIC) {
	idx := uint32(n.Index)
	if v, ok := dumpPart(s, n, PartQueues, "netdev.queue-get", netdevCmdQueueGet, "queue-get",
		func(ae *netlink.AttributeEncoder) { ae.Uint32(netdevQueueIfindex, idx) }, decodeQueue); ok {
		n.Queues = v
	}
	if v, ok := dumpPart(s, n, PartNAPI, "netdev.napi-get", netdevCmdNAPIGet, "napi-get",
		func(ae *netlink.AttributeEncoder) { ae.Uint32(netdevNAPIIfindex, idx) }, decodeNAPI); ok {
		n.NAPIs = v
	}
	v, ok := dumpPart(s, n, PartQStats, "netdev.qstats-get", netdevCmdQStats, "qstats-get",
		func(ae *netlink.AttributeEncoder) {
			ae.Uint32(netdevQStatsIfindex, idx)
			ae.Uint32(netdevQStatsScope, netdevQStatsScopeQueue)
		}, decodeQStats)
	switch {
	case ok && len(v) == 0:
		// The kernel dumps nothing for a device without queue stats
		// (netdev_nl_qstats_get_dump_one: no stat_ops).
		n.SetUnknown(PartQStats, unknown.Reason{Kind: unknown.KindDriver, Detail: "the driver has no per-queue stats"})
	case ok:
		n.QStats = v
	}
}

// ioctl runs one ethtool ioctl for n.
func (s *nlSource) ioctl(n *NIC, key string, buf []byte) ([]byte, error) {
	s.trips.ioctl++
	return s.ask.Ioctl(ethnl.IoctlRequest{IfName: n.Name, Key: key, Buf: buf})
}

// ioctlPart runs an ioctl and decodes its answer, or says why not.
func ioctlPart[T any](s *nlSource, n *NIC, p Part, key string, buf []byte, dec func([]byte) (T, error)) (T, bool) {
	var zero T
	b, err := s.ioctl(n, key, buf)
	if err == nil {
		var v T
		if v, err = dec(b); err == nil {
			return v, true
		}
		err = &unreadableError{what: s.ask.Where(n.Name, key), err: err}
	}
	n.SetUnknown(p, ReasonOf(err))
	return zero, false
}

func (s *nlSource) readIoctl(n *NIC) {
	if v, ok := ioctlPart(s, n, PartDriver, "ioctl.drvinfo", newRxnfc(ethtoolGDrvinfo, drvinfoSize), decodeDrvinfo); ok {
		n.Driver = v
	}
	rings, ok := ioctlPart(s, n, PartRSSRings, "ioctl.rxrings", newRxnfc(ethtoolGRXRings, rxnfcSize), decodeRxnfcData)
	switch {
	case ok && rings > maxQueues: // the data field is a __u64: never truncated into a smaller count
		n.SetUnknown(PartRSSRings, unknown.Reason{Kind: unknown.KindMalformed, Detail: fmt.Sprintf("%s claims %d rx rings, more than the %d queues a device can have",
			s.ask.Where(n.Name, "ioctl.rxrings"), rings, maxQueues)})
	case ok && n.RSS != nil:
		n.RSS.Rings = uint32(rings)
	}
	for _, ft := range hashFlowTypes {
		buf := newRxnfc(ethtoolGRXFH, rxnfcSize)
		native.PutUint32(buf[4:], ft.code)
		dec := func(b []byte) (HashFields, error) {
			v, err := decodeRxnfcData(b)
			if err != nil {
				return "", err
			}
			return hashFields(v)
		}
		if v, ok := ioctlPart(s, n, FlowHashPart(ft.name), "ioctl.rxfh."+string(ft.name), buf, dec); ok {
			if n.FlowHash == nil {
				n.FlowHash = map[FlowType]HashFields{}
			}
			n.FlowHash[ft.name] = v
		}
	}
	s.readRules(n)
}

type ruleCount struct{ size, count uint32 }

func (s *nlSource) readRules(n *NIC) {
	cnt, ok := ioctlPart(s, n, PartRules, "ioctl.rxclsrlcnt", newRxnfc(ethtoolGRXClsRlCnt, rxnfcSize), func(b []byte) (ruleCount, error) {
		size, count, err := decodeRuleCount(b)
		if err == nil && count > maxRules {
			err = fmt.Errorf("claims %d rules, more than the %d read", count, maxRules)
		}
		return ruleCount{size, count}, err
	})
	if !ok {
		return
	}
	rules := &Rules{TableSize: cnt.size, Count: cnt.count}
	if cnt.count > 0 {
		buf := newRxnfc(ethtoolGRXClsRlAll, ruleLocsSize(cnt.count))
		native.PutUint32(buf[rxnfcRuleCnt:], cnt.count)
		locs, ok := ioctlPart(s, n, PartRules, "ioctl.rxclsrlall", buf, func(b []byte) ([]uint32, error) { return decodeRuleLocs(b, cnt.count) })
		if !ok {
			return
		}
		for _, loc := range locs {
			buf := newRxnfc(ethtoolGRXClsRule, rxnfcSize)
			native.PutUint32(buf[rxnfcFS+fsLocation:], loc)
			r, ok := ioctlPart(s, n, PartRules, "ioctl.rxclsrule."+strconv.FormatUint(uint64(loc), 10), buf, decodeRule)
			if !ok {
				return
			}
			rules.Rules = append(rules.Rules, r)
		}
	}
	n.Rules = rules
}

// isErrno reports whether err is errno e.
func isErrno(err error, e unix.Errno) bool {
	var got unix.Errno
	return errors.As(err, &got) && got == e
}
