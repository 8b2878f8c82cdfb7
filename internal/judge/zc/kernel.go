package zc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// The kernel's files this check reads (Documentation/admin-guide/sysctl/
// kernel.rst, proc(5)).
const (
	fileOSRelease  = "proc/sys/kernel/osrelease"
	fileIOURingOff = "proc/sys/kernel/io_uring_disabled"
	fileIOURingGID = "proc/sys/kernel/io_uring_group"
	fileSelfStatus = "proc/self/status"
)

// Version is a kernel's major and minor version.
type Version struct{ Major, Minor int }

// AtLeast reports whether v is w or later.
func (v Version) AtLeast(w Version) bool {
	return v.Major > w.Major || v.Major == w.Major && v.Minor >= w.Minor
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

var (
	// recvKernel merged io_uring zero-copy receive (IORING_REGISTER_ZCRX_IFQ).
	recvKernel = Version{6, 15}
	// sendKernel added IORING_OP_SEND_ZC.
	sendKernel = Version{6, 0}
)

// ParseRelease reads the version at the start of a kernel release as
// osrelease (uname -r) writes it: "6.18.44-fc-v857", "6.1.0-57-amd64",
// "4.19.97-gentoo", "6.15". Anything else is an error saying so.
func ParseRelease(s string) (Version, error) {
	bad := func(why string) (Version, error) {
		return Version{}, fmt.Errorf("kernel release %q: %s", s, why)
	}
	major, rest, ok := strings.Cut(s, ".")
	if !ok {
		return bad("no MAJOR.MINOR")
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if end < len(rest) && rest[end] != '.' && rest[end] != '-' && rest[end] != '+' && rest[end] != '_' {
		return bad("the minor version is not a number")
	}
	v := Version{}
	var err1, err2 error
	v.Major, err1 = small(major)
	v.Minor, err2 = small(rest[:end])
	if err1 != nil || err2 != nil {
		return bad("MAJOR.MINOR are not numbers")
	}
	return v, nil
}

// small parses a version number: 1 to 4 decimal digits.
func small(s string) (int, error) {
	if s == "" || len(s) > 4 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errors.New("not a version number")
	}
	return strconv.Atoi(s)
}

// readKernel reads the kernel's release once.
func (c *checker) readKernel() {
	s, err := c.fsys.String(c.fsys.Path(fileOSRelease))
	switch {
	case kfile.IsNotExist(err) && !c.fsys.Live():
		c.releaseKind, c.releaseWhy = unknown.KindNotCaptured, "not captured: the root has no /"+fileOSRelease
		return
	case err != nil:
		c.releaseKind, c.releaseWhy = unknown.KindFailed, err.Error()
		return
	}
	c.release = strings.TrimSpace(s)
	v, err := ParseRelease(c.release)
	if err != nil {
		c.releaseKind, c.releaseWhy = unknown.KindMalformed, kfile.Malformed(c.fsys.Path(fileOSRelease), err).Error()
		return
	}
	c.version = v
}

// versionKnown reports whether the kernel's version was read.
func (c *checker) versionKnown() bool { return c.version != (Version{}) }

func (c *checker) kernel(need Version) Prereq {
	what := "kernel " + need.String() + " or later"
	if c.o.Send {
		what += " (IORING_OP_SEND_ZC)"
	} else {
		what += " (io_uring zero-copy receive)"
	}
	if !c.versionKnown() {
		return notKnown(IDKernel, what, c.releaseKind, c.releaseWhy, "")
	}
	ev := "/" + fileOSRelease + ": " + c.release
	if c.version.AtLeast(need) {
		return holds(IDKernel, what, ev)
	}
	return fails(IDKernel, what, ev+", older than "+need.String(), "boot a kernel "+need.String()+" or later")
}

// ioURing judges kernel.io_uring_disabled (6.6+): 0 lets every process
// create rings, 1 only those with CAP_SYS_ADMIN or in the group
// kernel.io_uring_group (-1: none), 2 none
// (Documentation/admin-guide/sysctl/kernel.rst).
func (c *checker) ioURing() Prereq {
	const what = "io_uring enabled (kernel.io_uring_disabled)"
	fix := "sysctl -w kernel.io_uring_disabled=0"
	path := c.fsys.Path(fileIOURingOff)
	v, err := c.fsys.Int(path)
	switch {
	case kfile.IsNotExist(err) && !c.fsys.Live():
		return notKnown(IDIOURing, what, unknown.KindNotCaptured, "not captured: the root has no /"+fileIOURingOff, "")
	case kfile.IsNotExist(err):
		return notKnown(IDIOURing, what, unknown.KindKernel, "no /"+fileIOURingOff+": a kernel before 6.6 (io_uring on unless built without it) or one built without io_uring", "")
	case err != nil:
		return notKnown(IDIOURing, what, unknown.KindFailed, err.Error(), "")
	}
	ev := fmt.Sprintf("/%s: %d", fileIOURingOff, v)
	switch v {
	case 0:
		return holds(IDIOURing, what, ev+" (every process may create rings)")
	case 2:
		return fails(IDIOURing, what, ev+" (no process may create rings)", fix)
	case 1:
		return c.ioURingGroup(what, ev, fix)
	}
	return notKnown(IDIOURing, what, unknown.KindMalformed, ev+": not 0, 1 or 2", "")
}

// ioURingGroup is io_uring_disabled=1: CAP_SYS_ADMIN or the group.
func (c *checker) ioURingGroup(what, ev, fix string) Prereq {
	ev += " (only CAP_SYS_ADMIN"
	if gid, err := c.fsys.Int(c.fsys.Path(fileIOURingGID)); err == nil && gid >= 0 {
		ev += fmt.Sprintf(" or members of group %d, kernel.io_uring_group", gid)
	}
	ev += " may create rings)"
	if caps, ok := c.caps(); ok && caps&(1<<capSysAdmin) != 0 {
		return holds(IDIOURing, what, ev+"; this process has CAP_SYS_ADMIN")
	}
	return notKnown(IDIOURing, what, unknown.KindNotApplicable, ev+"; whether the application may is its own", fix)
}

// The capability bits (include/uapi/linux/capability.h).
const (
	capNetAdmin = 12
	capSysAdmin = 21
)

// parseCapEff returns the effective capability set from the text of
// /proc/PID/status ("CapEff:\t000001ffffffffff").
func parseCapEff(b []byte) (uint64, error) {
	for _, line := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(line, "CapEff:")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) == 0 || len(v) > 16 {
			return 0, fmt.Errorf("CapEff %q: want 1 to 16 hex digits", v)
		}
		return strconv.ParseUint(v, 16, 64)
	}
	return 0, errors.New("no CapEff line")
}

