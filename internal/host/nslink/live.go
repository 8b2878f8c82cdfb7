package nslink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// readLive asks the kernel for the links of the namespace process pid is
// in, from a route netlink socket made inside it, and for the id it
// gives the host's (hostNSPath); rec, when not nil, is handed each raw reply
// (or ".errno" file) by its file name. The namespace is opened through
// /proc/PID/ns/net and must still be inode ino (the process may have
// gone and its PID come back).
func readLive(fsys kfile.FS, pid int, ino uint64, rec func(name string, data []byte)) (*Links, error) {
	return readLiveAt(fsys, filepath.Join(fsys.Root(), "proc", strconv.Itoa(pid), "ns", "net"), ino, rec)
}

// readLiveAt is readLive for the namespace file nsPath (/proc/PID/ns/net
// or /proc/self/ns/net).
func readLiveAt(fsys kfile.FS, nsPath string, ino uint64, rec func(name string, data []byte)) (*Links, error) {
	ls := &Links{Namespace: fmt.Sprintf("net:[%d]", ino), Source: "netlink"}
	ns, err := openNS(nsPath, ino)
	if err != nil {
		ls.Links = unknown.NotAs[[]Link](unknown.KindFailed, err.Error())
		ls.InitNSID = unknown.NotAs[int](unknown.KindFailed, err.Error())
		return ls, nil
	}
	defer ns.Close()
	c, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{NetNS: int(ns.Fd())})
	if err != nil {
		why := fmt.Sprintf("a route netlink socket in %s: %v", ls.Namespace, err)
		ls.Links = unknown.NotAs[[]Link](unknown.KindFailed, why)
		ls.InitNSID = unknown.NotAs[int](unknown.KindFailed, why)
		return ls, nil
	}
	defer c.Close()
	b, err := ask(c, netlink.Message{Header: netlink.Header{Type: unix.RTM_GETLINK, Flags: netlink.Request | netlink.Dump},
		Data: make([]byte, ifinfomsgLen)}, fileLinks, rec)
	var links []Link
	if err == nil {
		if links, err = decodeLinks(b); err != nil {
			err = fmt.Errorf("RTM_GETLINK reply: %w", err)
		}
	}
	setLinks(ls, links, err)
	hostPath, _, err := hostNSPath(fsys)
	var init *os.File
	if err == nil {
		init, err = openNS(hostPath, 0)
	}
	id := 0
	if err == nil {
		defer init.Close()
		b, err = ask(c, nsidRequest(int(init.Fd())), fileInitNSID, rec)
		if err == nil {
			if id, err = decodeNSID(b); err != nil {
				err = fmt.Errorf("RTM_GETNSID reply: %w", err)
			}
		}
	}
	setInit(ls, id, err)
	return ls, nil
}

// nsidRequest is RTM_GETNSID for the namespace open at fd: struct
// rtgenmsg and NETNSA_FD.
func nsidRequest(fd int) netlink.Message {
	data := make([]byte, rtgenmsgLen+nlaHdrLen+4)
	native.PutUint16(data[rtgenmsgLen:], nlaHdrLen+4)
	native.PutUint16(data[rtgenmsgLen+2:], unix.NETNSA_FD)
	native.PutUint32(data[rtgenmsgLen+nlaHdrLen:], uint32(fd))
	return netlink.Message{Header: netlink.Header{Type: unix.RTM_GETNSID, Flags: netlink.Request}, Data: data}
}

// ask sends req and returns its reply framed as a recording holds it;
// rec is handed the recording, or name.errno with the errno.
func ask(c *netlink.Conn, req netlink.Message, name string, rec func(string, []byte)) ([]byte, error) {
	msgs, err := c.Execute(req)
	if err != nil {
		var errno unix.Errno
		if errors.As(err, &errno) {
			if rec != nil {
				rec(name+errnoSuffix, kfile.FormatErrno(errno))
			}
			return nil, fmt.Errorf("the kernel answered %s", kfile.ErrnoName(errno))
		}
		return nil, err
	}
	out := make([]message, 0, len(msgs))
	for _, m := range msgs {
		if m.Header.Type == netlink.Done {
			continue
		}
		out = append(out, message{typ: uint16(m.Header.Type), flags: uint16(m.Header.Flags), data: m.Data})
	}
	b := encode(out)
	if rec != nil {
		rec(name, b)
	}
	return b, nil
}

// openNS opens a namespace file; ino, when not 0, is the inode it must
// be.
func openNS(p string, ino uint64) (*os.File, error) {
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is gone: the process exited", p)
		}
		return nil, fmt.Errorf("open %s: %w", p, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", p, err)
	}
	if ino != 0 && st.Ino != ino {
		f.Close()
		return nil, fmt.Errorf("%s is now net:[%d], not net:[%d]: the process exited", p, st.Ino, ino)
	}
	return f, nil
}
