package steer

import "strings"

// rxfhLabels are the labels ethtool's dump_rxfhash prints before "flows",
// and the flow types (ethtool's names) each may answer: AH and ESP share
// one label, and ip4, ip6 and ether have none.
var rxfhLabels = map[string][]FlowType{
	"TCP over IPV4":                        {"tcp4"},
	"UDP over IPV4":                        {"udp4"},
	"SCTP over IPV4":                       {"sctp4"},
	"IPSEC AH/ESP over IPV4":               {"ah4", "esp4"},
	"TCP over IPV6":                        {"tcp6"},
	"UDP over IPV6":                        {"udp6"},
	"SCTP over IPV6":                       {"sctp6"},
	"IPSEC AH/ESP over IPV6":               {"ah6", "esp6"},
	"GTP-C over IPV4":                      {"gtpc4"},
	"GTP-C (include TEID) over IPV4":       {"gtpc4t"},
	"GTP-U over IPV4":                      {"gtpu4"},
	"GTP-U and Extension Header over IPV4": {"gtpu4e"},
	"GTP-U PSC Uplink over IPV4":           {"gtpu4u"},
	"GTP-U PSC Downlink over IPV4":         {"gtpu4d"},
	"GTP-C over IPV6":                      {"gtpc6"},
	"GTP-C (include TEID) over IPV6":       {"gtpc6t"},
	"GTP-U over IPV6":                      {"gtpu6"},
	"GTP-U and Extension Header over IPV6": {"gtpu6e"},
	"GTP-U PSC Uplink over IPV6":           {"gtpu6u"},
	"GTP-U PSC Downlink over IPV6":         {"gtpu6d"},
	"":                                     {"ip4", "ip6", "ether"}, // no label
}

// rxfhFields are the field lines of unparse_rxfhashopts, in its order,
// with ethtool's letter for each (those of ethtool -N rx-flow-hash).
var rxfhFields = []struct {
	line   string
	letter byte
}{
	{"L2DA", 'm'},
	{"VLAN tag", 'v'},
	{"L3 proto", 't'},
	{"IP SA", 's'},
	{"IP DA", 'd'},
	{"L4 bytes 0 & 1 [TCP/UDP src port]", 'f'},
	{"L4 bytes 2 & 3 [TCP/UDP dst port]", 'n'},
	{"GTP TEID", 'e'},
	{"IPv6 Flow Label", 'l'},
}

const (
	rxfhUse     = " flows use these fields for computing Hash flow key:"
	rxfhDiscard = " flows - All matching flows discarded on RX"
)

// parseRxFlowHash reads the output of `ethtool -n IF rx-flow-hash FT`
// (dump_rxfhash) for the flow type ft that was asked: "LABEL flows use
// these fields for computing Hash flow key:" then one line per field
// ("IP SA", "L4 bytes 0 & 1 [TCP/UDP src port]", ...) or "None"; or
// "LABEL flows - All matching flows discarded on RX" ("r"). A "For RSS
// context N:" line may come first. The fields are returned in ethtool's
// letters, in its order m v t s d f n e l ("sdfn" for addresses and
// ports). The label must be the one ethtool prints for ft. The error,
// wrapping ErrText, names what is not ethtool's.
func parseRxFlowHash(b []byte, ft FlowType) (HashFields, error) {
	const cmd = "ethtool -n rx-flow-hash"
	ls, err := textLines(cmd, b)
	if err != nil {
		return "", err
	}
	if len(ls) > 0 && strings.HasPrefix(strings.TrimSpace(ls[0].text), "For RSS context ") {
		ls = ls[1:]
	}
	if len(ls) == 0 {
		return "", textErr(cmd, 0, "no %q line", "... flows use these fields for computing Hash flow key:")
	}
	// ip4, ip6 and ether have no label: the line starts with the space
	// before "use" (or "-").
	head := strings.TrimRight(ls[0].text, " \t")
	if t := strings.TrimLeft(head, " \t"); strings.HasPrefix(t, "use ") || strings.HasPrefix(t, "- ") {
		head = " flows " + t
	} else {
		head = t
	}
	if label, ok := strings.CutSuffix(head, rxfhDiscard); ok {
		if err := rxfhLabel(label, ft); err != nil {
			return "", textErr(cmd, ls[0].n, "%v", err)
		}
		if len(ls) > 1 {
			return "", textErr(cmd, ls[1].n, "%q after the discard line", textClip(ls[1].text))
		}
		return "r", nil
	}
	label, ok := strings.CutSuffix(head, rxfhUse)
	if !ok {
		return "", textErr(cmd, ls[0].n, "%q is not %q", textClip(head), "LABEL"+rxfhUse)
	}
	if err := rxfhLabel(label, ft); err != nil {
		return "", textErr(cmd, ls[0].n, "%v", err)
	}
	return rxfhBody(cmd, ls[1:])
}

func rxfhLabel(label string, ft FlowType) error {
	fts, ok := rxfhLabels[label]
	if !ok {
		return errf("%q is not a flow label ethtool prints", textClip(label))
	}
	for _, f := range fts {
		if f == ft {
			return nil
		}
	}
	return errf("label %q is not ethtool's for flow type %q", label, textClip(string(ft)))
}

// rxfhBody reads the field lines, which ethtool prints in rxfhFields'
// order.
func rxfhBody(cmd string, ls []textLine) (HashFields, error) {
	if len(ls) == 1 && strings.TrimSpace(ls[0].text) == "None" {
		return "", nil
	}
	if len(ls) == 0 {
		return "", textErr(cmd, 0, "no field lines (ethtool prints \"None\" when nothing is hashed)")
	}
	var out []byte
	next := 0
	for _, l := range ls {
		t := strings.TrimSpace(l.text)
		if textElided(t) {
			return "", textErr(cmd, l.n, "the capture leaves lines out (%q)", textClip(t))
		}
		i := next
		for i < len(rxfhFields) && rxfhFields[i].line != t {
			i++
		}
		if i == len(rxfhFields) {
			return "", textErr(cmd, l.n, "%q is not a hash field ethtool prints here (or is out of its order)", textClip(t))
		}
		out = append(out, rxfhFields[i].letter)
		next = i + 1
	}
	return HashFields(out), nil
}
