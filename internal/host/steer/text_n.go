package steer

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/unknown"
)

// RulesText is what ethtool -n (--show-ntuple, -u) printed: the ring
// count and the rules, or why ethtool could not get the rules.
type RulesText struct {
	// RXRings is "N RX rings available"; nil when the line is absent.
	RXRings *uint32
	// Rules is nil when ethtool could not read them; Unknown says why.
	Rules   *Rules
	Unknown *unknown.Reason
}

// ruleTypes maps "Rule Type:" (and ETHER_FLOW's "Flow Type:") to the
// flow type, as rxclass_print_nfc_rule prints them.
var ruleTypes = map[string]FlowType{
	"TCP over IPv4": "tcp4", "UDP over IPv4": "udp4", "SCTP over IPv4": "sctp4",
	"IPSEC AH over IPv4": "ah4", "IPSEC ESP over IPv4": "esp4", "Raw IPv4": "ip4",
	"TCP over IPv6": "tcp6", "UDP over IPv6": "udp6", "SCTP over IPv6": "sctp6",
	"IPSEC AH over IPv6": "ah6", "IPSEC ESP over IPv6": "esp6", "Raw IPv6": "ip6",
	"Raw Ethernet": "ether",
}

// ruleIgnored are the match lines the model does not keep.
var ruleIgnored = map[string]bool{
	"TOS": true, "Traffic Class": true, "Protocol": true, "L4 bytes": true, "SPI": true,
	"VLAN EtherType": true, "VLAN": true, "User-defined": true,
	"Src MAC addr": true, "Dest MAC addr": true, "Ethertype": true,
}

// parseEthtoolN reads the output of ethtool -n IF (do_grxclass and
// rxclass.c): "N RX rings available", "Total N rules", then per rule
// "Filter: LOCATION", its "Rule Type:" (or "Flow Type: Raw Ethernet"),
// its match lines and "Action: ...". Masks are turned back into the
// kernel's, as the ioctl gives them (a set bit must match): ethtool
// prints them inverted, so its "mask: 0.0.0.0" is 255.255.255.255 here,
// and its port "mask: 0x0" is 0xffff. When ethtool could not get the
// rules ("rxclass: Cannot get RX class rule count: Operation not
// supported"), Rules is nil and Unknown says why. Every rule the total
// counts must be there: the error, wrapping ErrText, says which part is
// missing or not ethtool's.
func parseEthtoolN(b []byte) (*RulesText, error) {
	const cmd = "ethtool -n"
	ls, err := textLines(cmd, b)
	if err != nil {
		return nil, err
	}
	out := &RulesText{}
	if len(ls) > 0 {
		if v, ok := strings.CutSuffix(strings.TrimSpace(ls[0].text), " RX rings available"); ok {
			n, err := textU32(v)
			if err != nil {
				return nil, textErr(cmd, ls[0].n, "ring count: %v", err)
			}
			out.RXRings = &n
			ls = ls[1:]
		}
	}
	if r, ok := rulesFailure(ls); ok {
		out.Unknown = &r
		return out, nil
	}
	if len(ls) == 0 {
		return nil, textErr(cmd, 0, "no %q line", "Total N rules")
	}
	total, ok := strings.CutSuffix(strings.TrimPrefix(strings.TrimSpace(ls[0].text), "Total "), " rules")
	if !ok || !strings.HasPrefix(strings.TrimSpace(ls[0].text), "Total ") {
		return nil, textErr(cmd, ls[0].n, "%q is not %q", textClip(ls[0].text), "Total N rules")
	}
	count, err := textU32(total)
	if err != nil {
		return nil, textErr(cmd, ls[0].n, "rule count: %v", err)
	}
	rules := &Rules{Count: count}
	if err := readRules(cmd, ls[1:], rules); err != nil {
		return nil, err
	}
	if uint64(len(rules.Rules)) != uint64(count) {
		return nil, textErr(cmd, 0, "the text shows %d of the %d rules it counts", len(rules.Rules), count)
	}
	out.Rules = rules
	return out, nil
}

// rulesFailure reads ethtool's messages when it could not get the rules.
func rulesFailure(ls []textLine) (unknown.Reason, bool) {
	var msg string
	for _, l := range ls {
		t := strings.TrimSpace(l.text)
		switch {
		case strings.HasPrefix(t, "rxclass: Cannot ") || strings.HasPrefix(t, "Cannot "):
			if msg == "" {
				msg = t
			}
		case t == "RX classification rule retrieval failed":
		default:
			return unknown.Reason{}, false
		}
	}
	if msg == "" {
		return unknown.Reason{}, false
	}
	return unknown.Reason{Kind: textErrnoWhy(msg[strings.LastIndex(msg, ": ")+2:]), Detail: textClip(msg)}, true
}

