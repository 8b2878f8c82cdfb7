package nslink

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/irqnuma/irqnuma/internal/unknown"
	"golang.org/x/sys/unix"
)

// A recorded reply is the reply's messages as netlink frames them, one
// after another, each 4-byte aligned: the 16-byte nlmsghdr (length,
// type, flags, sequence 0, port 0, in the host's byte order) and the
// payload. Sequence and port are written as 0 so that a recording does
// not depend on the socket it came through.
const (
	nlmsgHdrLen  = 16
	ifinfomsgLen = 16 // struct ifinfomsg: family, pad, type, index, flags, change
	rtgenmsgLen  = 4  // struct rtgenmsg (one byte), NLMSG_ALIGNed
	nlaHdrLen    = 4
	// maxLinks bounds a dump: more interfaces than this in one namespace
	// is not a reply this reader believes.
	maxLinks = 1 << 16
	// maxName bounds a name attribute: IFNAMSIZ is 16 with its NUL; a
	// kind or a parent device's name is short too.
	maxName = 64
	// nlaTypeMask drops NLA_F_NESTED and NLA_F_NET_BYTEORDER from a type.
	nlaTypeMask = 0x3fff
)

var native = binary.NativeEndian

// message is one netlink message of a reply.
type message struct {
	typ, flags uint16
	data       []byte
}

