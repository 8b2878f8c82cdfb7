package nslink

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"unsafe"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

var sosDump = flag.String("sosdump", "", "TestLiveIPLinkXDP writes the ip outputs it parsed into this folder (to refresh testdata/sos)")

// TestLiveIPLinkXDP attaches an XDP program to links of a scratch
// network namespace (a veth in generic mode, another in driver mode),
// runs `ip -s -d link` and `ip -d address` there as a sosreport does,
// and holds what ParseIPLink reads from their text to what the kernel
// answers over netlink for the same links. The namespace, its links and
// the program go when it ends.
func TestLiveIPLinkXDP(t *testing.T) {
	hosttest.Writes(t, "network namespaces, links and XDP programs (made for the test, removed after)")
	if os.Geteuid() != 0 {
		t.Skip("a network namespace and an XDP program need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip(8) on this host")
	}
	name := "irqnuma-test-xdp-" + strconv.Itoa(os.Getpid())
	ip(t, "netns", "add", name)
	t.Cleanup(func() { ip(t, "netns", "del", name) })
	ip(t, "-n", name, "link", "add", "g0", "type", "veth", "peer", "name", "g1")
	ip(t, "-n", name, "link", "add", "v0", "type", "veth", "peer", "name", "v1")
	for _, l := range []string{"g0", "g1", "v0", "v1"} {
		ip(t, "-n", name, "link", "set", l, "up")
	}
	prog := loadXDPPass(t)
	nsPath := filepath.Join("/run/netns", name)
	attachXDP(t, nsPath, "g0", prog, unix.XDP_FLAGS_SKB_MODE)
	attachXDP(t, nsPath, "v0", prog, unix.XDP_FLAGS_DRV_MODE)

	live, err := kfile.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(nsPath, &st); err != nil {
		t.Fatal(err)
	}
	want, err := readLiveAt(live, nsPath, st.Ino, nil)
	if err != nil || !want.Links.Known() {
		t.Fatalf("netlink: %+v, %v", want, err)
	}
	for file, args := range map[string][]string{
		"ip_-s_-d_link": {"-s", "-d", "link"},
		"ip_-d_address": {"-d", "address"},
	} {
		out := ip(t, append([]string{"-n", name}, args...)...)
		if *sosDump != "" {
			if err := os.WriteFile(filepath.Join(*sosDump, file), out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := parseIPLink(out)
		if err != nil {
			t.Fatalf("%s: %v\n%s", file, err, out)
		}
		if len(got) != len(want.Links.Or(nil)) {
			t.Fatalf("%s: %d links, netlink %d\n%s", file, len(got), len(want.Links.Or(nil)), out)
		}
		for i, g := range got {
			w := want.Links.Or(nil)[i]
			if g.Index != w.Index || g.Name != w.Name || g.XDP.Attached != w.XDP.Attached || effectiveID(g.XDP) != effectiveID(w.XDP) {
				t.Errorf("%s: %s %+v, netlink %s %+v", file, g.Name, g.XDP, w.Name, w.XDP)
			}
		}
		g0, _ := want.ByName("g0")
		v0, _ := want.ByName("v0")
		if g0.XDP.Attached != XDPAttachedSKB || v0.XDP.Attached != XDPAttachedDrv || g0.XDP.ProgID == 0 {
			t.Errorf("netlink: g0 %+v, v0 %+v: want generic and driver mode", g0.XDP, v0.XDP)
		}
	}
}

// effectiveID is the one program id of a single mode.
func effectiveID(x XDP) uint32 {
	for _, id := range []uint32{x.ProgID, x.DrvProgID, x.SKBProgID, x.HWProgID} {
		if id != 0 {
			return id
		}
	}
	return 0
}

// ip runs ip(8) and returns its output, failing the test on an error.
func ip(t *testing.T, args ...string) []byte {
	t.Helper()
	out, err := exec.Command("ip", args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("ip %v: %v: %s", args, err, stderr)
	}
	return out
}

// loadXDPPass loads the program "r0 = XDP_PASS; exit" and returns its
// fd, closed when the test ends.
func loadXDPPass(t *testing.T) int {
	t.Helper()
	insns := []byte{
		0xb7, 0, 0, 0, 2, 0, 0, 0, // BPF_MOV64_IMM(BPF_REG_0, XDP_PASS)
		0x95, 0, 0, 0, 0, 0, 0, 0, // BPF_EXIT_INSN()
	}
	license := []byte("GPL\x00")
	// union bpf_attr for BPF_PROG_LOAD: prog_type, insn_cnt, insns,
	// license, then zeros (no log, any kernel version, no name).
	var attr [128]byte
	native.PutUint32(attr[0:], unix.BPF_PROG_TYPE_XDP)
	native.PutUint32(attr[4:], uint32(len(insns)/8))
	native.PutUint64(attr[8:], uint64(uintptr(unsafe.Pointer(&insns[0]))))
	native.PutUint64(attr[16:], uint64(uintptr(unsafe.Pointer(&license[0]))))
	fd, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_PROG_LOAD, uintptr(unsafe.Pointer(&attr[0])), unsafe.Sizeof(attr))
	runtime.KeepAlive(insns)
	runtime.KeepAlive(license)
	if errno != 0 {
		t.Skipf("cannot load an XDP program here: %v", errno)
	}
	t.Cleanup(func() { unix.Close(int(fd)) })
	return int(fd)
}

// attachXDP attaches prog to the link named link of the namespace at
// nsPath (RTM_SETLINK with IFLA_XDP).
func attachXDP(t *testing.T, nsPath, link string, prog int, flags uint32) {
	t.Helper()
	ns, err := os.Open(nsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	c, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{NetNS: int(ns.Fd())})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	idx, err := strconv.Atoi(string(trimNL(ip(t, "-n", filepath.Base(nsPath), "-o", "link", "show", link))))
	if err != nil {
		t.Fatal(err)
	}
	xdp := netlink.NewAttributeEncoder()
	xdp.Int32(unix.IFLA_XDP_FD, int32(prog))
	xdp.Uint32(unix.IFLA_XDP_FLAGS, flags)
	nested, err := xdp.Encode()
	if err != nil {
		t.Fatal(err)
	}
	attrs := netlink.NewAttributeEncoder()
	attrs.Bytes(unix.IFLA_XDP|unix.NLA_F_NESTED, nested)
	ab, err := attrs.Encode()
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, ifinfomsgLen)
	native.PutUint32(data[4:], uint32(idx))
	if _, err := c.Execute(netlink.Message{Header: netlink.Header{Type: unix.RTM_SETLINK, Flags: netlink.Request | netlink.Acknowledge},
		Data: append(data, ab...)}); err != nil {
		t.Fatalf("attach XDP to %s: %v", link, err)
	}
}

// trimNL returns the index `ip -o link show` prints first.
func trimNL(b []byte) []byte {
	for i, c := range b {
		if c == ':' {
			return b[:i]
		}
	}
	return b
}
