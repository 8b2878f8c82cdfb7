// Package fakeirqbalance is an irqbalance daemon's Unix socket for tests:
// it binds and answers as irqbalance.c's init_socket and sock_handle do
// (see internal/host/irqbalance/socket.go): SO_PASSCRED on the
// listening socket, one message read per connection, nothing answered
// without SCM_CREDENTIALS of uid 0, "setup" answered in the daemon's
// format, "settings ban irqs" replacing the list of banned IRQs as the
// daemon's strtoul loop reads it ("NONE" empties it), "settings cpus"
// and "settings sleep" taken, and the connection closed after each. It
// moves no IRQ: it only keeps the lists.
package fakeirqbalance

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/irqnuma/irqnuma/cpuset"
)

// Daemon is one fake daemon's socket and what it keeps.
type Daemon struct {
	addr string
	ln   *net.UnixListener

	mu         sync.Mutex
	sleep      int
	banned     []int // cl_banned_irqs, in the order added
	bannedCPUs cpuset.Set
	commands   []string
	refuse     bool
	fail       map[string]bool // by command prefix: close without acting
	wg         sync.WaitGroup
}

var seq atomic.Int32

// UniqueAddr returns an abstract address no other test process uses.
func UniqueAddr() string {
	return fmt.Sprintf("@irqnuma-fakeirqbalance-%d-%d", os.Getpid(), seq.Add(1))
}

// Start binds addr ("@name" abstract, else a file; "" for UniqueAddr)
// as init_socket does and serves it until the test ends. banned is the
// daemon's list of banned IRQs at start (its --banirq IRQs), cpus the
// CPUs it bans.
func Start(t testing.TB, addr string, banned []int, cpus cpuset.Set) *Daemon {
	t.Helper()
	d, err := New(addr, banned, cpus)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// New is Start for a caller that is not the test's goroutine (InNetns's
// fn): it serves until Close.
func New(addr string, banned []int, cpus cpuset.Set) (*Daemon, error) {
	if addr == "" {
		addr = UniqueAddr()
	}
	ln, err := Listen(addr)
	if err != nil {
		return nil, err
	}
	d := &Daemon{addr: addr, ln: ln, sleep: 10, banned: append([]int(nil), banned...), bannedCPUs: cpus, fail: map[string]bool{}}
	d.wg.Add(1)
	go d.serve()
	return d, nil
}

// Close stops serving and waits for the connection being served.
func (d *Daemon) Close() {
	d.ln.Close()
	d.wg.Wait()
}

// Listen binds addr as init_socket does: SOCK_STREAM, bound with the
// length of the whole struct sockaddr_un when addr is AbstractAddr (as
// the daemon's fallback is), SO_PASSCRED, a backlog of 1.
func Listen(addr string) (*net.UnixListener, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	f := os.NewFile(uintptr(fd), "fakeirqbalance")
	defer f.Close()
	var raw unix.RawSockaddrUnix
	raw.Family = unix.AF_UNIX
	if len(addr) > len(raw.Path) {
		return nil, fmt.Errorf("bind %q: too long", addr)
	}
	for i := 0; i < len(addr); i++ {
		raw.Path[i] = int8(addr[i])
	}
	size := uintptr(2 + len(addr) + 1) // a file: the name and its NUL
	if addr[0] == '@' {
		raw.Path[0] = 0
		size = uintptr(2 + len(addr)) // abstract: the name, no NUL
	}
	if _, _, e := unix.Syscall(unix.SYS_BIND, uintptr(fd), uintptr(unsafe.Pointer(&raw)), size); e != 0 {
		return nil, fmt.Errorf("bind %q: %w", addr, e)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		return nil, fmt.Errorf("SO_PASSCRED: %w", err)
	}
	if err := unix.Listen(fd, 1); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	l, err := net.FileListener(f)
	if err != nil {
		return nil, err
	}
	return l.(*net.UnixListener), nil
}

// Addr is the address it serves, as Go names it.
func (d *Daemon) Addr() string { return d.addr }

// Refuse makes it answer as to a user other than root: nothing.
func (d *Daemon) Refuse(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refuse = on
}

// Ignore makes it close the connection without acting on commands that
// start with prefix (or, off, act on them again): a daemon that took a
// command and did not do it.
func (d *Daemon) Ignore(prefix string, on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fail[prefix] = on
}

// Banned is its list of banned IRQs, in the order added.
func (d *Daemon) Banned() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]int(nil), d.banned...)
}

// Commands are the commands it read, in order.
func (d *Daemon) Commands() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.commands...)
}

func (d *Daemon) serve() {
	defer d.wg.Done()
	for {
		c, err := d.ln.AcceptUnix()
		if err != nil {
			return
		}
		d.handle(c)
	}
}