// readRules reads the "Filter:" blocks.
func readRules(cmd string, ls []textLine, rules *Rules) error {
	var cur *Rule
	for _, l := range ls {
		t := strings.TrimSpace(l.text)
		if textElided(t) {
			return textErr(cmd, l.n, "the capture leaves lines out (%q)", textClip(t))
		}
		k, v, ok := textKV(t)
		if !ok {
			return textErr(cmd, l.n, "%q is not KEY: VALUE", textClip(t))
		}
		if k == "Filter" {
			if len(rules.Rules) >= maxTextLines {
				return textErr(cmd, l.n, "more than %d rules", maxTextLines)
			}
			loc, err := textU32(v)
			if err != nil {
				return textErr(cmd, l.n, "filter location: %v", err)
			}
			rules.Rules = append(rules.Rules, Rule{Location: loc})
			cur = &rules.Rules[len(rules.Rules)-1]
			continue
		}
		if cur == nil {
			return textErr(cmd, l.n, "%q before the first Filter line", textClip(t))
		}
		if err := ruleLine(cur, k, v); err != nil {
			return textErr(cmd, l.n, "filter %d: %v", cur.Location, err)
		}
	}
	for _, r := range rules.Rules {
		if r.FlowType == "" || r.Action == "" {
			return textErr(cmd, 0, "filter %d has no rule type or no action", r.Location)
		}
	}
	return nil
}

func ruleLine(r *Rule, k, v string) error {
	switch k {
	case "Rule Type", "Flow Type":
		ft, ok := ruleTypes[v]
		if !ok {
			return errf("rule type %q is not one ethtool prints", textClip(v))
		}
		r.FlowType = ft
	case "Unknown Flow type":
		return errf("flow type %s is unknown to the ethtool that printed it", textClip(v))
	case "Src IP addr":
		return addrMask(v, &r.SrcIP, &r.SrcMask)
	case "Dest IP addr":
		return addrMask(v, &r.DstIP, &r.DstMask)
	case "Src port":
		return portMask(v, &r.SrcPort, &r.SrcPortMask)
	case "Dest port":
		return portMask(v, &r.DstPort, &r.DstPortMask)
	case "Action":
		return ruleAction(r, v)
	default:
		if !ruleIgnored[k] {
			return errf("%q is not a line ethtool prints in a rule", textClip(k))
		}
	}
	return nil
}

func addrMask(v string, addr, mask *string) error {
	a, m, ok := strings.Cut(v, " mask: ")
	if !ok || a == "" || m == "" {
		return errf("%q is not ADDR mask: MASK", textClip(v))
	}
	ip, err := netip.ParseAddr(a)
	if err != nil {
		return errf("address %q is not an IPv4 or IPv6 address", textClip(a))
	}
	mk, err := netip.ParseAddr(m)
	if err != nil || mk.Is4() != ip.Is4() {
		return errf("mask %q is not an address of %s's family", textClip(m), textClip(a))
	}
	inv := mk.AsSlice()
	for i := range inv {
		inv[i] = ^inv[i]
	}
	kmask, _ := netip.AddrFromSlice(inv)
	*addr, *mask = ip.String(), kmask.String()
	return nil
}

func portMask(v string, port **uint16, mask *uint16) error {
	p, m, ok := strings.Cut(v, " mask: ")
	if !ok {
		return errf("%q is not PORT mask: 0xMASK", textClip(v))
	}
	pn, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return errf("port %q is not 0 to 65535", textClip(p))
	}
	mh, ok := strings.CutPrefix(m, "0x")
	mn, err := strconv.ParseUint(mh, 16, 16)
	if !ok || err != nil {
		return errf("port mask %q is not 0x0 to 0xffff", textClip(m))
	}
	pv := uint16(pn)
	*port, *mask = &pv, ^uint16(mn)
	return nil
}

// ruleAction reads rxclass_print_nfc_rule's "Action:" forms.
func ruleAction(r *Rule, v string) error {
	switch {
	case v == "Drop":
		r.Action = RuleActionDrop
		return nil
	case v == "Wake-on-LAN":
		r.Action = RuleActionWake
		return nil
	case strings.HasPrefix(v, "Direct to queue "):
		q, err := strconv.ParseUint(strings.TrimPrefix(v, "Direct to queue "), 10, 64)
		if err != nil {
			return errf("action %q: queue is not a number", textClip(v))
		}
		r.Action, r.Queue = RuleActionQueue, q
		return nil
	case strings.HasPrefix(v, "Direct to VF "):
		var vf, q uint64
		vs, qs, ok := strings.Cut(strings.TrimPrefix(v, "Direct to VF "), " queue ")
		vf, err1 := strconv.ParseUint(vs, 10, 8)
		q, err2 := strconv.ParseUint(qs, 10, 32)
		if !ok || err1 != nil || err2 != nil || vf >= 255 {
			return errf("action %q is not Direct to VF N queue N", textClip(v))
		}
		// ethtool prints the ring cookie's VF byte less one.
		r.Action, r.VF, r.Queue = RuleActionQueue, uint32(vf)+1, q
		return nil
	case strings.HasPrefix(v, "Direct to RSS Context "):
		return rssAction(r, strings.TrimPrefix(v, "Direct to RSS Context "))
	}
	return errf("action %q is not one ethtool prints", textClip(v))
}

func rssAction(r *Rule, v string) error {
	c, off, hasOff := strings.Cut(v, " (queue base offset: ")
	ctx, err := strconv.ParseUint(c, 10, 32)
	if err != nil {
		return errf("RSS context %q is not a number", textClip(c))
	}
	var q uint64
	if hasOff {
		qs, ok := strings.CutSuffix(off, ")")
		if q, err = strconv.ParseUint(qs, 10, 64); !ok || err != nil {
			return errf("queue base offset %q is not a number", textClip(off))
		}
	}
	c32 := uint32(ctx)
	r.Action, r.Context, r.Queue = RuleActionQueue, &c32, q
	return nil
}
