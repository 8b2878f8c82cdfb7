package nicset

import (
	"errors"
	"fmt"
	"math"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
)

// netdev generic netlink's napi-set (include/uapi/linux/netdev.h,
// Documentation/netlink/specs/netdev.yaml): the request names the NAPI
// instance by its id alone and carries the napi attribute set's
// settings, the same attributes napi-get reports.
const (
	netdevVersion    = 1
	netdevCmdNAPISet = 14 // NETDEV_CMD_NAPI_SET

	netdevNAPIID                = 2 // u32
	netdevNAPIDeferHardIRQs     = 5 // u32, at most S32_MAX (the spec's checks: max s32-max)
	netdevNAPIGROFlushTimeout   = 6 // uint, ns
	netdevNAPIIRQSuspendTimeout = 7 // uint, ns
	netdevNAPIThreaded          = 8 // u32, enum netdev_napi_threaded

	// enum netdev_napi_threaded. 6.19 adds NETDEV_NAPI_THREADED_BUSY_POLL
	// (2), which NAPISetting does not set.
	netdevNAPIThreadedDisabled = 0
	netdevNAPIThreadedEnabled  = 1
)

// The kernels that brought napi-set and its settings: napi-set itself,
// with defer-hard-irqs, gro-flush-timeout and irq-suspend-timeout, in
// 6.13; per-NAPI threaded in 6.17.
const (
	sinceNAPISet  = "6.13"
	sinceThreaded = "6.17"
)

// ErrNoNAPISet is wrapped when the kernel has no netdev napi-set.
var ErrNoNAPISet = errors.New("the kernel has no netdev napi-set command (Linux " + sinceNAPISet + " added it)")

// NAPISetting is what a napi-set changes of one NAPI instance; a nil
// field is left as it is. Threaded is the kernel's enum as disabled
// (false) or enabled (true); its busy-poll mode is not set here.
type NAPISetting struct {
	DeferHardIRQs     *uint32
	GROFlushTimeout   *uint64 // ns
	IRQSuspendTimeout *uint64 // ns
	Threaded          *bool
}

// napiField is one setting: its name in the spec, its attribute, the
// value a set writes (nil: left) and the one napi-get reported.
type napiField struct {
	name  string
	since string
	typ   uint16
	want  *uint64
	got   *uint64
}

// fields lists s's settings beside n's, as numbers: threaded as the
// enum's value.
func (s NAPISetting) fields(n steer.NAPI) []napiField {
	return []napiField{
		{"defer-hard-irqs", sinceNAPISet, netdevNAPIDeferHardIRQs, widen(s.DeferHardIRQs), widen(n.DeferHardIRQs)},
		{"gro-flush-timeout", sinceNAPISet, netdevNAPIGROFlushTimeout, s.GROFlushTimeout, n.GROFlushTimeout},
		{"irq-suspend-timeout", sinceNAPISet, netdevNAPIIRQSuspendTimeout, s.IRQSuspendTimeout, n.IRQSuspendTimeout},
		{"threaded", sinceThreaded, netdevNAPIThreaded, threadedValue(s.Threaded), threadedValue(n.Threaded)},
	}
}

func widen(p *uint32) *uint64 {
	if p == nil {
		return nil
	}
	v := uint64(*p)
	return &v
}

func threadedValue(p *bool) *uint64 {
	if p == nil {
		return nil
	}
	v := uint64(netdevNAPIThreadedDisabled)
	if *p {
		v = netdevNAPIThreadedEnabled
	}
	return &v
}

// ThreadedWord is the kernel's word for a threaded setting: enabled or
// disabled.
func ThreadedWord(on bool) string {
	if on {
		return "enabled"
	}
	return "disabled"
}

// Check says why s cannot be set: nothing to set, or a value the kernel
// refuses (defer-hard-irqs past S32_MAX).
func (s NAPISetting) Check() error {
	if s.DeferHardIRQs == nil && s.GROFlushTimeout == nil && s.IRQSuspendTimeout == nil && s.Threaded == nil {
		return errors.New("a napi-set that sets nothing")
	}
	if s.DeferHardIRQs != nil && *s.DeferHardIRQs > math.MaxInt32 {
		return fmt.Errorf("defer-hard-irqs %d is more than the kernel takes (%d)", *s.DeferHardIRQs, math.MaxInt32)
	}
	return nil
}

