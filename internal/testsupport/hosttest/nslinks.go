package hosttest

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// NsLink is one interface of a recorded namespace (WriteNsLinks), as
// RTM_NEWLINK describes it.
type NsLink struct {
	Index int
	Name  string
	Kind  string // IFLA_INFO_KIND; "" for none
	Link  int    // IFLA_LINK; 0 for none
	// NetNSID is IFLA_LINK_NETNSID when HasNetNSID.
	NetNSID    int
	HasNetNSID bool
	ParentDev  string // IFLA_PARENT_DEV_NAME; "" for none
	ParentBus  string // IFLA_PARENT_DEV_BUS_NAME
	Flags      uint32 // ifi_flags
	// XDP is IFLA_XDP when non-nil: IFLA_XDP_ATTACHED, then, for one
	// mode, IFLA_XDP_PROG_ID and that mode's id as rtnl_xdp_fill sends
	// them.
	XDP *NsXDP
}

// NsXDP is a link's IFLA_XDP: XDP_ATTACHED_NONE (0), _DRV (1), _SKB
// (2), _HW (3), and the program's id.
type NsXDP struct {
	Attached uint8
	ProgID   int
}

// nlAttr appends a netlink attribute, padded to 4 bytes.
func nlAttr(b []byte, typ uint16, v []byte) []byte {
	var h [4]byte
	binary.NativeEndian.PutUint16(h[0:], uint16(4+len(v)))
	binary.NativeEndian.PutUint16(h[2:], typ)
	b = append(append(b, h[:]...), v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func nlU32(v int) []byte { return binary.NativeEndian.AppendUint32(nil, uint32(int32(v))) }

// nlMsg frames a payload as a recording holds it: nlmsghdr with
// sequence and port 0.
func nlMsg(b []byte, typ, flags uint16, payload []byte) []byte {
	var h [16]byte
	binary.NativeEndian.PutUint32(h[0:], uint32(16+len(payload)))
	binary.NativeEndian.PutUint16(h[4:], typ)
	binary.NativeEndian.PutUint16(h[6:], flags)
	b = append(append(b, h[:]...), payload...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// NsLinksBytes is an RTM_GETLINK dump of links as the kernel sends it
// (rtnl_fill_ifinfo: struct ifinfomsg, then IFLA_IFNAME, IFLA_LINK,
// IFLA_LINKINFO, IFLA_LINK_NETNSID, IFLA_PARENT_DEV_NAME/BUS_NAME,
// IFLA_XDP), each
// message NLM_F_MULTI.
func NsLinksBytes(links []NsLink) []byte {
	var out []byte
	for _, l := range links {
		p := make([]byte, 16) // ifinfomsg: AF_UNSPEC, ARPHRD_ETHER
		binary.NativeEndian.PutUint16(p[2:], 1)
		binary.NativeEndian.PutUint32(p[4:], uint32(l.Index))
		binary.NativeEndian.PutUint32(p[8:], l.Flags)
		p = nlAttr(p, 3, append([]byte(l.Name), 0)) // IFLA_IFNAME
		if l.Link != 0 {
			p = nlAttr(p, 5, nlU32(l.Link)) // IFLA_LINK
		}
		if l.Kind != "" {
			p = nlAttr(p, 18, nlAttr(nil, 1, append([]byte(l.Kind), 0))) // IFLA_LINKINFO{IFLA_INFO_KIND}
		}
		if l.HasNetNSID {
			p = nlAttr(p, 37, nlU32(l.NetNSID)) // IFLA_LINK_NETNSID
		}
		if l.ParentDev != "" {
			p = nlAttr(p, 56, append([]byte(l.ParentDev), 0)) // IFLA_PARENT_DEV_NAME
			p = nlAttr(p, 57, append([]byte(l.ParentBus), 0)) // IFLA_PARENT_DEV_BUS_NAME
		}
		if x := l.XDP; x != nil {
			v := nlAttr(nil, 2, []byte{x.Attached}) // IFLA_XDP_ATTACHED
			if x.Attached != 0 {
				v = nlAttr(v, 4, nlU32(x.ProgID))                    // IFLA_XDP_PROG_ID
				v = nlAttr(v, 4+uint16(x.Attached), nlU32(x.ProgID)) // IFLA_XDP_{DRV,SKB,HW}_PROG_ID
			}
			p = nlAttr(p, 43, v) // IFLA_XDP
		}
		out = nlMsg(out, 16, 2, p) // RTM_NEWLINK, NLM_F_MULTI
	}
	return out
}

// NsIDBytes is an RTM_GETNSID reply: RTM_NEWNSID with struct rtgenmsg
// and NETNSA_NSID.
func NsIDBytes(id int) []byte {
	return nlMsg(nil, 88, 0, nlAttr(make([]byte, 4), 1, nlU32(id)))
}

// WriteNsLinks records namespace inode's links, the id it gives the
// host's namespace, and which namespace is the host's, under root's
// irqnuma/netns, as a snapshot holds them.
func WriteNsLinks(t testing.TB, root string, inode uint64, hostNS string, hostID int, links []NsLink) {
	t.Helper()
	dir := filepath.Join(root, "irqnuma/netns", strconv.FormatUint(inode, 10))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		filepath.Join(dir, "links"):               NsLinksBytes(links),
		filepath.Join(dir, "init-nsid"):           NsIDBytes(hostID),
		filepath.Join(root, "irqnuma/netns/host"): []byte(hostNS + "\n"),
	} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
