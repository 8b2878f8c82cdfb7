// Package nslink reads the network interfaces of a process's network
// namespace over rtnetlink: each link's index, name, kind (veth,
// macvlan, ipvlan, …), the link it sits on (IFLA_LINK, and the namespace
// that link is in, IFLA_LINK_NETNSID) and the device it belongs to
// (IFLA_PARENT_DEV_NAME and _BUS_NAME: an SR-IOV VF's PCI function), with
// the id the namespace gives the host's (RTM_GETNSID), so that an
// interface can be followed out of a container to the host.
//
// sysfs shows only the namespace it was mounted in, so another
// namespace's links are not files: on the live root they are asked of
// the kernel from a socket made inside the namespace (mdlayher/netlink's
// Config.NetNS), and the raw replies can be handed to Record's caller; a
// captured root keeps them under irqnuma/netns/INODE/ (the namespace's
// inode, as /proc/PID/ns/net names it) and Read decodes them again, so a
// snapshot reads as the live host did. Every reply is decoded here
// against the kernel's uapi (linux/rtnetlink.h, linux/if_link.h,
// linux/net_namespace.h), bounded and fuzzed.
package nslink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"golang.org/x/sys/unix"
)

// RecordDir is where a root keeps the recorded replies, relative to it:
// RecordDir/INODE/links and RecordDir/INODE/init-nsid, or the same name
// with ".errno" holding the errno the request got.
const RecordDir = "irqnuma/netns"

// The recorded files of one namespace.
const (
	fileLinks    = "links"
	fileInitNSID = "init-nsid"
	errnoSuffix  = ".errno"
)

// maxReply bounds one recorded reply: a host with thousands of
// interfaces dumps a few MB.
const maxReply = 16 << 20

// Link is one interface of a namespace as RTM_NEWLINK describes it.
type Link struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	// Kind is IFLA_INFO_KIND ("veth", "macvlan", "ipvlan", "bridge"); ""
	// for a device with no link ops (a physical NIC, a VF, lo).
	Kind string `json:"kind"`
	// Link is IFLA_LINK, the index of the interface it sits on (a veth's
	// peer, a macvlan's lower device); 0 when it sits on none.
	Link int `json:"link"`
	// LinkNetNSID is IFLA_LINK_NETNSID, the id (in this namespace's
	// table) of the namespace Link is in; not applicable when the
	// kernel sent none: Link is then in this namespace.
	LinkNetNSID unknown.Value[int] `json:"link_netnsid"`
	// ParentDev and ParentBus are IFLA_PARENT_DEV_NAME and
	// IFLA_PARENT_DEV_BUS_NAME ("0000:3b:02.1", "pci"): the device the
	// interface belongs to; "" when it has none or the kernel (before
	// 5.17) does not send them.
	ParentDev string `json:"parent_dev"`
	ParentBus string `json:"parent_bus"`
	// Flags are ifi_flags (IFF_UP, IFF_LOOPBACK, …).
	Flags uint32 `json:"flags"`
	// XDP is IFLA_XDP: the XDP programs attached to the interface.
	XDP XDP `json:"xdp"`
}

// MarshalJSON writes the unknown values' reasons beside them.
func (l Link) MarshalJSON() ([]byte, error) {
	type plain Link
	return unknown.MarshalObject(plain(l))
}

// UnmarshalJSON restores the unknown values' reasons.
func (l *Link) UnmarshalJSON(b []byte) error {
	type plain Link
	return unknown.UnmarshalObject(b, (*plain)(l))
}

// inThisNamespace is the LinkNetNSID of a link the kernel sent none for.
var inThisNamespace = unknown.NotAs[int](unknown.KindNotApplicable, "no IFLA_LINK_NETNSID: its link is in this namespace")

// XDP modes of IFLA_XDP_ATTACHED (enum in linux/if_link.h: "These are
// stored into IFLA_XDP_ATTACHED on dump").
const (
	XDPAttachedNone  = 0 // XDP_ATTACHED_NONE
	XDPAttachedDrv   = 1 // XDP_ATTACHED_DRV: driver (native) mode
	XDPAttachedSKB   = 2 // XDP_ATTACHED_SKB: generic mode
	XDPAttachedHW    = 3 // XDP_ATTACHED_HW: offloaded to the NIC
	XDPAttachedMulti = 4 // XDP_ATTACHED_MULTI: more than one mode
)

