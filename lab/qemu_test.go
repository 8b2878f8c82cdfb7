//go:build vmtest

package lab

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// guestNIC is one virtio-net NIC of the guest and its tap.
type guestNIC struct {
	Name       string `json:"name"`        // eth0: the agent renames the NIC with MAC to this
	MAC        string `json:"mac"`         // guest side
	Addr       string `json:"addr"`        // guest address with prefix, 192.0.2.2/24
	Peer       string `json:"peer"`        // the tap's address in the namespace
	PeerMAC    string `json:"peer_mac"`    // the tap's MAC: both sides have static neighbours
	Node       int    `json:"node"`        // the pxb-pcie expander's numa_node
	QueuePairs int    `json:"queue_pairs"` // tap queues = virtio-net queue pairs
	// RSS is virtio-net's rss=on,hash=on: the device steers by a
	// Toeplitz hash and an indirection table the guest sets (QEMU does
	// it in software; the tap has vhost off), so the guest's ethtool
	// -x reports a table and a key and -X changes them.
	RSS bool   `json:"rss"`
	Tap string `json:"-"`
}

// guestConfig is /etc/lab/config.json: what the guest is and what to do.
type guestConfig struct {
	Kernel   string     `json:"kernel"`
	Release  string     `json:"release"`
	Nodes    []string   `json:"nodes"` // CPU list of node i
	NICs     []guestNIC `json:"nics"`
	NVMeNode int        `json:"nvme_node"`
	Export   bool       `json:"export"` // print a snapshot of the guest (LAB_REFRESH)
	// LinksNAPI says whether the kernel's virtio_net tells netdev
	// netlink each queue's NAPI (it calls netif_queue_set_napi, from
	// the module's imports); nil when no virtio_net module was found.
	LinksNAPI *bool `json:"virtio_net_links_napi"`
	// SetsNAPIIRQ says whether it ties each NAPI to its IRQ (it calls
	// netif_napi_set_irq_locked), so that netdev napi-get reports one.
	SetsNAPIIRQ *bool `json:"virtio_net_sets_napi_irq"`
	// Only is the scenarios the agent runs: IRQNUMA_LAB_SCENARIOS (a
	// loop on one scenario need not wait for all of them), else all.
	Only []string `json:"only,omitempty"`
}

// labTopology is the guest every kernel boots: CPUs 0-3 on node 0 and 4-7
// on node 1; a 4-queue-pair NIC and the NVMe drive behind an expander on
// node 1, a 2-queue-pair NIC behind one on node 0.
func labTopology(k preparedKernel, export bool) guestConfig {
	return guestConfig{
		Kernel: k.Name, Release: k.Release, Export: export, LinksNAPI: k.LinksNAPI, SetsNAPIIRQ: k.SetsNAPIIRQ,
		Nodes: []string{"0-3", "4-7"},
		NICs: []guestNIC{
			{Name: "eth0", MAC: "52:54:00:1a:b0:01", Addr: "192.0.2.2/24", Peer: "192.0.2.1", PeerMAC: "52:54:00:1a:c0:01", Node: 1, QueuePairs: 4, Tap: "labtap0"},
			{Name: "eth1", MAC: "52:54:00:1a:b0:02", Addr: "198.51.100.2/24", Peer: "198.51.100.1", PeerMAC: "52:54:00:1a:c0:02", Node: 0, QueuePairs: 2, Tap: "labtap1"},
			{Name: "eth2", MAC: "52:54:00:1a:b0:03", Addr: "203.0.113.2/24", Peer: "203.0.113.1", PeerMAC: "52:54:00:1a:c0:03", Node: 1, QueuePairs: 4, RSS: true, Tap: "labtap2"},
		},
		NVMeNode: 1,
	}
}

