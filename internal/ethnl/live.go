package ethnl

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Live asks the running kernel: one generic netlink socket
// (mdlayher/genetlink's, which frames the genl header and checks each
// reply's sequence and port against the request) and one datagram
// socket for the ethtool ioctl, both opened on first use. Families are
// looked up with FamilyRequest through the same socket, not
// genetlink.GetFamily, so that the lookup is an answer like any other:
// recorded by a snapshot and replayed from it.
type Live struct {
	conn    *genetlink.Conn
	connErr error
	fd      int
	fdErr   error
	opened  bool
	guard   guarded
}

// NewLive is the running kernel's Asker; it opens nothing until asked.
func NewLive() *Live { return &Live{fd: -1} }

// Genl sends req and returns its reply's messages, or the errno.
func (a *Live) Genl(req Request) ([]Msg, error) {
	msgs, err := a.GenlRaw(req)
	if err != nil {
		return nil, errnoOf(err)
	}
	return msgs, nil
}

// GenlRaw is Genl with netlink's own error, which keeps the extended
// ack's message (a set's refusal says why in it).
func (a *Live) GenlRaw(req Request) ([]Msg, error) {
	if a.conn == nil && a.connErr == nil {
		a.conn, a.connErr = genetlink.Dial(nil)
		if a.conn != nil {
			// Extended acks and strict checking make an unknown
			// attribute an error rather than a silent no.
			_ = a.conn.SetOption(netlink.ExtendedAcknowledge, true)
			_ = a.conn.SetOption(netlink.GetStrictCheck, true)
		}
	}
	if a.connErr != nil {
		return nil, a.connErr
	}
	flags := netlink.Request
	if req.Dump {
		flags |= netlink.Dump
	}
	if req.Ack {
		flags |= netlink.Acknowledge
	}
	sent, err := a.conn.Send(genetlink.Message{
		Header: genetlink.Header{Command: req.Cmd, Version: req.Version},
		Data:   req.Attrs,
	}, req.Family, flags)
	if err != nil {
		return nil, err
	}
	gmsgs, nmsgs, err := a.conn.Receive()
	if err == nil {
		err = netlink.Validate(sent, nmsgs)
	}
	if err != nil {
		return nil, err
	}
	out := make([]Msg, 0, len(gmsgs))
	for i, m := range gmsgs {
		out = append(out, Msg{
			Type:    uint16(nmsgs[i].Header.Type),
			Flags:   uint16(nmsgs[i].Header.Flags),
			Cmd:     m.Header.Command,
			Version: m.Header.Version,
			Attrs:   m.Data,
		})
	}
	return out, nil
}

// errnoOf returns the errno inside a netlink error, or err.
func errnoOf(err error) error {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// ifreqData is struct ifreq with ifr_data set: the name, then the
// pointer, padded to the union's 24 bytes.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// Ioctl runs SIOCETHTOOL with req's buffer, in memory that ends at a
// guard page (see guarded).
func (a *Live) Ioctl(req IoctlRequest) ([]byte, error) {
	if !a.opened {
		a.opened = true
		a.fd, a.fdErr = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if a.fdErr != nil {
			a.fd = -1
		}
	}
	if a.fdErr != nil {
		return nil, a.fdErr
	}
	if len(req.IfName) >= unix.IFNAMSIZ || len(req.Buf) == 0 {
		return nil, unix.EINVAL
	}
	var ifr ifreqData
	copy(ifr.name[:], req.IfName)
	buf, err := a.guard.buffer(len(req.Buf))
	if err != nil {
		return nil, err
	}
	copy(buf, req.Buf)
	ifr.data = unsafe.Pointer(&buf[0])
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(a.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(&ifr)
	if e == unix.EFAULT {
		return nil, errWrotePast
	}
	if e != 0 {
		return nil, e
	}
	return bytes.Clone(buf), nil
}

// errWrotePast is the kernel answering with more than the request had
// room for: kernels before the December 2025 fix to net/ethtool/ioctl.c
// write as many names or statistics as the driver counts now, whatever
// count the request carried, so a channel change between two requests
// makes the answer longer than asked.
var errWrotePast = errors.New("the kernel's answer was longer than the request (the driver's counts changed between requests)")

// guarded is the buffer the ioctls are answered in: memory of its own
// (not Go's heap) whose end touches a page that may not be written, so
// a kernel that writes past the request faults there (EFAULT) instead
// of overwriting whatever the Go heap has after a slice. It is mapped
// once and grown when a request needs more.
type guarded struct {
	mem  []byte // the mapping; its last page is the guard
	size int    // the bytes before the guard
}

// buffer is n bytes ending at the guard page.
func (g *guarded) buffer(n int) ([]byte, error) {
	if n > g.size {
		if err := g.release(); err != nil {
			return nil, err
		}
		page := os.Getpagesize()
		size := (n + page - 1) / page * page
		mem, err := unix.Mmap(-1, 0, size+page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return nil, fmt.Errorf("map an ioctl buffer of %d bytes: %w", size+page, err)
		}
		if err := unix.Mprotect(mem[size:], unix.PROT_NONE); err != nil {
			_ = unix.Munmap(mem)
			return nil, fmt.Errorf("guard an ioctl buffer: %w", err)
		}
		g.mem, g.size = mem, size
	}
	return g.mem[g.size-n : g.size : g.size], nil
}

// release unmaps the buffer.
func (g *guarded) release() error {
	if g.mem == nil {
		return nil
	}
	err := unix.Munmap(g.mem)
	g.mem, g.size = nil, 0
	return err
}

// Where names an answer by its request.
func (a *Live) Where(dir, key string) string {
	if dir == KernelDir {
		return "the kernel's " + key + " reply"
	}
	return dir + "'s " + key + " reply"
}

// Close closes the sockets and unmaps the ioctl buffer.
func (a *Live) Close() error {
	var err error
	if a.conn != nil {
		err = a.conn.Close()
		a.conn = nil
	}
	if a.fd >= 0 {
		if e := unix.Close(a.fd); err == nil {
			err = e
		}
		a.fd = -1
	}
	if e := a.guard.release(); err == nil {
		err = e
	}
	return err
}