// encodeNAPISet is napi-set's body: the id, then each setting. The
// timeouts are netlink uints, 4 bytes when the value fits and 8 when it
// does not, as nla_put_uint writes them; the others are u32s.
func encodeNAPISet(ae *netlink.AttributeEncoder, id uint32, s NAPISetting) {
	ae.Uint32(netdevNAPIID, id)
	for _, f := range s.fields(steer.NAPI{}) {
		switch {
		case f.want == nil:
		case f.typ == netdevNAPIDeferHardIRQs || f.typ == netdevNAPIThreaded || *f.want <= math.MaxUint32:
			ae.Uint32(f.typ, uint32(*f.want))
		default:
			ae.Uint64(f.typ, *f.want)
		}
	}
}

// SetNAPI writes s to NAPI instance id of nic with napi-set. napi-set
// names the instance by its id alone, so nic is read first: the id must
// be one of its instances, and the kernel must report each setting s
// changes (a kernel without it would refuse the attribute); then the
// set, and nic read again for the values.
func (s *liveSetter) SetNAPI(nic string, id uint32, set NAPISetting) error {
	if err := set.Check(); err != nil {
		return fmt.Errorf("%s napi %d: %w", nic, id, err)
	}
	fam, err := s.family("netdev")
	if err != nil {
		return err
	}
	if !fam.Has(netdevCmdNAPISet) {
		return fmt.Errorf("%s napi-set: %w", nic, ErrNoNAPISet)
	}
	n, err := s.Read(nic)
	if err != nil {
		return err
	}
	cur, err := findNAPI(n, id)
	if err != nil {
		return err
	}
	for _, f := range set.fields(*cur) {
		if f.want != nil && f.got == nil {
			return fmt.Errorf("%s napi %d: the kernel reports no %s (per-NAPI %s came in Linux %s), so it cannot be set", nic, id, f.name, f.name, f.since)
		}
	}
	err = s.request(nic, "napi-set", ethnl.Request{Family: fam.ID, Cmd: netdevCmdNAPISet, Version: netdevVersion,
		Attrs: ethnl.Encode(func(ae *netlink.AttributeEncoder) { encodeNAPISet(ae, id, set) })})
	if se := (*SetError)(nil); errors.As(err, &se) && se.Errno == unix.EOPNOTSUPP {
		// genetlink's answer to a command its family lacks.
		return fmt.Errorf("%s napi-set: %w (the kernel answered %s)", nic, ErrNoNAPISet, kfile.ErrnoName(se.Errno))
	}
	if err != nil {
		return err
	}
	if n, err = s.Read(nic); err != nil {
		return err
	}
	return checkNAPI(n, id, set)
}

// findNAPI is n's NAPI instance id, or why there is none: netdev
// napi-get unread, or no instance of that id.
func findNAPI(n *steer.NIC, id uint32) (*steer.NAPI, error) {
	if n.NAPIs == nil {
		return nil, fmt.Errorf("%s napi %d: the NAPI instances are unknown (%s)", n.Name, id, n.Unknown[steer.PartNAPI])
	}
	for i := range n.NAPIs {
		if n.NAPIs[i].ID == id {
			return &n.NAPIs[i], nil
		}
	}
	return nil, fmt.Errorf("%s has no NAPI instance %d", n.Name, id)
}

// checkNAPI says whether NAPI id of n reads as s.
func checkNAPI(n *steer.NIC, id uint32, s NAPISetting) error {
	cur, err := findNAPI(n, id)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrReadBack, err)
	}
	for _, f := range s.fields(*cur) {
		switch {
		case f.want == nil:
		case f.got == nil:
			return fmt.Errorf("%s napi %d: %w: napi-get reports no %s", n.Name, id, ErrReadBack, f.name)
		case *f.got != *f.want:
			return fmt.Errorf("%s napi %d: %w: %s is %s, want %s", n.Name, id, ErrReadBack, f.name, f.text(*f.got), f.text(*f.want))
		}
	}
	return nil
}

// text is a value of f as the spec names it.
func (f napiField) text(v uint64) string {
	if f.typ == netdevNAPIThreaded {
		return ThreadedWord(v != netdevNAPIThreadedDisabled)
	}
	return fmt.Sprint(v)
}