// encode frames msgs as a recording holds them.
func encode(msgs []message) []byte {
	var out []byte
	for _, m := range msgs {
		var h [nlmsgHdrLen]byte
		native.PutUint32(h[0:], uint32(nlmsgHdrLen+len(m.data)))
		native.PutUint16(h[4:], m.typ)
		native.PutUint16(h[6:], m.flags)
		out = append(out, h[:]...)
		out = append(out, m.data...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	return out
}

// frames splits a recording into its messages.
func frames(b []byte) ([]message, error) {
	var out []message
	for off := 0; off < len(b); {
		if len(b)-off < nlmsgHdrLen {
			return nil, fmt.Errorf("message at byte %d: %d bytes, shorter than its header", off, len(b)-off)
		}
		n := int(native.Uint32(b[off:]))
		if n < nlmsgHdrLen || n > len(b)-off {
			return nil, fmt.Errorf("message at byte %d: length %d does not fit the %d bytes left", off, n, len(b)-off)
		}
		if native.Uint32(b[off+8:]) != 0 || native.Uint32(b[off+12:]) != 0 {
			return nil, fmt.Errorf("message at byte %d: sequence and port are not 0", off)
		}
		out = append(out, message{typ: native.Uint16(b[off+4:]), flags: native.Uint16(b[off+6:]), data: b[off+nlmsgHdrLen : off+n]})
		next := off + (n+3)&^3
		if next > len(b) {
			return nil, fmt.Errorf("message at byte %d: padding past the end", off)
		}
		if bytes.ContainsFunc(b[off+n:next], func(r rune) bool { return r != 0 }) {
			return nil, fmt.Errorf("message at byte %d: padding is not zero", off)
		}
		off = next
	}
	return out, nil
}

// decodeLinks decodes a recorded RTM_GETLINK dump: RTM_NEWLINK messages,
// no two of one index or one name (the kernel looks a namespace's links
// up by name, dev_get_by_name, so it keeps their names unique).
func decodeLinks(b []byte) ([]Link, error) {
	msgs, err := frames(b)
	if err != nil {
		return nil, err
	}
	if len(msgs) > maxLinks {
		return nil, fmt.Errorf("%d links, more than %d", len(msgs), maxLinks)
	}
	out := make([]Link, 0, len(msgs))
	seen, names := map[int]bool{}, map[string]int{}
	for i, m := range msgs {
		if m.typ != unix.RTM_NEWLINK {
			return nil, fmt.Errorf("message %d: type %d, not RTM_NEWLINK (%d)", i, m.typ, unix.RTM_NEWLINK)
		}
		l, err := decodeLink(m.data)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		if seen[l.Index] {
			return nil, fmt.Errorf("message %d: index %d twice", i, l.Index)
		}
		if j, ok := names[l.Name]; ok {
			return nil, fmt.Errorf("message %d: link %d is named %q, as link %d is: a namespace's link names are unique", i, l.Index, l.Name, j)
		}
		seen[l.Index], names[l.Name] = true, l.Index
		out = append(out, l)
	}
	return out, nil
}

// decodeLink decodes one RTM_NEWLINK payload: struct ifinfomsg and the
// IFLA_ attributes it reads (linux/if_link.h).
func decodeLink(b []byte) (Link, error) {
	if len(b) < ifinfomsgLen {
		return Link{}, fmt.Errorf("%d bytes, shorter than struct ifinfomsg (%d)", len(b), ifinfomsgLen)
	}
	l := Link{Index: int(int32(native.Uint32(b[4:]))), Flags: native.Uint32(b[8:]), LinkNetNSID: inThisNamespace}
	if l.Index <= 0 {
		return Link{}, fmt.Errorf("ifi_index %d is not an interface index", l.Index)
	}
	err := walk(b[ifinfomsgLen:], func(typ uint16, v []byte) error {
		var err error
		switch typ {
		case unix.IFLA_IFNAME:
			l.Name, err = str("IFLA_IFNAME", v, unix.IFNAMSIZ)
		case unix.IFLA_LINK:
			var x uint32
			if x, err = u32("IFLA_LINK", v); err == nil {
				l.Link = int(int32(x))
			}
		case unix.IFLA_LINK_NETNSID:
			var x uint32
			if x, err = u32("IFLA_LINK_NETNSID", v); err == nil {
				l.LinkNetNSID = unknown.Of(int(int32(x)))
			}
		case unix.IFLA_LINKINFO:
			err = walk(v, func(t uint16, iv []byte) error {
				var err error
				if t == unix.IFLA_INFO_KIND {
					l.Kind, err = str("IFLA_INFO_KIND", iv, maxName)
				}
				return err
			})
		case unix.IFLA_PARENT_DEV_NAME:
			l.ParentDev, err = str("IFLA_PARENT_DEV_NAME", v, maxName)
		case unix.IFLA_PARENT_DEV_BUS_NAME:
			l.ParentBus, err = str("IFLA_PARENT_DEV_BUS_NAME", v, maxName)
		case unix.IFLA_XDP:
			l.XDP, err = decodeXDP(v)
		}
		return err
	})
	switch {
	case err != nil:
		return Link{}, fmt.Errorf("link %d: %w", l.Index, err)
	case l.Name == "":
		return Link{}, fmt.Errorf("link %d: no IFLA_IFNAME", l.Index)
	case l.Link < 0:
		return Link{}, fmt.Errorf("link %s: IFLA_LINK %d is not an interface index", l.Name, l.Link)
	}
	return l, nil
}

// decodeXDP decodes a nested IFLA_XDP (rtnl_xdp_fill): IFLA_XDP_ATTACHED
// (u8) and the u32 program ids.
func decodeXDP(b []byte) (XDP, error) {
	x := XDP{Reported: true}
	seen := false
	err := walk(b, func(t uint16, v []byte) error {
		var err error
		switch t {
		case unix.IFLA_XDP_ATTACHED:
			if len(v) != 1 {
				return fmt.Errorf("IFLA_XDP_ATTACHED is %d bytes, not 1", len(v))
			}
			if v[0] > XDPAttachedMulti {
				return fmt.Errorf("IFLA_XDP_ATTACHED %d is not an XDP_ATTACHED_ mode", v[0])
			}
			x.Attached, seen = v[0], true
		case unix.IFLA_XDP_PROG_ID:
			x.ProgID, err = u32("IFLA_XDP_PROG_ID", v)
		case unix.IFLA_XDP_DRV_PROG_ID:
			x.DrvProgID, err = u32("IFLA_XDP_DRV_PROG_ID", v)
		case unix.IFLA_XDP_SKB_PROG_ID:
			x.SKBProgID, err = u32("IFLA_XDP_SKB_PROG_ID", v)
		case unix.IFLA_XDP_HW_PROG_ID:
			x.HWProgID, err = u32("IFLA_XDP_HW_PROG_ID", v)
		}
		return err
	})
	switch {
	case err != nil:
		return XDP{}, fmt.Errorf("IFLA_XDP: %w", err)
	case !seen:
		return XDP{}, fmt.Errorf("IFLA_XDP has no IFLA_XDP_ATTACHED")
	}
	return x, nil
}

// decodeNSID decodes a recorded RTM_GETNSID reply: one RTM_NEWNSID
// message, struct rtgenmsg and NETNSA_NSID (linux/net_namespace.h); -1
// (NETNSA_NSID_NOT_ASSIGNED) when the namespace has no id for it.
func decodeNSID(b []byte) (int, error) {
	msgs, err := frames(b)
	if err != nil {
		return 0, err
	}
	if len(msgs) != 1 || msgs[0].typ != unix.RTM_NEWNSID {
		return 0, fmt.Errorf("not one RTM_NEWNSID (%d) message", unix.RTM_NEWNSID)
	}
	d := msgs[0].data
	if len(d) < rtgenmsgLen {
		return 0, fmt.Errorf("%d bytes, shorter than struct rtgenmsg", len(d))
	}
	id, has := 0, false
	err = walk(d[rtgenmsgLen:], func(typ uint16, v []byte) error {
		if typ != unix.NETNSA_NSID {
			return nil
		}
		x, err := u32("NETNSA_NSID", v)
		id, has = int(int32(x)), true
		return err
	})
	switch {
	case err != nil:
		return 0, err
	case !has:
		return 0, fmt.Errorf("no NETNSA_NSID")
	case id < -1:
		return 0, fmt.Errorf("NETNSA_NSID %d is not an id", id)
	}
	return id, nil
}

// walk calls fn with each attribute of b: its type, without the
// NLA_F_NESTED and NLA_F_NET_BYTEORDER bits, and its value.
func walk(b []byte, fn func(typ uint16, v []byte) error) error {
	for off := 0; off < len(b); {
		if len(b)-off < nlaHdrLen {
			return fmt.Errorf("attribute at byte %d: %d bytes, shorter than its header", off, len(b)-off)
		}
		n := int(native.Uint16(b[off:]))
		if n < nlaHdrLen || n > len(b)-off {
			return fmt.Errorf("attribute at byte %d: length %d does not fit the %d bytes left", off, n, len(b)-off)
		}
		if err := fn(native.Uint16(b[off+2:])&nlaTypeMask, b[off+nlaHdrLen:off+n]); err != nil {
			return err
		}
		off += (n + 3) &^ 3
	}
	return nil
}

// str decodes a NUL-terminated string attribute of at most max bytes
// with its NUL.
func str(name string, v []byte, max int) (string, error) {
	i := bytes.IndexByte(v, 0)
	switch {
	case i < 0:
		return "", fmt.Errorf("%s is not NUL-terminated", name)
	case i == 0:
		return "", fmt.Errorf("%s is empty", name)
	case i+1 > max:
		return "", fmt.Errorf("%s is %d bytes, more than %d", name, i+1, max)
	}
	s := string(v[:i])
	for _, c := range []byte(s) {
		if c < 0x20 || c == 0x7f {
			return "", fmt.Errorf("%s %q has a control byte", name, clip(s))
		}
	}
	return s, nil
}

// u32 decodes a 4-byte attribute.
func u32(name string, v []byte) (uint32, error) {
	if len(v) != 4 {
		return 0, fmt.Errorf("%s is %d bytes, not 4", name, len(v))
	}
	return native.Uint32(v), nil
}
