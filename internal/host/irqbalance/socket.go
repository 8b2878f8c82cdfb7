package irqbalance

// The daemon's Unix socket, as irqbalance.c makes and answers it. Read
// in irqbalance's own source (github.com/Irqbalance/irqbalance,
// irqbalance.c: init_socket, sock_handle, get_irq_data; irqbalance.h:
// SOCKET_PATH, SOCKET_TMPFS; classify.c: add_banned_irq; bitmap.c:
// bitmap_scnprintf; ui/irqbalance-ui.c: the client), at master cd9212f
// (March 2026, after v1.9.5) and at the tags v1.9.2 (Debian bookworm's
// 1.9.2-1) and v1.9.4 (Debian trixie's 1.9.4-1). The three make and
// answer the socket alike but for the command buffer: 500 bytes up to
// v1.9.3, a longer command silently cut; 16384 from v1.9.4, a longer one
// refused.
//
// Address (init_socket): a SOCK_STREAM AF_UNIX socket bound to the file
// /run/irqbalance/irqbalance<PID>.sock, in the folder systemd makes for
// the unit (RuntimeDirectory=irqbalance/ in upstream's and Debian's
// irqbalance.service). Where that bind fails (no such folder: a daemon
// started by hand, or by a unit without it) it binds the abstract
// address whose sun_path is all NUL, bound with the length of the whole
// struct sockaddr_un (110): a NUL, then a name of 107 NULs. irqbalance-ui
// connects the same way, the file first. An abstract address lives in
// the daemon's network namespace (upstream's unit, unlike Debian's, has
// PrivateNetwork=yes, but also the runtime folder). Versions before
// 1.5.0 (2018) bound an abstract address only, named by mistake as
// strlen("irqbalance<PID>.sock") NULs; irqnuma does not look for it.
// There is a socket only when irqbalance was built with its UI
// (HAVE_IRQBALANCEUI); Debian's is (it ships irqbalance-ui).
//
// Credentials (sock_handle): the listening socket has SO_PASSCRED; each
// connection is accepted, one message is read with recvmsg, and the
// connection is closed without a word unless that message's first
// control message is SCM_CREDENTIALS with uid 0. Only root is answered;
// anyone else reads an empty reply.
//
// Commands, by the message's prefix, one per connection; the daemon
// closes the connection after its reply, or at once for a command that
// has none:
//
//   - "setup": replies "SLEEP <interval> ", then "IRQ <n> LOAD <load> DIFF
//     <count change> CLASS <class> " for each IRQ of its list of banned
//     IRQs (cl_banned_irqs: its --banirq IRQs and those banned over the
//     socket since, in the order they were added, each once), then
//     "BANNED <mask>": the CPUs it bans (banned_cpus) as
//     cpumask_scnprintf prints them, 32-bit words of 8 lower-case hex
//     digits separated by commas, the leading zero words left out
//     ("00000000" for none), in a buffer of 512 bytes (a mask of 511
//     characters is cut). The entries of the list are not IRQs it
//     balances, so their LOAD, DIFF and CLASS are 0.
//   - "settings ban irqs <list>": replaces that list, its --banirq IRQs
//     too, with the IRQs of <list>, read by strtoul one after another
//     until one reads as 0: IRQ 0 counts only first, and a word that is
//     not a number ends the list (or, first, bans IRQ 0). A list starting
//     "NONE" empties it. No reply. The daemon rebuilds its view of the
//     IRQs at its next scan (need_rescan), moving none in that scan, and
//     from then on leaves the listed IRQs where they are.
//   - "settings cpus <list>": bans the CPUs of a CPU list (its first word,
//     parsed at the next scan) instead of those its environment or
//     isolcpus and nohz_full ban; "NULL" goes back to those. No reply.
//   - "settings sleep <n>": sets the interval, in seconds (n >= 1). No
//     reply.
//   - "stats": replies "TYPE <t> NUMBER <n> LOAD <l> SAVE_MODE <s> " for
//     each object of its CPU tree, each followed by the "IRQ ..." words
//     of the IRQs on it. irqnuma does not ask it.
//
// None of it outlives the daemon: a restart starts again from its
// command line and environment, so a ban made over the socket is gone
// with it.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/host/proc"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// SocketDir is the folder of the daemon's socket file (SOCKET_TMPFS).
const SocketDir = "/run/irqbalance"

// AbstractAddr is the abstract address a daemon binds when it cannot
// bind its file, as Go's net package names it: "@" for the leading NUL,
// then the 107 NULs of the name.
var AbstractAddr = "@" + strings.Repeat("\x00", 107)

// MaxCommand is the longest command every version takes whole: up to
// v1.9.3 the daemon reads 500 bytes and silently acts on a longer
// command cut there.
const MaxCommand = 499

