package hosttest

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// NetnsProc is a process a live test started in a network namespace of
// its own, holding one UDP socket connect()ed to Remote (a connected UDP
// socket sends nothing).
type NetnsProc struct {
	PID       int
	Netns     string // the namespace's name under /run/netns
	Remote    netip.AddrPort
	HostIface string // the host's end of a veth; "" for a macvlan
	NsIface   string // the interface inside the namespace
}

var netnsSeq atomic.Int32

// netnsNames returns a namespace name and two interface names no other
// test uses (IFNAMSIZ: at most 15 bytes).
func netnsNames() (ns, a, b string) {
	id := fmt.Sprintf("%05x%x", os.Getpid()&0xfffff, netnsSeq.Add(1))
	return "irqnuma-t" + id, "inh" + id, "inn" + id
}

// ip runs ip(8) with args and fails the test on an error.
func ip(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// newNetns makes a namespace with IPv6 off (no router solicitation, DAD
// or MLD leaves through a link put in it) and deletes it when the test
// ends. It takes no lock: it moves no IRQ or thread, and its names are
// the test process's own (a test that also holds Live's lock may call
// it, and call it more than once).
func newNetns(t testing.TB) (ns, a, b string) {
	t.Helper()
	if testing.Short() {
		t.Skip("live-host test (-short)")
	}
	Writes(t, "network namespaces and links (made for the test, removed after)")
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes network namespaces and links")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip(8) (iproute2)")
	}
	ns, a, b = netnsNames()
	ip(t, "netns", "add", ns)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", ns, err, out)
		}
	})
	for _, k := range []string{"all", "default"} {
		ip(t, "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf."+k+".disable_ipv6=1")
	}
	return ns, a, b
}

// MacvlanProc starts a process in a new namespace whose only interface
// is a macvlan on the host's lower (198.51.100.2/24, default route via
// 198.51.100.1), with a UDP socket connected to 203.0.113.5:9. The
// namespace, the macvlan and the process go when the test ends.
func MacvlanProc(t testing.TB, lower string) NetnsProc {
	t.Helper()
	ns, _, in := newNetns(t)
	ip(t, "link", "add", "link", lower, "name", in, "netns", ns, "type", "macvlan", "mode", "bridge")
	ip(t, "-n", ns, "addr", "add", "198.51.100.2/24", "dev", in)
	ip(t, "-n", ns, "link", "set", in, "up")
	ip(t, "-n", ns, "route", "add", "default", "via", "198.51.100.1")
	p := NetnsProc{Netns: ns, NsIface: in, Remote: netip.MustParseAddrPort("203.0.113.5:9")}
	p.PID = startIn(t, ns, p.Remote)
	return p
}

// VethProc starts a process in a new namespace behind a veth pair: the
// host's end has 10.213.0.1/30, the namespace's 10.213.0.2/30 and a
// default route via the host's end; its UDP socket is connected to
// 203.0.113.5:9, which the host routes by its own table. The namespace,
// both ends and the process go when the test ends.
func VethProc(t testing.TB) NetnsProc {
	t.Helper()
	ns, host, in := newNetns(t)
	ip(t, "link", "add", host, "type", "veth", "peer", "name", in, "netns", ns)
	t.Cleanup(func() { exec.Command("ip", "link", "del", host).Run() }) // gone with the namespace already, as a rule
	// No IPv6 link-local address on the host's end: nothing but what
	// the test asks for goes through it.
	ip(t, "link", "set", host, "addrgenmode", "none")
	ip(t, "addr", "add", "10.213.0.1/30", "dev", host)
	ip(t, "link", "set", host, "up")
	ip(t, "-n", ns, "addr", "add", "10.213.0.2/30", "dev", in)
	ip(t, "-n", ns, "link", "set", in, "up")
	ip(t, "-n", ns, "route", "add", "default", "via", "10.213.0.1")
	p := NetnsProc{Netns: ns, NsIface: in, HostIface: host, Remote: netip.MustParseAddrPort("203.0.113.5:9")}
	p.PID = startIn(t, ns, p.Remote)
	return p
}

// startIn makes a UDP socket in namespace ns connected to remote and
// starts sleep(1) in ns holding it; the process is killed when the test
// ends.
func startIn(t testing.TB, ns string, remote netip.AddrPort) int {
	t.Helper()
	sock, err := socketIn("/run/netns/"+ns, remote)
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	cmd := exec.Command("ip", "netns", "exec", ns, "sleep", "600")
	cmd.ExtraFiles = []*os.File{sock}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// ip netns exec becomes sleep (execvp): the PID is the process's,
	// once its namespace is ns's.
	var st unix.Stat_t
	if err := unix.Stat("/run/netns/"+ns, &st); err != nil {
		t.Fatal(err)
	}
	link := fmt.Sprintf("net:[%d]", st.Ino)
	for range 500 {
		got, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", cmd.Process.Pid))
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", cmd.Process.Pid))
		if got == link && strings.TrimSpace(string(comm)) == "sleep" {
			return cmd.Process.Pid
		}
		unix.Nanosleep(&unix.Timespec{Nsec: 10e6}, nil)
	}
	t.Fatalf("process %d did not become sleep in %s", cmd.Process.Pid, link)
	return 0
}

// socketIn makes a UDP socket inside the namespace at nsPath, connected
// to remote, from a thread that enters the namespace and leaves it.
func socketIn(nsPath string, remote netip.AddrPort) (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer orig.Close()
		target, err := os.Open(nsPath)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("setns %s: %w", nsPath, err)}
			return
		}
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			err = unix.Connect(fd, &unix.SockaddrInet4{Port: int(remote.Port()), Addr: remote.Addr().As4()})
		}
		if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread() // else the thread ends with the goroutine
		}
		if err != nil {
			ch <- result{err: fmt.Errorf("UDP socket to %s in %s: %w", remote, nsPath, err)}
			return
		}
		ch <- result{f: os.NewFile(uintptr(fd), "udp")}
	}()
	r := <-ch
	return r.f, r.err
}