// XDP is a link's nested IFLA_XDP attribute as rtnl_xdp_fill sends it.
type XDP struct {
	// Reported is false when the kernel sent no IFLA_XDP (it always
	// does since 4.8, so false means an old kernel or a short reply):
	// whether a program is attached is then unknown.
	Reported bool `json:"reported"`
	// Attached is IFLA_XDP_ATTACHED, one of XDPAttachedNone…Multi.
	Attached uint8 `json:"attached"`
	// ProgID is IFLA_XDP_PROG_ID, sent when exactly one mode has a
	// program; DrvProgID, SKBProgID and HWProgID are
	// IFLA_XDP_DRV/SKB/HW_PROG_ID, the program of each mode; 0 when
	// not sent.
	ProgID    uint32 `json:"prog_id"`
	DrvProgID uint32 `json:"drv_prog_id"`
	SKBProgID uint32 `json:"skb_prog_id"`
	HWProgID  uint32 `json:"hw_prog_id"`
}

// Mode names Attached as ip(8) does: "none", "driver" (xdpdrv),
// "generic" (xdpgeneric), "offload" (xdpoffload), "multi".
func (x XDP) Mode() string {
	switch x.Attached {
	case XDPAttachedNone:
		return "none"
	case XDPAttachedDrv:
		return "driver"
	case XDPAttachedSKB:
		return "generic"
	case XDPAttachedHW:
		return "offload"
	case XDPAttachedMulti:
		return "multi"
	}
	return fmt.Sprintf("mode %d", x.Attached)
}

// Loopback reports whether the link is a loopback device.
func (l Link) Loopback() bool { return l.Flags&unix.IFF_LOOPBACK != 0 }

// Links is what a namespace's links are, or why they are unknown.
type Links struct {
	// Namespace is "net:[INODE]" as /proc/PID/ns/net names it.
	Namespace string
	// Links are its interfaces; unknown when they could not be read,
	// the reason's detail saying why in words.
	Links unknown.Value[[]Link]
	// InitNSID is the id this namespace gives the host's namespace
	// (HostNamespace), which a LinkNetNSID equal to it names; unknown
	// when none could be had (its reason's detail says why in words):
	// no link's peer is then known to be the host's.
	InitNSID unknown.Value[int]
	// Source is "netlink" on the live root, "recorded" on a captured one.
	Source string
}

// ByIndex returns the link with index i.
func (ls *Links) ByIndex(i int) (Link, bool) {
	for _, l := range ls.Links.Or(nil) {
		if l.Index == i {
			return l, true
		}
	}
	return Link{}, false
}

// ByName returns the link named name.
func (ls *Links) ByName(name string) (Link, bool) {
	for _, l := range ls.Links.Or(nil) {
		if l.Name == name {
			return l, true
		}
	}
	return Link{}, false
}

// InHost reports whether l's Link is an interface of the host's
// namespace (HostNamespace).
func (ls *Links) InHost(l Link) bool {
	return unknown.Same(l.LinkNetNSID, ls.InitNSID)
}

// ErrBadNamespace is wrapped by the error for a namespace name that is
// not "net:[INODE]".
var ErrBadNamespace = errors.New("not a network namespace link")

// Inode returns the inode of a namespace named as /proc/PID/ns/net's
// link reads ("net:[4026532281]").
func Inode(ns string) (uint64, error) {
	v, ok := strings.CutPrefix(ns, "net:[")
	v, ok2 := strings.CutSuffix(v, "]")
	if !ok || !ok2 {
		return 0, fmt.Errorf("%q: %w", clip(ns), ErrBadNamespace)
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%q: %w", clip(ns), ErrBadNamespace)
	}
	return n, nil
}