// DefaultTimeout bounds one exchange with the daemon: it answers from
// its main loop, between scans that take milliseconds.
const DefaultTimeout = 2 * time.Second

// maxReply bounds a reply read: a setup reply is about 60 bytes a banned
// IRQ, and a host has at most a few tens of thousands of IRQs.
const maxReply = 8 << 20

// Runtime is what a running irqbalance said of itself over its socket
// (`setup`): what it bans now, which is more than its command line when
// a client (irqbalance-ui, irqnuma) banned IRQs at run time.
type Runtime struct {
	PID int // the daemon asked
	// Start is its /proc/PID/stat start time (field 22): with PID it
	// names the daemon, whose runtime bans die with it.
	Start uint64
	// Socket is the address it answered at: its file, or AbstractAddr.
	Socket string
	Sleep  int // seconds between its scans
	// BannedIRQs is its list of banned IRQs, ascending: its --banirq
	// IRQs and those banned over the socket since it started.
	BannedIRQs []int
	// BannedCPUs are the CPUs it bans now.
	BannedCPUs cpuset.Set
}

// SocketName says an address as messages show it: the file, or
// "the abstract socket" for AbstractAddr.
func SocketName(addr string) string {
	if addr == AbstractAddr {
		return "the abstract socket (a name of 107 NULs)"
	}
	return addr
}

// Socket asks a running irqbalance one command over its Unix socket.
// The zero Socket is the daemon's own on the running machine.
type Socket struct {
	// Addr, when set, is the address to connect to whatever the daemon's
	// PID ("@name" for an abstract one): a test's daemon. When "", it is
	// the daemon's own (Addr), and the peer must be that PID.
	Addr string
	// Timeout bounds each exchange; 0 is DefaultTimeout.
	Timeout time.Duration
}

// ErrRefused says the daemon closed the connection without a reply to a
// command that has one: it answers only uid 0 (sock_handle).
var ErrRefused = errors.New("irqbalance closed the connection without a reply: it answers only root (uid 0)")

// addr returns the address of the socket of the daemon pid: the one the
// Socket names, else its file under the root when there is one, else the
// abstract address, which is only reachable from the daemon's network
// namespace (as this thread's, /proc/thread-self/ns/net, must be).
func (s Socket) addr(fsys kfile.FS, pid int) (string, error) {
	if s.Addr != "" {
		return s.Addr, nil
	}
	file := fsys.Path(SocketDir, fmt.Sprintf("irqbalance%d.sock", pid))
	fi, err := fsys.Lstat(file)
	switch {
	case err == nil && fi.Mode().Type() == os.ModeSocket:
		return file, nil
	case err == nil:
		return "", fmt.Errorf("%s is not a socket (%v)", file, fi.Mode().Type())
	case !kfile.IsNotExist(err):
		return "", err
	}
	own, err := fsys.Readlink(fsys.Path("proc/thread-self/ns/net"))
	if err != nil {
		return "", fmt.Errorf("no %s, and irqnuma's network namespace is unknown: %w", file, err)
	}
	its, err := fsys.Readlink(fsys.Path("proc", strconv.Itoa(pid), "ns/net"))
	if err != nil {
		return "", fmt.Errorf("no %s, and irqbalance's network namespace is unknown: %w", file, err)
	}
	if own != its {
		return "", fmt.Errorf("no %s, and irqbalance (PID %d) is in another network namespace (%s, not %s), where its abstract socket is", file, pid, its, own)
	}
	return AbstractAddr, nil
}