// qemuArgs is the whole QEMU command line for one guest. TCG: nested KVM
// hangs at boot on these machines.
func qemuArgs(k preparedKernel, c guestConfig, initrd, console, results string) []string {
	a := []string{
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-machine", "q35,accel=tcg", "-cpu", "max",
		"-smp", "8,sockets=2,cores=4,threads=1", "-m", "1G",
		"-object", "memory-backend-ram,id=m0,size=512M",
		"-object", "memory-backend-ram,id=m1,size=512M",
		"-numa", "node,nodeid=0,cpus=0-3,memdev=m0",
		"-numa", "node,nodeid=1,cpus=4-7,memdev=m1",
		// A pxb-pcie expander with numa_node=N puts what is behind it on
		// node N; a device on the root bus would have numa_node -1.
		"-device", "pxb-pcie,id=pxb0,bus_nr=64,numa_node=0,bus=pcie.0",
		"-device", "pxb-pcie,id=pxb1,bus_nr=128,numa_node=1,bus=pcie.0",
	}
	port := map[int]int{}
	nextRP := 0
	rootPort := func(node int) string {
		nextRP++
		id := "rp" + strconv.Itoa(nextRP)
		a = append(a, "-device", fmt.Sprintf("pcie-root-port,id=%s,bus=pxb%d,chassis=%d,slot=%d", id, node, nextRP, port[node]))
		port[node]++
		return id
	}
	for i, n := range c.NICs {
		rp := rootPort(n.Node)
		rss := ""
		if n.RSS {
			// QEMU's eBPF steering is not loadable here (it says
			// "libbpf: failed to initialize skeleton BPF object
			// 'rss_bpf': -95"); hash=on makes it steer in software.
			rss = ",rss=on,hash=on"
		}
		a = append(a,
			"-netdev", fmt.Sprintf("tap,id=n%d,ifname=%s,script=no,downscript=no,vhost=off,queues=%d", i, n.Tap, n.QueuePairs),
			"-device", fmt.Sprintf("virtio-net-pci,netdev=n%d,mq=on%s,vectors=%d,mac=%s,bus=%s,romfile=", i, rss, 2*n.QueuePairs+2, n.MAC, rp))
	}
	rp := rootPort(c.NVMeNode)
	a = append(a,
		"-blockdev", "driver=null-co,node-name=nv0,size=67108864,read-zeroes=on",
		"-device", "nvme,drive=nv0,serial=irqnumalab,bus="+rp,
		"-kernel", k.Vmlinuz, "-initrd", initrd,
		"-append", "console=ttyS0 loglevel=4 panic=-1 ipv6.disable=1 cryptomgr.notests nowatchdog rdinit=/init",
		"-serial", "file:"+console, "-serial", "file:"+results,
	)
	return a
}

// labLine is one line the agent prints on the second serial port.
type labLine struct {
	Kind     string  `json:"kind"` // check, info, file, done, fatal
	Scenario string  `json:"scenario"`
	Check    string  `json:"check"`
	OK       bool    `json:"ok"`
	Detail   string  `json:"detail"`
	Name     string  `json:"name"`
	Data     string  `json:"data"`
	Uptime   float64 `json:"uptime"`
}

// runGuest boots one kernel in a namespace of its own and returns the
// agent's lines. A guest that does not finish fails the test with the
// tail of its console.
func runGuest(t *testing.T, k preparedKernel, bins guestBinaries, export bool, timeout time.Duration) []labLine {
	dir := t.TempDir()
	c := labTopology(k, export)
	c.Only = runScenarios()
	cfg, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	initrd := filepath.Join(dir, "initramfs.cpio")
	writeInitramfs(t, initrd, bins, k, cfg)

	ns := fmt.Sprintf("irqnuma-lab-%d-%s", os.Getpid(), strings.ReplaceAll(k.Name, ".", "-"))
	newLabNet(t, ns, c.NICs)
	var subnets []*net.IPNet
	for _, n := range c.NICs {
		subnets = append(subnets, mustCIDR(t, n.Addr))
	}
	startResponder(t, ns, subnets)
	startIperf3Server(t, ns, c.NICs[0].Peer)
	for _, n := range c.NICs[1:] {
		if n.RSS { // the flow-bench scenario's flow comes in there
			startIperf3Server(t, ns, n.Peer)
		}
	}

	// QEMU itself has crashed under TCG now and then (a segfault within
	// seconds, before the guest printed anything), and 7.3 once oopsed
	// at boot, before /init ran, in one of five boots ("Oops: int3" in
	// set_next_task_fair, on a 5-byte NOP the kernel patches at run
	// time and the memory held again: as if TCG ran the int3 of a
	// text_poke_bp already finished). Such a run says nothing about
	// irqnuma, so it is run once more, and said.
	for attempt := 1; ; attempt++ {
		lines, lost := bootOnce(t, k, c, ns, dir, initrd, timeout, attempt == 2)
		if lost != "" && attempt == 1 {
			t.Logf("%s: %s; booting it once more", k.Name, lost)
			continue
		}
		return lines
	}
}