// Read returns the links of the network namespace ns ("net:[INODE]")
// that process pid is in: asked of the kernel on the live root, read
// from the root's RecordDir otherwise. What cannot be had is
// Links.Known false with why, never an error; only a namespace name that
// is not one is.
func Read(fsys kfile.FS, pid int, ns string) (*Links, error) {
	ino, err := Inode(ns)
	if err != nil {
		return nil, err
	}
	if fsys.Live() {
		return readLive(fsys, pid, ino, nil)
	}
	return readRecorded(fsys, ino), nil
}

// Record reads the links of pid's namespace ns on the live root as Read
// does and hands each raw reply (or the errno it got) to put, under the
// path relative to the root that Read reads it back from.
func Record(fsys kfile.FS, pid int, ns string, put func(rel string, data []byte) error) (*Links, error) {
	if !fsys.Live() {
		return nil, fmt.Errorf("record the links of %s: %s is not the live root", ns, fsys.Root())
	}
	ino, err := Inode(ns)
	if err != nil {
		return nil, err
	}
	var putErr error
	ls, err := readLive(fsys, pid, ino, func(name string, data []byte) {
		if putErr == nil {
			putErr = put(filepath.Join(RecordDir, strconv.FormatUint(ino, 10), name), data)
		}
	})
	if err != nil {
		return nil, err
	}
	return ls, putErr
}

// readRecorded reads a namespace's recorded replies.
func readRecorded(fsys kfile.FS, ino uint64) *Links {
	dir := filepath.Join(fsys.Root(), RecordDir, strconv.FormatUint(ino, 10))
	ls := &Links{Namespace: fmt.Sprintf("net:[%d]", ino), Source: "recorded"}
	b, err := recorded(fsys, dir, fileLinks)
	var links []Link
	if err == nil {
		if links, err = decodeLinks(b); err != nil {
			err = kfile.Malformed(filepath.Join(dir, fileLinks), err)
		}
	}
	setLinks(ls, links, err)
	b, err = recorded(fsys, dir, fileInitNSID)
	id := 0
	if err == nil {
		if id, err = decodeNSID(b); err != nil {
			err = kfile.Malformed(filepath.Join(dir, fileInitNSID), err)
		}
	}
	setInit(ls, id, err)
	return ls
}

// recorded reads dir/name, or the errno dir/name.errno holds.
func recorded(fsys kfile.FS, dir, name string) ([]byte, error) {
	b, err := fsys.ReadLimit(filepath.Join(dir, name), maxReply)
	if !kfile.IsNotExist(err) {
		return b, err
	}
	eb, eerr := fsys.ReadLimit(filepath.Join(dir, name+errnoSuffix), 64)
	if kfile.IsNotExist(eerr) {
		return nil, fmt.Errorf("%s not captured", filepath.Join(dir, name))
	}
	if eerr != nil {
		return nil, eerr
	}
	errno, perr := kfile.ParseErrno(eb)
	if perr != nil {
		return nil, kfile.Malformed(filepath.Join(dir, name+errnoSuffix), perr)
	}
	return nil, fmt.Errorf("the kernel answered %s", kfile.ErrnoName(errno))
}

// setLinks records the outcome of reading the links.
func setLinks(ls *Links, links []Link, err error) {
	switch {
	case errors.Is(err, kfile.ErrFileParse):
		ls.Links = unknown.NotAs[[]Link](unknown.KindMalformed, "its links: "+err.Error())
	case errors.Is(err, os.ErrPermission):
		ls.Links = unknown.NotAs[[]Link](unknown.KindPermission, "its links: "+err.Error())
	case err != nil:
		ls.Links = unknown.NotAs[[]Link](unknown.KindFailed, "its links: "+err.Error())
	default:
		ls.Links = unknown.Of(links)
	}
}

// setInit records the outcome of asking PID 1's namespace's id.
func setInit(ls *Links, id int, err error) {
	switch {
	case err != nil:
		ls.InitNSID = unknown.NotAs[int](unknown.KindFailed, "the id it gives the host's namespace: "+err.Error())
	case id < 0:
		ls.InitNSID = unknown.NotAs[int](unknown.KindNotReported, "it gives the host's namespace no id (NETNSA_NSID_NOT_ASSIGNED): none of its links is on the host's side")
	default:
		ls.InitNSID = unknown.Of(id)
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