// Ask sends cmd to the daemon pid over its socket (see addr), with root's
// credentials as irqbalance-ui sends them, and returns its reply (empty
// for a command that has none) and the address it was sent to. Unless
// the Socket names its address, the socket's owner must be pid
// (SO_PEERCRED), so a file left by another daemon is never spoken to.
func (s Socket) Ask(fsys kfile.FS, pid int, cmd string) ([]byte, string, error) {
	addr, err := s.addr(fsys, pid)
	if err != nil {
		return nil, "", err
	}
	if len(cmd) > MaxCommand {
		return nil, addr, fmt.Errorf("irqbalance command of %d bytes: past the %d a daemon before v1.9.4 reads whole", len(cmd), MaxCommand)
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	reply, err := s.exchange(addr, pid, cmd, timeout)
	if err != nil {
		return nil, addr, fmt.Errorf("irqbalance socket %s: %w", SocketName(addr), err)
	}
	return reply, addr, nil
}

// exchange connects to addr, sends cmd in one message with credentials,
// and reads the reply until the daemon closes the connection.
func (s Socket) exchange(addr string, pid int, cmd string, timeout time.Duration) ([]byte, error) {
	d := net.Dialer{Timeout: timeout}
	c, err := d.Dial("unix", addr)
	if err != nil {
		return nil, err
	}
	conn := c.(*net.UnixConn)
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	if s.Addr == "" {
		if err := checkPeer(conn, pid); err != nil {
			return nil, err
		}
	}
	cred := unix.UnixCredentials(&unix.Ucred{Pid: int32(os.Getpid()), Uid: uint32(os.Geteuid()), Gid: uint32(os.Getegid())})
	n, _, err := conn.WriteMsgUnix([]byte(cmd), cred, nil)
	if err != nil {
		return nil, fmt.Errorf("send %q: %w", clipCmd(cmd), err)
	}
	if n != len(cmd) {
		return nil, fmt.Errorf("send %q: %d of %d bytes sent", clipCmd(cmd), n, len(cmd))
	}
	reply, err := io.ReadAll(io.LimitReader(conn, maxReply+1))
	if err != nil {
		return nil, fmt.Errorf("read the reply to %q: %w", clipCmd(cmd), err)
	}
	if len(reply) > maxReply {
		return nil, fmt.Errorf("the reply to %q is over %d bytes", clipCmd(cmd), maxReply)
	}
	return reply, nil
}

// checkPeer checks that the socket's owner (the process that listened
// on it) is pid.
func checkPeer(conn *net.UnixConn, pid int) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		cred, gerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if gerr != nil {
		return fmt.Errorf("SO_PEERCRED: %w", gerr)
	}
	if int(cred.Pid) != pid {
		return fmt.Errorf("served by PID %d, not irqbalance's %d", cred.Pid, pid)
	}
	return nil
}

// Setup asks the daemon pid `setup` and decodes its reply.
func (s Socket) Setup(fsys kfile.FS, pid int) (Runtime, error) {
	reply, addr, err := s.Ask(fsys, pid, "setup")
	if err != nil {
		return Runtime{}, err
	}
	if len(reply) == 0 {
		return Runtime{}, fmt.Errorf("irqbalance socket %s: %w", SocketName(addr), ErrRefused)
	}
	rt, err := ParseSetup(reply)
	if err != nil {
		return Runtime{}, fmt.Errorf("irqbalance socket %s: %w", SocketName(addr), err)
	}
	rt.PID, rt.Socket = pid, addr
	return rt, nil
}

// BanIRQs sends `settings ban irqs` with irqs, which replaces the daemon's
// list of banned IRQs (its --banirq IRQs too): ascending, so that IRQ 0,
// which ends the daemon's list anywhere else, comes first; "NONE" for no
// IRQ. It returns the command sent.
func (s Socket) BanIRQs(fsys kfile.FS, pid int, irqs []int) (string, error) {
	cmd := BanCommand(irqs)
	reply, addr, err := s.Ask(fsys, pid, cmd)
	if err != nil {
		return cmd, err
	}
	if len(reply) > 0 {
		return cmd, fmt.Errorf("irqbalance socket %s: a reply to %q, which has none: %q", SocketName(addr), clipCmd(cmd), clipCmd(string(reply)))
	}
	return cmd, nil
}

