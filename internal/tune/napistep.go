package tune

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/tune/nicset"
)

// NAPIStep sets one NAPI instance's settings (netdev napi-set): the
// instance's id, and what it sets; a nil setting is left as it is.
type NAPIStep struct {
	ID uint32
	nicset.NAPISetting
}

// savedNAPI is a NAPI instance's old value of exactly the settings its
// step changes (version 4).
type savedNAPI struct {
	ID                uint32  `json:"id"`
	DeferHardIRQs     *uint32 `json:"defer_hard_irqs,omitempty"`
	GROFlushTimeout   *uint64 `json:"gro_flush_timeout,omitempty"` // ns
	IRQSuspendTimeout *uint64 `json:"irq_suspend_timeout,omitempty"`
	Threaded          *bool   `json:"threaded,omitempty"`
}

func fromNAPIStep(s NAPIStep) savedNAPI {
	return savedNAPI{ID: s.ID, DeferHardIRQs: s.DeferHardIRQs, GROFlushTimeout: s.GROFlushTimeout,
		IRQSuspendTimeout: s.IRQSuspendTimeout, Threaded: s.Threaded}
}

func (v savedNAPI) setting() nicset.NAPISetting {
	return nicset.NAPISetting{DeferHardIRQs: v.DeferHardIRQs, GROFlushTimeout: v.GROFlushTimeout,
		IRQSuspendTimeout: v.IRQSuspendTimeout, Threaded: v.Threaded}
}

// napiText says a NAPI instance's settings in the spec's words:
// " defer-hard-irqs 0 threaded enabled".
func napiText(v savedNAPI) string {
	var s string
	if v.DeferHardIRQs != nil {
		s += " defer-hard-irqs " + strconv.FormatUint(uint64(*v.DeferHardIRQs), 10)
	}
	if v.GROFlushTimeout != nil {
		s += " gro-flush-timeout " + strconv.FormatUint(*v.GROFlushTimeout, 10)
	}
	if v.IRQSuspendTimeout != nil {
		s += " irq-suspend-timeout " + strconv.FormatUint(*v.IRQSuspendTimeout, 10)
	}
	if v.Threaded != nil {
		s += " threaded " + nicset.ThreadedWord(*v.Threaded)
	}
	return s
}

// saveNAPI reads the old value of each setting s changes from the NIC's
// napi-get reading. A setting the kernel did not report could not be put
// back, so it cannot be saved.
func saveNAPI(n *steer.NIC, s NAPIStep) (*savedNAPI, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	if n.NAPIs == nil {
		return nil, unknownNow(n, steer.PartNAPI)
	}
	i := slices.IndexFunc(n.NAPIs, func(p steer.NAPI) bool { return p.ID == s.ID })
	if i < 0 {
		return nil, fmt.Errorf("%s has no NAPI instance %d", n.Name, s.ID)
	}
	cur := n.NAPIs[i]
	old := savedNAPI{ID: s.ID}
	var errs [4]error
	old.DeferHardIRQs, errs[0] = oldSetting(s.ID, "defer-hard-irqs", s.DeferHardIRQs, cur.DeferHardIRQs)
	old.GROFlushTimeout, errs[1] = oldSetting(s.ID, "gro-flush-timeout", s.GROFlushTimeout, cur.GROFlushTimeout)
	old.IRQSuspendTimeout, errs[2] = oldSetting(s.ID, "irq-suspend-timeout", s.IRQSuspendTimeout, cur.IRQSuspendTimeout)
	old.Threaded, errs[3] = oldSetting(s.ID, "threaded", s.Threaded, cur.Threaded)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return &old, nil
}

// oldSetting is the current value of a setting a step changes (want set),
// nil for one it leaves.
func oldSetting[T any](id uint32, name string, want, cur *T) (*T, error) {
	if want == nil {
		return nil, nil
	}
	if cur == nil {
		return nil, fmt.Errorf("netdev napi-get reports no %s for NAPI %d (the kernel predates per-NAPI %s)", name, id, name)
	}
	v := *cur
	return &v, nil
}

// checkSavedNAPI says why a state's NAPI step cannot be restored: a
// state older than the version that has them, no instance's id, or
// settings the kernel would refuse.
func checkSavedNAPI(v savedNAPI, version int) error {
	if version < stateVersionTune {
		return fmt.Errorf("version %d holds NAPI settings, which only version %d has", version, stateVersionTune)
	}
	if v.ID == 0 {
		return errors.New("NAPI id 0 (or none) is no instance's")
	}
	if err := v.setting().Check(); err != nil {
		return fmt.Errorf("napi %d: %w", v.ID, err)
	}
	return nil
}
