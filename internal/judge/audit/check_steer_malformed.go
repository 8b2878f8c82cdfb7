package audit

import (
	"fmt"
	"slices"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// A steering reading whose counts contradict the host: steering-malformed.
const CheckSteeringMalformed Check = "steering-malformed"

func init() {
	register(&check{ids: []Check{CheckSteeringMalformed}, needs: []fact{factSteer}, nic: (*auditor).checkSteeringMalformed})
}

// checkSteeringMalformed: a part of the NIC's steering reading claims
// more queues than the host shows beside it or than a device can have
// (steer drops such a count and says why, WhyMalformed). The other
// checks judge without it, from what is left (the channels stand in for
// the RSS rings); this finding says the reading lied, so whoever reads
// the verdict knows what it did not use.
func (a *auditor) checkSteeringMalformed(c *nicCtx) error {
	n := c.steer.n
	if n == nil {
		return nil // the other steering checks say it is not read
	}
	var parts []steer.Part
	for _, p := range n.UnknownParts() {
		if r, _ := n.Why(p); r.Kind == unknown.KindMalformed {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	slices.Sort(parts)
	a.add(Finding{Check: CheckSteeringMalformed, Severity: SeverityWarning, NIC: c.nic.Name, Subject: steerSubject,
		Message: fmt.Sprintf("%s's steering reading is not what a kernel writes: %s; the checks judge without it", c.nic.Name, WhyParts(n, parts)),
		Fix:     c.fix(unknownFix(n, parts))})
	return nil
}

// Malformed says, per NIC, which parts of the state's steering reading
// claim what the host does not have ("eth0 channels: malformed (claims
// …)"), in NIC order; none when every count stands. The audit judges
// without them and says so (steering-malformed); a scrape that meets one
// fails (the exporter), so a lying capture is never quietly served.
func (st *State) Malformed() []string {
	if st == nil || st.Steer == nil {
		return nil
	}
	var out []string
	for _, n := range st.Steer.NICs {
		for _, p := range n.UnknownParts() {
			if r, _ := n.Why(p); r.Kind == unknown.KindMalformed {
				out = append(out, n.Name+" "+string(p)+": "+r.String())
			}
		}
	}
	return out
}