// bootOnce runs QEMU once and returns the agent's lines, and, when the
// run died before the agent said anything for a reason that is not the
// guest's userspace, what happened: QEMU died by a signal (a crash of
// QEMU), or the kernel panicked (its first Oops or panic line). A run
// that does not finish fails the test, unless it was so lost and last is
// false (the caller tries again).
func bootOnce(t *testing.T, k preparedKernel, c guestConfig, ns, dir, initrd string, timeout time.Duration, last bool) ([]labLine, string) {
	console, results := filepath.Join(dir, "console.log"), filepath.Join(dir, "results.log")
	os.Remove(console)
	os.Remove(results)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append([]string{"netns", "exec", ns, "qemu-system-x86_64"}, qemuArgs(k, c, initrd, console, results)...)
	cmd := exec.CommandContext(ctx, "ip", args...)
	var qerr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &qerr, &qerr
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	b, _ := os.ReadFile(results)
	lines := parseLines(t, b)
	cons, _ := os.ReadFile(console)
	t.Logf("%s (%s): QEMU ran %.1fs", k.Package, k.Version, elapsed.Seconds())
	done := len(lines) > 0 && lines[len(lines)-1].Kind == "done"
	var ee *exec.ExitError
	var lost string
	switch {
	case len(lines) > 0 || ctx.Err() != nil:
	case err != nil && errors.As(err, &ee) && ee.ProcessState.Sys().(syscall.WaitStatus).Signaled():
		lost = "QEMU crashed before the guest said anything"
	case kernelPanic(cons) != "":
		lost = "the kernel panicked before the agent started: " + kernelPanic(cons)
	}
	if (err != nil || !done) && (lost == "" || last) {
		t.Errorf("guest %s did not finish (QEMU: %v; timeout: %v):\n%s\n--- console (last 6000 bytes) ---\n%s", k.Name, err, ctx.Err(), qerr.String(), tail(cons, 6000))
	}
	return lines, lost
}

// kernelPanic is the first line of the console that says the kernel
// oopsed or panicked ("Oops: int3: 0000 [#1] SMP NOPTI", "Kernel panic -
// not syncing: ..."), with the RIP line after an Oops; empty when none.
func kernelPanic(console []byte) string {
	lines := strings.Split(string(console), "\n")
	for i, l := range lines {
		_, msg, ok := strings.Cut(l, "] ")
		if !ok {
			msg = l
		}
		switch {
		case strings.HasPrefix(msg, "Oops: "), strings.HasPrefix(msg, "BUG: "):
			for _, r := range lines[i+1:] {
				if _, rip, ok := strings.Cut(r, "] RIP: "); ok {
					return strings.TrimSpace(msg) + " at " + strings.TrimSpace(rip)
				}
			}
			return strings.TrimSpace(msg)
		case strings.HasPrefix(msg, "Kernel panic - not syncing"):
			return strings.TrimSpace(msg)
		}
	}
	return ""
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func parseLines(t *testing.T, b []byte) []labLine {
	var out []labLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		s := strings.TrimRight(sc.Text(), "\r")
		i := strings.Index(s, "LAB {")
		if i < 0 {
			continue
		}
		var l labLine
		if err := json.Unmarshal([]byte(s[i+4:]), &l); err != nil {
			t.Errorf("agent line %q: %v", s, err)
			continue
		}
		out = append(out, l)
	}
	return out
}

// TestKernelPanic: the 7.3 guest's console when it oopsed at boot under
// TCG (make vmtest, 2026-12-03), shortened, and a console without one.
func TestKernelPanic(t *testing.T) {
	oops := "[    4.039336] Oops: int3: 0000 [#1] SMP NOPTI\n" +
		"[    4.039336] CPU: 6 UID: 0 PID: 0 Comm: swapper/6 Not tainted 7.3.4+deb13-amd64 #1 PREEMPT(lazy)  Debian 7.3.4-1~bpo13+1 \n" +
		"[    4.039336] RIP: 0010:set_next_task_fair+0x609/0x780\n" +
		"[    4.039336] Kernel panic - not syncing: Fatal exception in interrupt\n"
	tests := []struct {
		give, want string
	}{
		{oops, "Oops: int3: 0000 [#1] SMP NOPTI at 0010:set_next_task_fair+0x609/0x780"},
		{oops[strings.Index(oops, "[    4.039336] Kernel"):], "Kernel panic - not syncing: Fatal exception in interrupt"},
		{"[    2.870412] Run /init as init process\n", ""}, // init/main.c's line before the agent runs
		{"", ""},
	}
	for _, tt := range tests {
		if got := kernelPanic([]byte(tt.give)); got != tt.want {
			t.Errorf("kernelPanic(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
