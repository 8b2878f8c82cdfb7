// Package nicset changes a NIC's steering: channels, rings, RSS table
// and key, ntuple rules, through ethtool netlink or the ethtool ioctl,
// and per-NAPI settings through netdev netlink's napi-set; each set is
// read back. It builds the set requests against the kernel's uapi
// (include/uapi/linux/ethtool_netlink_generated.h,
// include/uapi/linux/ethtool.h, include/uapi/linux/netdev.h) and sends
// them through ethnl's live transport; the reading back is steer's (steer.ReadNIC, through the
// same connection). It changes only the live root: a captured root's
// steering is refused with ErrNotLive. The tuner runs its sets as steps
// with their undo; nothing else calls it.
package nicset

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/ethnl"
	"github.com/irqnuma/irqnuma/internal/host/steer"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

var native = binary.NativeEndian

// ErrNotLive is returned by OpenSetter for a root that is not the
// running kernel: a captured root's steering cannot be changed.
var ErrNotLive = errors.New("steering is changed only on the live root")

// ErrReadBack is wrapped when a write was accepted but reading the part
// again does not show the value written.
var ErrReadBack = errors.New("read back differs from the value written")

// SetError is the kernel's refusal of a change: its errno, and for a
// netlink request the extended ack's message when it gave one.
type SetError struct {
	Op      string // "channels-set", "ETHTOOL_SRSSH", ...
	NIC     string
	Errno   unix.Errno
	Message string // the netlink extack message; "" when none
}

