package steer

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// napiThreads finds the napi/IF-ID kernel threads in /proc: NAPI id →
// pid.
func napiThreads(t *testing.T, ifname string) map[uint32]int {
	t.Helper()
	out := map[uint32]int{}
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/comm")
		if err != nil {
			continue
		}
		id, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "napi/"+ifname+"-")
		if !ok {
			continue
		}
		n, err1 := strconv.ParseUint(id, 10, 32)
		pid, err2 := strconv.Atoi(filepath.Base(d))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: comm %q", d, b)
		}
		if n == 0 {
			// A NAPI without an id (virtio_net's tx NAPI): napi-get
			// lists only the instances that have one.
			continue
		}
		out[uint32(n)] = pid
	}
	return out
}

// checkNAPI holds a NIC's netdev reading to /proc: every NAPI has the
// kthread named after it, an rx queue that names a NAPI names one the
// NIC has (veth ties none to its queues), and a NAPI's IRQ is one
// /proc/irq has.
func checkNAPI(t *testing.T, n *NIC, wantRX int) {
	t.Helper()
	if n.NAPIs == nil || n.Queues == nil {
		t.Fatalf("%s: napis %v, queues %v: %v", n.Name, n.NAPIs, n.Queues, n.Unknown)
	}
	got := map[uint32]int{}
	ids := map[uint32]bool{}
	for _, p := range n.NAPIs {
		got[p.ID] = p.PID
		ids[p.ID] = true
		if p.Threaded == nil || !*p.Threaded {
			t.Errorf("%s NAPI %d: threaded %v, want true", n.Name, p.ID, p.Threaded)
		}
		if irq, ok := p.IRQ.Get(); ok {
			if _, err := os.Stat(fmt.Sprintf("/proc/irq/%d", irq)); err != nil {
				t.Errorf("%s NAPI %d: IRQ %d not in /proc/irq: %v", n.Name, p.ID, irq, err)
			}
		}
	}
	if len(got) == 0 {
		t.Errorf("%s: no NAPI instances", n.Name)
	}
	if diff := cmp.Diff(napiThreads(t, n.Name), got, exportValues); diff != "" {
		t.Errorf("%s NAPI id → kthread pid differs from /proc (-proc +netlink):\n%s", n.Name, diff)
	}
	rx := 0
	for _, q := range n.Queues {
		if q.Type != QueueTypeRX {
			continue
		}
		rx++
		if q.NAPI != 0 && !ids[q.NAPI] {
			t.Errorf("%s rx queue %d: NAPI %d is not among its NAPIs", n.Name, q.ID, q.NAPI)
		}
	}
	if rx != wantRX {
		t.Errorf("%s: %d rx queues, want %d", n.Name, rx, wantRX)
	}
}

// TestLiveThreadedEth0 turns threaded NAPI on for eth0, reads it, and
// holds the NAPI ids, kthread pids and IRQs to /proc; then puts
// threaded back.
func TestLiveThreadedEth0(t *testing.T) {
	hosttest.Writes(t, "eth0's threaded NAPI (/sys/class/net/eth0/threaded)")
	fsys := liveRoot(t)
	const file = "/sys/class/net/eth0/threaded"
	old, err := os.ReadFile(file)
	if err != nil {
		t.Skip("no eth0 threaded:", err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(file, old, 0o644); err != nil {
			t.Errorf("restore %s: %v", file, err)
		}
	})
	if err := os.WriteFile(file, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := Read(fsys, []string{"eth0"})
	if err != nil {
		t.Fatal(err)
	}
	n := h.NICs[0]
	if n.Sysfs.Threaded == nil || *n.Sysfs.Threaded != 1 {
		t.Errorf("sysfs threaded = %v, want 1", n.Sysfs.Threaded)
	}
	rx, _ := filepath.Glob("/sys/class/net/eth0/queues/rx-*")
	checkNAPI(t, n, len(rx))
	for _, q := range n.Queues {
		if q.Type == QueueTypeRX && q.NAPI == 0 {
			t.Errorf("eth0 rx queue %d has no NAPI", q.ID)
		}
	}
}

// run runs a command, failing the test with its output.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestLiveVeth makes a veth pair whose peer lives in a network namespace
// the test makes (and removes, which removes the pair), gives it 3 of
// its 4 channels and threaded NAPI, and reads it: channels as ethtool -l
// says, the NAPI kthreads as /proc says, what veth lacks (RSS, rings,
// ntuple) unknown because the driver has none, and the recording reads
// the same.
func TestLiveVeth(t *testing.T) {
	hosttest.Writes(t, "network namespaces and links (a veth pair made for the test, removed after)")
	fsys := liveRoot(t)
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (apt-get install iproute2; .ci/run installs it)")
	}
	ns := fmt.Sprintf("irqnuma-steer-%d", os.Getpid())
	ifname := fmt.Sprintf("irqst%d", os.Getpid()%100000)
	run(t, "ip", "netns", "add", ns)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v\n%s", ns, err, out)
		}
	})
	run(t, "ip", "link", "add", ifname, "numtxqueues", "4", "numrxqueues", "4", "type", "veth",
		"peer", "name", "peer0", "netns", ns, "numtxqueues", "4", "numrxqueues", "4")
	run(t, "ip", "link", "set", ifname, "up")
	run(t, "ip", "-n", ns, "link", "set", "peer0", "up")
	run(t, "ethtool", "-L", ifname, "rx", "3", "tx", "3")
	run(t, "ethtool", "-K", ifname, "gro", "on")
	if err := os.WriteFile("/sys/class/net/"+ifname+"/threaded", []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := Read(fsys, []string{ifname})
	if err != nil {
		t.Fatal(err)
	}
	n := h.NICs[0]
	mx, cur := sections(t, ethtool(t, "-l", ifname))
	want := Channels{MaxRX: mx["RX"], MaxTX: mx["TX"], RX: cur["RX"], TX: cur["TX"]}
	if n.Channels == nil || *n.Channels != want || want.RX != 3 {
		t.Errorf("channels = %+v, ethtool -l says %+v", n.Channels, want)
	}
	checkNAPI(t, n, 3)
	for _, p := range []Part{PartRSS, PartRings, PartRules} {
		if r, _ := n.Why(p); r.Kind != unknown.KindDriver {
			t.Errorf("veth %s: %v, want not supported by the driver", p, r)
		}
	}
	dir := recordTree(t, fsys, []string{ifname})
	tree, err := kfile.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	replayed, err := Read(tree, []string{ifname})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h, replayed, liveVolatile, cmpopts.IgnoreFields(Host{}, "Source"), exportValues); diff != "" {
		t.Errorf("recorded veth differs (-live +recorded):\n%s", diff)
	}
}