// caps are this process's effective capabilities on the live host; false
// on a captured root (they would be the capture's, not the caller's).
func (c *checker) caps() (uint64, bool) {
	if !c.fsys.Live() {
		return 0, false
	}
	b, err := c.fsys.Read(c.fsys.Path(fileSelfStatus))
	if err != nil {
		return 0, false
	}
	v, err := parseCapEff(b)
	return v, err == nil
}

// capNetAdmin: registering a zero-copy receive queue needs CAP_NET_ADMIN
// (io_uring/zcrx.c, io_register_zcrx_ifq).
func (c *checker) capNetAdmin() Prereq {
	const what = "CAP_NET_ADMIN (to register the zero-copy queue)"
	if !c.fsys.Live() {
		return notKnown(IDCapNetAdm, what, unknown.KindNotCaptured, "not captured: capabilities are the running application's, not the capture's", "")
	}
	b, err := c.fsys.Read(c.fsys.Path(fileSelfStatus))
	if err != nil {
		return notKnown(IDCapNetAdm, what, unknown.KindFailed, err.Error(), "")
	}
	caps, err := parseCapEff(b)
	if err != nil {
		return notKnown(IDCapNetAdm, what, unknown.KindMalformed, kfile.Malformed(c.fsys.Path(fileSelfStatus), err).Error(), "")
	}
	ev := fmt.Sprintf("CapEff %016x of this process", caps)
	if caps&(1<<capNetAdmin) != 0 {
		return holds(IDCapNetAdm, what, ev+" has CAP_NET_ADMIN")
	}
	return fails(IDCapNetAdm, what, ev+" lacks CAP_NET_ADMIN", "run the application as root or give it the capability: setcap cap_net_admin+ep PROGRAM")
}
