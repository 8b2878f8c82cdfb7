package steer

import (
	"fmt"
	"strings"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// A sosreport keeps the output of the ethtool commands its networking
// plugin runs per interface under sos_commands/networking/, each in a
// file named by sos' _mangle_command: "ethtool -l eth0" is
// ethtool_-l_eth0. It runs -l -g -k -c -i, --show-ntuple and
// --show-priv-flags, but not -x, not `-n IF rx-flow-hash`, and no netdev
// netlink (sos 4.12, networking.py).

func init() { registerTree(treeSource{rank: 20, open: openSos}) }

// sosDir is where a sosreport keeps the networking commands' output.
const sosDir = "sos_commands/networking"

// sosSource reads a sosreport's captured ethtool text.
type sosSource struct{ fsys kfile.FS }

// openSos answers for a root that holds sos_commands/networking/.
func openSos(fsys kfile.FS) (source, bool) {
	fi, err := fsys.Stat(fsys.Path(sosDir))
	if err != nil || !fi.IsDir() {
		return nil, false
	}
	return &sosSource{fsys: fsys}, true
}

func (s *sosSource) name() Source { return SourceSosreport }
func (s *sosSource) close() error { return nil }

// sosNotCollected are the parts a sosreport never holds, and why.
var sosNotCollected = []struct {
	part   Part
	detail string
}{
	{PartRSS, "a sosreport does not collect ethtool -x"},
	{PartContexts, "a sosreport does not collect ethtool -x"},
	{PartFlowHash, "a sosreport does not collect ethtool -n IF rx-flow-hash"},
	{FlowHashPart("tcp4"), "a sosreport does not collect ethtool -n IF rx-flow-hash tcp4"},
	{FlowHashPart("udp4"), "a sosreport does not collect ethtool -n IF rx-flow-hash udp4"},
	{FlowHashPart("tcp6"), "a sosreport does not collect ethtool -n IF rx-flow-hash tcp6"},
	{FlowHashPart("udp6"), "a sosreport does not collect ethtool -n IF rx-flow-hash udp6"},
	{PartQueues, "a sosreport does not collect netdev netlink queue-get"},
	{PartNAPI, "a sosreport does not collect netdev netlink napi-get"},
	{PartQStats, "a sosreport does not collect netdev netlink qstats-get"},
}

// read fills what the interface's captured ethtool text says.
func (s *sosSource) read(n *NIC) {
	for _, c := range sosNotCollected {
		n.SetUnknown(c.part, unknown.Reason{Kind: unknown.KindNotCaptured, Detail: c.detail})
	}
	if b, ok := s.text(n, PartDriver, "-i"); ok {
		v, err := parseEthtoolI(b)
		s.fill(n, PartDriver, "-i", err, func() { n.Driver = v })
	}
	if b, ok := s.text(n, PartChannels, "-l"); ok {
		v, err := ParseEthtoolL(b)
		s.fill(n, PartChannels, "-l", err, func() { n.Channels = v })
	}
	if b, ok := s.text(n, PartRings, "-g"); ok {
		v, err := ParseEthtoolG(b)
		s.fill(n, PartRings, "-g", err, func() { n.Rings = v })
	}
	if b, ok := s.text(n, PartFeatures, "-k"); ok {
		v, err := parseEthtoolK(b)
		s.fill(n, PartFeatures, "-k", err, func() { n.Features = v })
	}
	if b, ok := s.text(n, PartCoalesce, "-c"); ok {
		v, err := parseEthtoolC(b)
		s.fill(n, PartCoalesce, "-c", err, func() { n.Coalesce = v })
	}
	if b, ok := s.text(n, PartPrivFlags, "--show-priv-flags"); ok {
		v, err := parseEthtoolPrivFlags(b)
		s.fill(n, PartPrivFlags, "--show-priv-flags", err, func() { n.PrivFlags = v })
	}
	if b, ok := s.text(n, PartRules, "--show-ntuple"); ok {
		v, err := parseEthtoolN(b)
		s.fill(n, PartRules, "--show-ntuple", err, func() {
			if v.Rules == nil {
				r := *v.Unknown
				r.Detail = sosFile("--show-ntuple", n.Name) + ": " + r.Detail
				n.SetUnknown(PartRules, r)
				return
			}
			n.Rules = v.Rules
		})
	}
}

// sosFile is the file a sosreport keeps `ethtool OPT IF` in.
func sosFile(opt, iface string) string { return sosDir + "/ethtool_" + opt + "_" + iface }

// text returns the captured output of `ethtool opt n.Name`, or says why
// part is unknown: the file is absent, unreadable, or holds ethtool's
// message that the kernel refused the request.
func (s *sosSource) text(n *NIC, part Part, opt string) ([]byte, bool) {
	if n.Name == "" || n.Name == "." || n.Name == ".." || strings.ContainsAny(n.Name, "/\x00") {
		n.SetUnknown(part, unknown.Reason{Kind: unknown.KindMalformed, Detail: fmt.Sprintf("interface name %q names no file", n.Name)})
		return nil, false
	}
	rel := sosFile(opt, n.Name)
	b, err := s.fsys.Read(s.fsys.Path(rel))
	switch {
	case kfile.IsNotExist(err):
		n.SetUnknown(part, unknown.Reason{Kind: unknown.KindNotCaptured, Detail: "no " + rel})
		return nil, false
	case err != nil:
		n.SetUnknown(part, unknown.Reason{Kind: unknown.KindMalformed, Detail: err.Error()})
		return nil, false
	case len(strings.TrimSpace(string(b))) == 0:
		n.SetUnknown(part, unknown.Reason{Kind: unknown.KindMalformed, Detail: rel + " is empty"})
		return nil, false
	}
	if r, ok := ethtoolFailure(b); ok {
		r.Detail = rel + ": " + r.Detail
		n.SetUnknown(part, r)
		return nil, false
	}
	return b, true
}

// fill sets the part with set when the text parsed, else says why not.
func (*sosSource) fill(n *NIC, part Part, opt string, err error, set func()) {
	if err != nil {
		n.SetUnknown(part, unknown.Reason{Kind: unknown.KindMalformed, Detail: sosFile(opt, n.Name) + ": " + err.Error()})
		return
	}
	set()
}
