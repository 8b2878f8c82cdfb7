package irq

import "github.com/irqnuma/irqnuma/cpuset"

// Land says how Landing knows where an IRQ is delivered.
type Land string

// How Landing knows.
const (
	LandEffective Land = "effective" // effective_affinity: where the controller delivers it
	LandPending   Land = "pending"   // effective lies outside the request: a move is pending
	LandRequested Land = "requested" // no effective affinity known: the request is all there is
	LandInactive  Land = "inactive"  // effective affinity empty: the IRQ is not started
	LandUnknown   Land = "unknown"   // neither file
)

// Landing returns the CPUs an IRQ is delivered to and how that is known.
//
// Normally that is its effective affinity. On a settled kernel the
// effective CPUs always lie within the requested ones; when they do not, a
// move is pending (x86 moves an interrupt at its next occurrence, and a
// captured or copied tree never moves it), so the request is where it will
// land, and Landing says "pending". Without an effective affinity file the
// request is all that is known ("requested"). An empty effective affinity
// belongs to an IRQ not yet started ("inactive").
func (q Info) Landing() (cpuset.Set, Land) {
	switch {
	case q.HasEffective && q.Effective.IsEmpty():
		return cpuset.Set{}, LandInactive
	case q.HasEffective && q.HasAffinity && !q.Effective.IsSubsetOf(q.Affinity):
		return q.Affinity, LandPending
	case q.HasEffective:
		return q.Effective, LandEffective
	case q.HasAffinity:
		return q.Affinity, LandRequested
	}
	return cpuset.Set{}, LandUnknown
}