// handle is sock_handle: one message, the credential check, the command.
func (d *Daemon) handle(c *net.UnixConn) {
	defer c.Close()
	buf := make([]byte, 16384)
	oob := make([]byte, unix.CmsgSpace(unix.SizeofUcred))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil || n == len(buf) {
		return
	}
	if !rootCreds(oob[:oobn]) {
		return
	}
	cmd := string(buf[:n])
	d.mu.Lock()
	defer d.mu.Unlock()
	d.commands = append(d.commands, cmd)
	if d.refuse {
		return
	}
	for p, on := range d.fail {
		if on && strings.HasPrefix(cmd, p) {
			return
		}
	}
	switch {
	case strings.HasPrefix(cmd, "settings ban irqs "):
		d.banIRQs(cmd[len("settings ban irqs "):])
	case strings.HasPrefix(cmd, "settings cpus "):
		w := strings.Fields(cmd[len("settings cpus "):])
		if len(w) > 0 && !strings.HasPrefix(w[0], "NULL") {
			if set, err := cpuset.ParseList(w[0]); err == nil {
				d.bannedCPUs = set
			}
		}
	case strings.HasPrefix(cmd, "settings sleep "):
		if v, err := strconv.Atoi(strings.TrimSpace(cmd[len("settings sleep "):])); err == nil && v >= 1 {
			d.sleep = v
		}
	case strings.HasPrefix(cmd, "setup"):
		c.Write([]byte(d.setup()))
	}
}

// rootCreds is the daemon's check: the first control message is
// SCM_CREDENTIALS with uid 0.
func rootCreds(oob []byte) bool {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) == 0 {
		return false
	}
	cred, err := unix.ParseUnixCredentials(&msgs[0])
	return err == nil && cred.Uid == 0
}

// banIRQs is the daemon's loop: the list is emptied, "NONE" leaves it
// so, else strtoul reads IRQs until one reads as 0 (the first is added
// whatever it reads as).
func (d *Daemon) banIRQs(list string) {
	d.banned = nil
	if strings.HasPrefix(list, "NONE") {
		return
	}
	irq, rest := strtoul(list)
	for {
		d.add(irq)
		if irq, rest = strtoul(rest); irq == 0 {
			return
		}
	}
}

func (d *Daemon) add(irq int) {
	for _, b := range d.banned {
		if b == irq {
			return
		}
	}
	d.banned = append(d.banned, irq)
}

// strtoul reads a decimal as strtoul(s, &end, 10) does: blanks skipped,
// an optional sign, digits; 0 and s itself when there are none.
func strtoul(s string) (int, string) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\v' || s[i] == '\f') {
		i++
	}
	j := i
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if k == j {
		return 0, s
	}
	v, err := strconv.ParseUint(s[j:k], 10, 32)
	if err != nil {
		return int(^uint32(0) >> 1), s[k:]
	}
	if s[i] == '-' {
		v = -v
	}
	return int(int32(v)), s[k:]
}

// setup is the reply to "setup", as sock_handle prints it.
func (d *Daemon) setup() string {
	var b strings.Builder
	fmt.Fprintf(&b, "SLEEP %d ", d.sleep)
	for _, irq := range d.banned {
		fmt.Fprintf(&b, "IRQ %d LOAD 0 DIFF 0 CLASS 0 ", irq)
	}
	b.WriteString("BANNED " + Mask(d.bannedCPUs))
	return b.String()
}

// Mask is a CPU set as irqbalance's cpumask_scnprintf prints it (bitmap.c
// bitmap_scnprintf over NR_CPUS 4096): words of 8 lower-case hex digits,
// most significant first, separated by commas, the leading zero words
// left out but the last.
func Mask(set cpuset.Set) string {
	words := make([]uint32, 4096/32)
	for c := range set.All() {
		if c < 4096 {
			words[c/32] |= 1 << (c % 32)
		}
	}
	var parts []string
	for i := len(words) - 1; i >= 0; i-- {
		if words[i] != 0 || len(parts) > 0 || i == 0 {
			parts = append(parts, fmt.Sprintf("%08x", words[i]))
		}
	}
	return strings.Join(parts, ",")
}

// ErrNoNetns is returned by InNetns where a network namespace cannot be
// made (not root).
var ErrNoNetns = errors.New("cannot make a network namespace")

// InNetns runs fn on a thread of its own in a new network namespace,
// where the sockets fn makes (a daemon's abstract address among them)
// are no other process's; the thread ends with fn. It is never the
// process's first thread, whose namespace /proc/self/net shows.
func InNetns(fn func() error) error {
	done := make(chan error, 1)
	var run func()
	run = func() {
		// The thread stays locked: it dies with this goroutine, its
		// namespace with it.
		runtime.LockOSThread()
		if unix.Gettid() == os.Getpid() {
			// Hold the first thread while another does the work.
			inner := make(chan struct{})
			go func() { run(); close(inner) }()
			<-inner
			runtime.UnlockOSThread()
			return
		}
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("%w: unshare: %w", ErrNoNetns, err)
			return
		}
		done <- fn()
	}
	go run()
	return <-done
}
