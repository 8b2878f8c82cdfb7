package steer

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/internal/kfile"
)

// asker is how a reading reaches the kernel: a generic netlink request
// answered by reply messages, or an ethtool ioctl answered by the
// structure the kernel filled in. Three forms meet it: liveAsker (the
// host's sockets), recorder (live, each answer also handed to Record's
// put) and replayer (the answers a root recorded). The decoders never
// know which one answered, so a recorded reading is the live one.
type asker interface {
	// genl sends req and returns the messages of its reply (one for a
	// get, any number for a dump), or the errno the kernel answered.
	genl(req genlRequest) ([]genlMsg, error)
	// ioctl runs SIOCETHTOOL on req.ifname with req.buf and returns the
	// buffer as the kernel left it, or the errno.
	ioctl(req ioctlRequest) ([]byte, error)
	// where names an answer in messages: the recorded file, or the
	// request.
	where(dir, key string) string
	close() error
}

// genlMsg is one generic netlink message of a reply: the netlink
// header's type and flags, the generic netlink header's command and
// version, and the attributes.
type genlMsg struct {
	Type    uint16
	Flags   uint16
	Cmd     uint8
	Version uint8
	Attrs   []byte
}

// genlRequest is one generic netlink request.
type genlRequest struct {
	// dir is the folder of the recorded answer: the interface's name, or
	// kernelDir for what is not an interface's.
	dir string
	// key names the answer in dir (see the keys below).
	key     string
	family  uint16 // the family's id (nlctrl is fixed)
	cmd     uint8
	version uint8
	dump    bool
	// ack asks the kernel to acknowledge the request (NLM_F_ACK): a
	// set's success is only that acknowledgement.
	ack   bool
	attrs []byte
}

// ioctlRequest is one SIOCETHTOOL request: buf starts with the command
// and is as long as the structure the command fills.
type ioctlRequest struct {
	ifname string
	key    string
	buf    []byte
}

// kernelDir is the folder of the answers that belong to no interface
// (families, string sets). No interface can be named so: the kernel
// refuses ':' in a name (dev_valid_name).
const kernelDir = ":kernel"

// RecordDir is where a root keeps the recorded answers, relative to it.
const RecordDir = "irqnuma/steer"

const recordDir = RecordDir

// errnoSuffix marks the file that holds the errno a request got.
const errnoSuffix = ".errno"

// errNotCaptured says a recorded root holds no answer for a request.
var errNotCaptured = errors.New("not captured")

// unreadableError is a recorded answer, or a reply, that cannot be
// decoded.
type unreadableError struct {
	what string // the file, or the request
	err  error
}

func (e *unreadableError) Error() string { return e.what + ": " + e.err.Error() }
func (e *unreadableError) Unwrap() error { return e.err }

func unreadable(what string, format string, args ...any) error {
	return &unreadableError{what: what, err: fmt.Errorf(format, args...)}
}

// notCapturedError names the file a recorded root lacks.
type notCapturedError struct{ file string }

func (e *notCapturedError) Error() string { return e.file + " not captured" }
func (e *notCapturedError) Is(t error) bool {
	return t == errNotCaptured
}

// reasonOf is why a part is unknown after err.
func reasonOf(err error) Reason {
	var nc *notCapturedError
	if errors.As(err, &nc) {
		return Reason{Why: WhyNotCaptured, Detail: nc.file}
	}
	var ue *unreadableError
	if errors.As(err, &ue) {
		return Reason{Why: WhyUnreadable, Detail: ue.Error()}
	}
	var ke *kernelError
	if errors.As(err, &ke) {
		return Reason{Why: WhyKernel, Detail: ke.what}
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		name := kfile.ErrnoName(errno)
		switch errno {
		case unix.EOPNOTSUPP:
			return Reason{Why: WhyDriver, Detail: name}
		case unix.EPERM, unix.EACCES:
			return Reason{Why: WhyPermission, Detail: name}
		}
		return Reason{Why: WhyFailed, Detail: name}
	}
	return Reason{Why: WhyFailed, Detail: err.Error()}
}

// kernelError says this kernel lacks a family or command.
type kernelError struct{ what string }

func (e *kernelError) Error() string { return e.what }

// Framing of a recorded genl answer: the reply's messages in netlink's
// own layout, one after another, each 4-byte aligned: a 16-byte header
// (length, type, flags, sequence 0, port 0, in the host's byte order, as
// netlink has them), the 4-byte generic netlink header (command,
// version, 2 reserved bytes) and the attributes. Sequence and port are
// written as 0 so that a capture does not depend on the socket it came
// through.
const (
	nlmsgHdrLen = 16
	genlHdrLen  = 4
	// maxAnswer bounds one recorded answer's size: a 64-queue NIC's
	// replies are a few tens of kB.
	maxAnswer = 16 << 20
)

var native = binary.NativeEndian

// encodeGenl frames msgs as a recorded answer holds them.
func encodeGenl(msgs []genlMsg) []byte {
	var out []byte
	for _, m := range msgs {
		n := nlmsgHdrLen + genlHdrLen + len(m.Attrs)
		var h [nlmsgHdrLen + genlHdrLen]byte
		native.PutUint32(h[0:], uint32(n))
		native.PutUint16(h[4:], m.Type)
		native.PutUint16(h[6:], m.Flags)
		h[16] = m.Cmd
		h[17] = m.Version
		out = append(out, h[:]...)
		out = append(out, m.Attrs...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	return out
}

// decodeGenl reads a recorded answer back into its messages.
func decodeGenl(b []byte) ([]genlMsg, error) {
	var out []genlMsg
	for off := 0; off < len(b); {
		if len(b)-off < nlmsgHdrLen+genlHdrLen {
			return nil, fmt.Errorf("message at byte %d: %d bytes, shorter than its headers", off, len(b)-off)
		}
		n := int(native.Uint32(b[off:]))
		if n < nlmsgHdrLen+genlHdrLen || n > len(b)-off {
			return nil, fmt.Errorf("message at byte %d: length %d does not fit the %d bytes left", off, n, len(b)-off)
		}
		if native.Uint32(b[off+8:]) != 0 || native.Uint32(b[off+12:]) != 0 {
			return nil, fmt.Errorf("message at byte %d: sequence and port are not 0", off)
		}
		if native.Uint16(b[off+18:]) != 0 {
			return nil, fmt.Errorf("message at byte %d: the generic netlink header's reserved bytes are not 0", off)
		}
		m := genlMsg{
			Type:    native.Uint16(b[off+4:]),
			Flags:   native.Uint16(b[off+6:]),
			Cmd:     b[off+16],
			Version: b[off+17],
			Attrs:   b[off+nlmsgHdrLen+genlHdrLen : off+n],
		}
		out = append(out, m)
		next := off + (n+3)&^3
		if next > len(b) {
			return nil, fmt.Errorf("message at byte %d: padding past the end", off)
		}
		for _, c := range b[off+n : next] {
			if c != 0 {
				return nil, fmt.Errorf("message at byte %d: padding is not zero", off)
			}
		}
		off = next
	}
	return out, nil
}

func clipString(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
