// Package ethnl is the ethtool netlink and SIOCETHTOOL transport: it
// sends a request, returns the reply, and knows no command's meaning.
// A generic netlink request goes out on one socket and its reply comes
// back as messages; an ethtool ioctl runs with the buffer it is given
// and returns the buffer as the kernel left it. Around that it holds
// what every user of the two shares: the Asker interface a reading or a
// write asks through, the live kernel's Asker (Live), the generic
// netlink controller's family lookup, the netlink attribute walk, and
// the framing a recorded reply keeps its messages in. What a request
// means, and what its reply says, is the asker's: internal/host/steer
// builds the gets and decodes their replies, internal/tune/nicset builds
// the sets.
package ethnl

import (
	"encoding/binary"
	"fmt"
)

// Asker is how a request reaches the kernel: a generic netlink request
// answered by reply messages, or an ethtool ioctl answered by the
// structure the kernel filled in. Live asks the host's sockets; a
// reader may put a recorder or a replayer of its own answers in front
// of it, and its decoders never know which one answered.
type Asker interface {
	// Genl sends req and returns the messages of its reply (one for a
	// get, any number for a dump), or the errno the kernel answered.
	Genl(req Request) ([]Msg, error)
	// Ioctl runs SIOCETHTOOL on req.IfName with req.Buf and returns the
	// buffer as the kernel left it, or the errno.
	Ioctl(req IoctlRequest) ([]byte, error)
	// Where names an answer in messages: the recorded file, or the
	// request.
	Where(dir, key string) string
	Close() error
}

// Msg is one generic netlink message of a reply: the netlink header's
// type and flags, the generic netlink header's command and version, and
// the attributes.
type Msg struct {
	Type    uint16
	Flags   uint16
	Cmd     uint8
	Version uint8
	Attrs   []byte
}

// Request is one generic netlink request.
type Request struct {
	// Dir is the folder of a recorded answer: the interface's name, or
	// KernelDir for what is not an interface's.
	Dir string
	// Key names the answer in Dir.
	Key     string
	Family  uint16 // the family's id (nlctrl is fixed)
	Cmd     uint8
	Version uint8
	Dump    bool
	// Ack asks the kernel to acknowledge the request (NLM_F_ACK): a
	// set's success is only that acknowledgement.
	Ack   bool
	Attrs []byte
}

// IoctlRequest is one SIOCETHTOOL request: Buf starts with the command
// and is as long as the structure the command fills.
type IoctlRequest struct {
	IfName string
	Key    string
	Buf    []byte
}

// KernelDir is the folder of the answers that belong to no interface
// (families, string sets). No interface can be named so: the kernel
// refuses ':' in a name (dev_valid_name).
const KernelDir = ":kernel"

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
)

var native = binary.NativeEndian

// EncodeMsgs frames msgs as a recorded answer holds them.
func EncodeMsgs(msgs []Msg) []byte {
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

// DecodeMsgs reads a recorded answer back into its messages.
func DecodeMsgs(b []byte) ([]Msg, error) {
	var out []Msg
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
		m := Msg{
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
