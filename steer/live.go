package steer

import (
	"errors"
	"runtime"
	"unsafe"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// liveAsker asks the running kernel: one generic netlink socket
// (mdlayher/genetlink's, which frames the genl header and checks each
// reply's sequence and port against the request) and one datagram
// socket for the ethtool ioctl, both opened on first use. Families are
// looked up with steer's own CTRL_CMD_GETFAMILY request through the same
// socket, not genetlink.GetFamily, so that the lookup is an answer like
// any other: recorded by a snapshot and replayed from it.
type liveAsker struct {
	conn    *genetlink.Conn
	connErr error
	fd      int
	fdErr   error
	opened  bool
}

func newLiveAsker() *liveAsker { return &liveAsker{fd: -1} }

func (a *liveAsker) genl(req genlRequest) ([]genlMsg, error) {
	msgs, err := a.genlRaw(req)
	if err != nil {
		return nil, errnoOf(err)
	}
	return msgs, nil
}

// genlRaw is genl with netlink's own error, which keeps the extended
// ack's message (a set's refusal says why in it).
func (a *liveAsker) genlRaw(req genlRequest) ([]genlMsg, error) {
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
	if req.dump {
		flags |= netlink.Dump
	}
	if req.ack {
		flags |= netlink.Acknowledge
	}
	sent, err := a.conn.Send(genetlink.Message{
		Header: genetlink.Header{Command: req.cmd, Version: req.version},
		Data:   req.attrs,
	}, req.family, flags)
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
	out := make([]genlMsg, 0, len(gmsgs))
	for i, m := range gmsgs {
		out = append(out, genlMsg{
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

func (a *liveAsker) ioctl(req ioctlRequest) ([]byte, error) {
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
	if len(req.ifname) >= unix.IFNAMSIZ || len(req.buf) == 0 {
		return nil, unix.EINVAL
	}
	var ifr ifreqData
	copy(ifr.name[:], req.ifname)
	buf := make([]byte, len(req.buf))
	copy(buf, req.buf)
	ifr.data = unsafe.Pointer(&buf[0])
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(a.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(&ifr)
	runtime.KeepAlive(buf)
	if e != 0 {
		return nil, e
	}
	return buf, nil
}

func (a *liveAsker) where(dir, key string) string {
	if dir == kernelDir {
		return "the kernel's " + key + " reply"
	}
	return dir + "'s " + key + " reply"
}

func (a *liveAsker) close() error {
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
	return err
}
