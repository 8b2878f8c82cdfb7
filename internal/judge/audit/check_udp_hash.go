package audit

import (
	"fmt"
	"strings"

	"github.com/irqnuma/irqnuma/internal/host/steer"
)

// UDP hashed on addresses only: udp-hash-no-ports.
const CheckUDPHashNoPorts Check = "udp-hash-no-ports"

func init() {
	register(&check{ids: []Check{CheckUDPHashNoPorts}, needs: []fact{factSteer}, nic: (*auditor).checkUDPHash})
}

// checkUDPHash: udp4 or udp6 hashed without both port halves (ixgbe's
// default udp4 is sd): every UDP flow between two hosts hashes alike, so
// lands on one queue.
func (a *auditor) checkUDPHash(c *nicCtx) error {
	n := c.steer.n
	if n == nil {
		return a.steerSkip(c)
	}
	if c.steer.rings == 1 {
		return nil // one queue: nothing to spread over
	}
	if noRSS(n) {
		// No RSS at all: the hash fields pick no queue (and virtio_net
		// without RSS says it hashes nothing); steerSkip says so once.
		return a.steerSkip(c)
	}
	var bad, fixes []string
	known := false
	for _, ft := range []steer.FlowType{"udp4", "udp6"} {
		h, ok := n.FlowHash[ft]
		if !ok {
			continue
		}
		known = true
		if h.HasPorts() {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s on %s", ft, hashWords(h)))
		fixes = append(fixes, fmt.Sprintf("ethtool -N %s rx-flow-hash %s %s", c.ifname, ft, withPorts(h)))
	}
	if !known {
		return a.steerSkip(c)
	}
	if len(bad) == 0 {
		return nil
	}
	a.add(Finding{Check: CheckUDPHashNoPorts, Severity: SeverityWarning, NIC: c.nic.Name, Subject: "rx-flow-hash udp",
		Message: fmt.Sprintf("%s hashes %s, not the ports: every UDP flow between two hosts lands on one queue, so a multi-stream UDP test measures one core",
			c.nic.Name, strings.Join(bad, " and ")),
		Fix: c.fix(strings.Join(fixes, "; "))})
	return nil
}

// hashWords is "IP source and destination only (sd)".
func hashWords(h steer.HashFields) string {
	if h == "" {
		return "nothing (every packet hashes alike)"
	}
	names := map[rune]string{'m': "L2 destination", 'v': "VLAN", 't': "L3 protocol", 's': "IP source", 'd': "IP destination",
		'f': "source port", 'n': "destination port"}
	var w []string
	for _, r := range string(h) {
		if s, ok := names[r]; ok {
			w = append(w, s)
		}
	}
	return strings.Join(w, ", ") + " only (" + string(h) + ")"
}

// withPorts is h with both port halves added, in ethtool's order.
func withPorts(h steer.HashFields) string {
	s := string(h)
	for _, r := range "fn" {
		if !strings.ContainsRune(s, r) {
			s += string(r)
		}
	}
	if !strings.ContainsAny(s, "sd") {
		s = "sd" + s
	}
	// ethtool's letter order: m v t s d f n r
	var out []byte
	for _, r := range "mvtsdfnr" {
		if strings.ContainsRune(s, r) {
			out = append(out, byte(r))
		}
	}
	return string(out)
}
