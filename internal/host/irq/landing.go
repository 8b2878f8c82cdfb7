package irq

import (
	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// Land says how Landing knows where an IRQ is delivered.
type Land string

// How Landing knows.
const (
	LandEffective Land = "effective" // effective_affinity: where the controller delivers it
	LandPending   Land = "pending"   // effective lies outside the request: a move is pending
	LandRequested Land = "requested" // no effective affinity known: the request is all there is
	LandInactive  Land = "inactive"  // effective affinity empty: the IRQ is not started
)

// Landing returns the CPUs an IRQ is delivered to and how that is known.
//
// Normally that is its effective affinity. On a settled kernel the
// effective CPUs always lie within the requested ones; when they do not, a
// move is pending (x86 moves an interrupt at its next occurrence, and a
// captured or copied tree never moves it), so the request is where it will
// land, and Landing says "pending". Without an effective affinity file the
// request is all that is known ("requested"). An empty effective affinity
// belongs to an IRQ not yet started ("inactive"). With neither file
// how is unknown, for the reason the affinity is.
func (q Info) Landing() (cpuset.Set, unknown.Value[Land]) {
	eff, hasEff := q.Effective.Get()
	aff, hasAff := q.Affinity.Get()
	switch {
	case hasEff && eff.IsEmpty():
		return cpuset.Set{}, unknown.Of(LandInactive)
	case hasEff && hasAff && !eff.IsSubsetOf(aff):
		return aff, unknown.Of(LandPending)
	case hasEff:
		return eff, unknown.Of(LandEffective)
	case hasAff:
		return aff, unknown.Of(LandRequested)
	}
	return cpuset.Set{}, unknown.Not[Land](q.Affinity.Why())
}