func (e *SetError) Error() string {
	s := fmt.Sprintf("%s %s: %s", e.NIC, e.Op, kfile.ErrnoName(e.Errno))
	switch e.Errno {
	case unix.EOPNOTSUPP:
		s += " (the driver cannot)"
	case unix.EPERM, unix.EACCES:
		s += " (needs CAP_NET_ADMIN)"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *SetError) Unwrap() error { return e.Errno }

// Reason is the refusal as a unknown.Reason: WhyDriver for EOPNOTSUPP.
func (e *SetError) Reason() unknown.Reason {
	r := steer.ReasonOf(e.Errno)
	if e.Message != "" {
		r.Detail += ": " + e.Message
	}
	return r
}

// ChannelCounts are the channel counts a set changes; a nil field is
// left as it is.
type ChannelCounts struct {
	RX, TX, Other, Combined *uint32
}

// RSSSetting is what a set of RSS context 0 changes. Default puts the
// driver's default table back (ethtool -X IF default: the table is no
// longer the user's, so the driver spreads it again when channels
// change); otherwise a non-nil Table is written as it is. A nil Key is
// left as it is.
type RSSSetting struct {
	Default bool
	Table   []uint32
	Key     []byte
}

// RingSetting is what a set of the rings changes; a nil field is left.
type RingSetting struct {
	TCPDataSplit *DataSplit
	HDSThresh    *uint32
}

// DataSplit is the tcp-data-split a set of the rings writes: on, off,
// or the driver's default (what a restore writes back when the driver
// said n/a before).
type DataSplit string

// The tcp-data-split settings (ETHTOOL_TCP_DATA_SPLIT_*). The default's
// word is the kernel's, "unknown", which a state file keeps.
const (
	DataSplitDefault DataSplit = "unknown"
	DataSplitOff     DataSplit = DataSplit(steer.TCPDataSplitDisabled)
	DataSplitOn      DataSplit = DataSplit(steer.TCPDataSplitEnabled)
)

// RuleSpec is the one kind of ntuple rule irqnuma adds: a TCP flow type
// (tcp4 or tcp6) and destination port, steered to Queue.
type RuleSpec struct {
	FlowType steer.FlowType `json:"flow_type"`
	DstPort  uint16         `json:"dst_port"`
	Queue    uint32         `json:"queue"`
}

// Matches reports whether a rule read back is exactly the spec: its flow
// type, the exact destination port, to its queue, matching nothing else.
func (s RuleSpec) Matches(r steer.Rule) bool {
	return r.FlowType == s.FlowType && r.DstPort != nil && *r.DstPort == s.DstPort && r.DstPortMask == 0xffff &&
		r.SrcPort == nil && r.SrcIP == "" && r.DstIP == "" && r.Action == steer.RuleActionQueue &&
		r.Queue == uint64(s.Queue) && r.VF == 0 && r.Context == nil
}

// Setter changes a NIC's steering and reads it again. Every set reads
// the part back and fails wrapping ErrReadBack when it differs; a
// refusal is a *SetError.
type Setter interface {
	Read(nic string) (*steer.NIC, error)
	SetChannels(nic string, c ChannelCounts) error
	SetRSS(nic string, r RSSSetting) error
	SetRings(nic string, r RingSetting) error
	// InsertRule adds a rule and returns its location.
	InsertRule(nic string, r RuleSpec) (uint32, error)
	DeleteRule(nic string, loc uint32) error
	// SetNAPI writes the settings of nic's NAPI instance id; a kernel
	// without napi-set is ErrNoNAPISet.
	SetNAPI(nic string, id uint32, s NAPISetting) error
	Close() error
}

// OpenSetter returns the live kernel's Setter; any other root is
// refused with ErrNotLive.
func OpenSetter(fsys kfile.FS) (Setter, error) {
	if !fsys.Live() {
		return nil, fmt.Errorf("%s: %w", fsys.Root(), ErrNotLive)
	}
	return &liveSetter{fsys: fsys, ask: ethnl.NewLive()}, nil
}

type liveSetter struct {
	fsys kfile.FS
	ask  asker
}

// asker is what a Setter asks through: ethnl.Live, or a test's kernel.
// GenlRaw keeps the extended ack's message a refusal says why in.
type asker interface {
	ethnl.Asker
	GenlRaw(req ethnl.Request) ([]ethnl.Msg, error)
}

func (s *liveSetter) Close() error { return s.ask.Close() }

// Read reads the NIC's steering afresh, through the setter's own
// connection.
func (s *liveSetter) Read(nic string) (*steer.NIC, error) {
	return steer.ReadNIC(s.fsys, s.ask, nic)
}

// family looks up a generic netlink family (ethtool, netdev); every set
// asks afresh, as a reading does.
func (s *liveSetter) family(name string) (*ethnl.Family, error) {
	req := ethnl.FamilyRequest(name)
	msgs, err := s.ask.Genl(req)
	if errors.Is(err, unix.ENOENT) {
		return nil, errors.New("no generic netlink family " + name)
	}
	if err != nil {
		return nil, err
	}
	f, err := ethnl.DecodeFamily(name, msgs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.ask.Where(req.Dir, req.Key), err)
	}
	return f, nil
}

// set sends one ethtool set request and returns the kernel's refusal.
func (s *liveSetter) set(nic string, cmd uint8, op string, body func(ae *netlink.AttributeEncoder)) error {
	f, err := s.family("ethtool")
	if err != nil {
		return err
	}
	if !f.Has(cmd) {
		return fmt.Errorf("ethtool netlink has no %s command", op)
	}
	attrs := ethnl.Encode(func(ae *netlink.AttributeEncoder) {
		ae.Nested(ethnlAttrHeader, func(h *netlink.AttributeEncoder) error {
			h.String(ethnlHeaderDevName, nic)
			return nil
		})
		body(ae)
	})
	return s.request(nic, op, ethnl.Request{Family: f.ID, Cmd: cmd, Version: ethnlVersion, Attrs: attrs})
}

// request sends one set request, acknowledged, and returns the kernel's
// refusal.
func (s *liveSetter) request(nic, op string, req ethnl.Request) error {
	req.Ack = true
	if _, err := s.ask.GenlRaw(req); err != nil {
		return setError(nic, op, err)
	}
	return nil
}

// setError turns a request's error into a *SetError, keeping the
// extended ack's message.
func setError(nic, op string, err error) error {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return fmt.Errorf("%s %s: %w", nic, op, err)
	}
	se := &SetError{Op: op, NIC: nic, Errno: errno}
	var oe *netlink.OpError
	if errors.As(err, &oe) {
		se.Message = oe.Message
	}
	return se
}