// BanCommand is the `settings ban irqs` command that makes irqs the
// daemon's whole list of banned IRQs (see BanIRQs).
func BanCommand(irqs []int) string {
	list := slices.Clone(irqs)
	slices.Sort(list)
	list = slices.Compact(list)
	if len(list) == 0 {
		return "settings ban irqs NONE"
	}
	var b strings.Builder
	b.WriteString("settings ban irqs")
	for _, n := range list {
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// ErrSetup is wrapped by every error of ParseSetup.
var ErrSetup = errors.New("not irqbalance's setup reply")

// ParseSetup decodes the daemon's reply to `setup` strictly, as
// sock_handle prints it: "SLEEP %d ", "IRQ %d LOAD %lu DIFF %lu CLASS
// %d " per banned IRQ, "BANNED " and the mask of banned CPUs. An IRQ
// listed twice (add_banned_irq lists each once) or a mask irqbalance's
// 512-byte buffer cut is an error.
func ParseSetup(b []byte) (Runtime, error) {
	fail := func(format string, args ...any) (Runtime, error) {
		return Runtime{}, fmt.Errorf("%w: %s", ErrSetup, fmt.Sprintf(format, args...))
	}
	words := strings.Split(string(b), " ")
	if len(words) < 4 || words[0] != "SLEEP" {
		return fail("%q does not start with SLEEP and end with BANNED and a mask", clipCmd(string(b)))
	}
	var rt Runtime
	sleep, err := strconv.Atoi(words[1])
	if err != nil || sleep < 1 || words[1] != strconv.Itoa(sleep) {
		return fail("SLEEP %q: not an interval in seconds", clipCmd(words[1]))
	}
	rt.Sleep = sleep
	i := 2
	seen := map[int]bool{}
	for i < len(words) && words[i] == "IRQ" {
		irq, err := parseIRQEntry(words[i:])
		if err != nil {
			return fail("entry %d: %v", len(seen)+1, err)
		}
		if seen[irq] {
			return fail("IRQ %d is listed twice", irq)
		}
		seen[irq] = true
		rt.BannedIRQs = append(rt.BannedIRQs, irq)
		i += 8
	}
	if i+2 != len(words) || words[i] != "BANNED" {
		return fail("after %d banned IRQs: want BANNED and a mask, at the end", len(seen))
	}
	mask := words[i+1]
	if len(mask) >= 511 {
		return fail("a mask of %d characters: irqbalance's 512-byte buffer cut it", len(mask))
	}
	for g := range strings.SplitSeq(mask, ",") {
		if len(g) != 8 || strings.Trim(g, "0123456789abcdef") != "" {
			return fail("BANNED %q: not 32-bit words of 8 lower-case hex digits", clipCmd(mask))
		}
	}
	if rt.BannedCPUs, err = cpuset.ParseMask(mask); err != nil {
		return fail("BANNED: %v", err)
	}
	slices.Sort(rt.BannedIRQs)
	return rt, nil
}

// parseIRQEntry reads "IRQ n LOAD l DIFF d CLASS c" from the start of w,
// which must be followed by more words (the BANNED at the end).
func parseIRQEntry(w []string) (int, error) {
	if len(w) < 9 || w[2] != "LOAD" || w[4] != "DIFF" || w[6] != "CLASS" {
		return 0, errors.New("not IRQ n LOAD l DIFF d CLASS c")
	}
	irq, err := decimal(w[1], 31)
	if err != nil {
		return 0, fmt.Errorf("IRQ %q: %v", clipCmd(w[1]), err)
	}
	for _, k := range []int{3, 5} {
		if _, err := decimal(w[k], 64); err != nil {
			return 0, fmt.Errorf("IRQ %d %s %q: %v", irq, w[k-1], clipCmd(w[k]), err)
		}
	}
	if _, err := decimal(strings.TrimPrefix(w[7], "-"), 31); err != nil {
		return 0, fmt.Errorf("IRQ %d CLASS %q: %v", irq, clipCmd(w[7]), err)
	}
	return int(irq), nil
}

// decimal parses an unsigned decimal of at most bits bits as printf's %d
// and %lu print one: no sign, no leading zero.
func decimal(s string, bits int) (uint64, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') || strings.Trim(s, "0123456789") != "" {
		return 0, errors.New("not a decimal number")
	}
	n, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		return 0, errors.New("out of range")
	}
	return n, nil
}

func clipCmd(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// readRuntime asks the first daemon `setup` when the root is the running
// machine (or a Socket was given): Runtime is unknown on a tree (not
// captured), when irqbalance does not run (not applicable), or with why
// the socket did not answer (not permitted for a refusal, failed
// otherwise). It never fails the read.
func (b *Settings) readRuntime(fsys kfile.FS, sock *Socket) {
	switch {
	case !unknown.Is(b.Running, true):
		why := "irqbalance does not run"
		if !b.Running.Known() {
			why = "whether irqbalance runs is unknown"
		}
		b.Runtime = unknown.NotAs[Runtime](unknown.KindNotApplicable, why)
		return
	case sock == nil && !fsys.Live():
		b.Runtime = unknown.NotAs[Runtime](unknown.KindNotCaptured, "a host tree holds no irqbalance socket to ask")
		return
	case sock == nil:
		sock = &Socket{}
	}
	pid := b.PIDs[0]
	task, err := proc.ReadTask(fsys, pid)
	if err != nil {
		b.Runtime = unknown.NotAs[Runtime](unknown.KindFailed, err.Error())
		return
	}
	rt, err := sock.Setup(fsys, pid)
	switch {
	case errors.Is(err, ErrRefused) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
		b.Runtime = unknown.NotAs[Runtime](unknown.KindPermission, err.Error())
	case errors.Is(err, ErrSetup):
		b.Runtime = unknown.NotAs[Runtime](unknown.KindMalformed, err.Error())
	case err != nil:
		b.Runtime = unknown.NotAs[Runtime](unknown.KindFailed, err.Error())
	default:
		rt.Start = task.Start
		b.Runtime = unknown.Of(rt)
	}
}

// Banned reports whether irq is in the runtime list.
func (r Runtime) Banned(irq int) bool {
	_, ok := slices.BinarySearch(r.BannedIRQs, irq)
	return ok
}
