package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// lab is the guest as the agent found it.
type lab struct {
	cfg   config
	nodes map[int]cpus // node -> CPUs, from sysfs
	nics  []*nic
	nvme  nvmeDev
}

// nic is one NIC as the kernel describes it.
type nic struct {
	nicCfg
	virtio string // virtio1
	pci    string // 0000:81:00.0
	node   int    // the PCI function's numa_node
	msi    []int  // its msi_irqs
}

// queueIRQ is one queue vector of a NIC, named by the driver.
type queueIRQ struct {
	irq   int
	queue int
	dir   string // rx (virtioN-input.Q) or tx (virtioN-output.Q)
}

// nvmeDev is the NVMe controller and its queue IRQs (nvme0qN, N >= 1).
type nvmeDev struct {
	pci    string
	node   int
	admin  int   // nvme0q0
	queues []int // nvme0q1...
}

var queueName = regexp.MustCompile(`^(virtio\d+)-(input|output)\.(\d+)$`)

// queues reads the NIC's queue IRQs from /proc/interrupts.
func (n *nic) queues() []queueIRQ {
	in, err := readInterrupts()
	if err != nil {
		panic(err)
	}
	var out []queueIRQ
	for irq, name := range in.names {
		m := queueName.FindStringSubmatch(name)
		if m == nil || m[1] != n.virtio {
			continue
		}
		q, _ := strconv.Atoi(m[3])
		dir := map[string]string{"input": "rx", "output": "tx"}[m[2]]
		out = append(out, queueIRQ{irq: irq, queue: q, dir: dir})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].irq < out[j].irq })
	return out
}

func (n *nic) queueIRQs() []int {
	var out []int
	for _, q := range n.queues() {
		out = append(out, q.irq)
	}
	return out
}

func (l *lab) nic(name string) *nic {
	for _, n := range l.nics {
		if n.Name == name {
			return n
		}
	}
	panic("no NIC " + name)
}

func (l *lab) online() cpus {
	c, err := readCPUs("/sys/devices/system/cpu/online")
	if err != nil {
		panic(err)
	}
	return c
}

// prepare loads the modules, waits for the devices, and names and
// addresses the NICs.
func prepare(cfg config) (*lab, error) {
	l := &lab{cfg: cfg}
	info("kernel", "uname -r %s; osrelease %s", cfg.Release, readFile("/proc/sys/kernel/osrelease"))
	if err := loadModules(); err != nil {
		return nil, err
	}
	// The NICs and the NVMe drive's queue IRQs appear as their probes
	// finish (nvme probes asynchronously).
	deadline := time.Now().Add(60 * time.Second)
	for {
		macs := macsPresent()
		in, _ := readInterrupts()
		nvmeq := 0
		if in != nil {
			for _, name := range in.names {
				if strings.HasPrefix(name, "nvme0q") && name != "nvme0q0" {
					nvmeq++
				}
			}
		}
		if len(macs) == len(cfg.NICs) && nvmeq > 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("devices did not appear: NIC MACs %v, nvme queue IRQs %d", macs, nvmeq)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the last nvme queues
	var err error
	if l.nodes, err = nodeCPUs(); err != nil {
		return nil, err
	}
	if err := nameNICs(cfg.NICs); err != nil {
		return nil, err
	}
	for _, c := range cfg.NICs {
		for _, args := range [][]string{
			{"addr", "add", c.Addr, "dev", c.Name},
			{"link", "set", "dev", c.Name, "up"},
		} {
			if err := sh("ip", args...); err != nil {
				return nil, err
			}
		}
		// A permanent neighbour: no ARP on the wire between scenarios.
		if err := sh("arp", "-i", c.Name, "-s", c.Peer, c.PeerMAC); err != nil {
			return nil, err
		}
		n := &nic{nicCfg: c}
		link, err := os.Readlink("/sys/class/net/" + c.Name + "/device")
		if err != nil {
			return nil, err
		}
		n.virtio = filepath.Base(link)
		pciDir, err := filepath.EvalSymlinks("/sys/class/net/" + c.Name + "/device/..")
		if err != nil {
			return nil, err
		}
		n.pci = filepath.Base(pciDir)
		n.node, _ = strconv.Atoi(readFile(pciDir + "/numa_node"))
		n.msi = msiIRQs(pciDir)
		l.nics = append(l.nics, n)
		info("nic", "%s: %s at %s, numa_node %d, msi_irqs %v, queue IRQs %v", c.Name, n.virtio, n.pci, n.node, n.msi, n.queues())
	}
	if err := l.findNVMe(); err != nil {
		return nil, err
	}
	return l, nil
}

// nameNICs gives each NIC its configured name. Each the kernel named
// otherwise first gets a name no NIC has, so that no rename meets a name
// still taken.
func nameNICs(nics []nicCfg) error {
	macs := macsPresent()
	for i, c := range nics {
		dev, ok := macs[c.MAC]
		if !ok {
			return fmt.Errorf("no NIC with MAC %s", c.MAC)
		}
		if dev != c.Name {
			tmp := fmt.Sprintf("labnic%d", i)
			if err := sh("ip", "link", "set", "dev", dev, "name", tmp); err != nil {
				return err
			}
			macs[c.MAC] = tmp
		}
	}
	for _, c := range nics {
		if dev := macs[c.MAC]; dev != c.Name {
			if err := sh("ip", "link", "set", "dev", dev, "name", c.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *lab) findNVMe() error {
	dev, err := filepath.EvalSymlinks("/sys/class/nvme/nvme0/device")
	if err != nil {
		return err
	}
	l.nvme.pci = filepath.Base(dev)
	l.nvme.node, _ = strconv.Atoi(readFile(dev + "/numa_node"))
	in, err := readInterrupts()
	if err != nil {
		return err
	}
	l.nvme.admin = -1
	for irq, name := range in.names {
		switch {
		case name == "nvme0q0":
			l.nvme.admin = irq
		case strings.HasPrefix(name, "nvme0q"):
			l.nvme.queues = append(l.nvme.queues, irq)
		}
	}
	sort.Ints(l.nvme.queues)
	info("nvme", "nvme0 at %s, numa_node %d, admin IRQ %d, queue IRQs %v", l.nvme.pci, l.nvme.node, l.nvme.admin, l.nvme.queues)
	return nil
}

func msiIRQs(pciDir string) []int {
	ents, _ := os.ReadDir(pciDir + "/msi_irqs")
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// macsPresent maps the MAC of every non-loopback interface to its name.
func macsPresent() map[string]string {
	m := map[string]string{}
	ents, _ := os.ReadDir("/sys/class/net")
	for _, e := range ents {
		if e.Name() == "lo" {
			continue
		}
		m[readFile("/sys/class/net/"+e.Name()+"/address")] = e.Name()
	}
	return m
}

// loadModules insmods /etc/lab/modules in order, in passes: a module
// whose dependency is not yet in may go in on a later pass.
func loadModules() error {
	names := strings.Fields(readFile("/etc/lab/modules"))
	loaded := map[string]bool{}
	var last error
	for pass := 0; pass < 5 && len(loaded) < len(names); pass++ {
		for _, m := range names {
			if loaded[m] {
				continue
			}
			b, err := os.ReadFile("/lib/modules/" + m)
			if err != nil {
				return err
			}
			err = unix.InitModule(b, "")
			if err == nil || errors.Is(err, unix.EEXIST) {
				loaded[m] = true
			} else {
				last = fmt.Errorf("insmod %s (pass %d): %w", m, pass+1, err)
			}
		}
	}
	if len(loaded) < len(names) {
		return last
	}
	info("modules", "loaded %s", strings.Join(names, " "))
	return nil
}

func sh(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// result is one run of irqnuma.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("irqnuma %s: exit %d\nstdout:\n%.3000s\nstderr:\n%.3000s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// irqnuma runs /bin/irqnuma.
func irqnuma(args ...string) result {
	cmd := exec.Command("/bin/irqnuma", args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := result{args: args, stdout: o.String(), stderr: e.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		r.code = -1
		r.stderr += err.Error()
	}
	return r
}

// jsonOf runs irqnuma with -o json and decodes stdout into v; it must
// exit 0.
func jsonOf(v any, args ...string) result {
	r := irqnuma(append(args, "-o", "json")...)
	if r.code != 0 {
		must("run "+args[0], false, "%s", r)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		must("decode "+args[0], false, "%v\n%s", err, r)
	}
	return r
}

// rx asks the namespace for count packets to this NIC over flows source
// ports (the tap spreads flows over its queues) and returns how many
// arrived.
func (n *nic) rx(count int) int {
	data, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(n.ip()), Port: 9100})
	if err != nil {
		panic(err)
	}
	defer data.Close()
	req, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.ParseIP(n.Peer), Port: 9000})
	if err != nil {
		panic(err)
	}
	defer req.Close()
	var got int
	var replied atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 2048)
		for {
			wait := 2 * time.Second
			if replied.Load() {
				wait = 300 * time.Millisecond
			}
			data.SetReadDeadline(time.Now().Add(wait))
			if _, err := data.Read(buf); err != nil {
				return
			}
			got++
		}
	}()
	b, _ := json.Marshal(map[string]int{"port": 9100, "count": count, "flows": 64, "seconds": 5})
	if _, err := req.Write(b); err != nil {
		panic(err)
	}
	req.SetReadDeadline(time.Now().Add(15 * time.Second))
	buf := make([]byte, 256)
	if _, err := req.Read(buf); err != nil {
		info("traffic", "%s: no answer from %s: %v", n.Name, n.Peer, err)
	}
	replied.Store(true)
	data.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	wg.Wait()
	return got
}

// tx sends count packets to the namespace from each online CPU, so that
// every tx queue (XPS maps CPUs to queues) completes some.
func (n *nic) tx(count int, on cpus) {
	var wg sync.WaitGroup
	for _, cpu := range on.ids() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var set unix.CPUSet
			set.Set(cpu)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				panic(err)
			}
			c, err := net.DialUDP("udp4", &net.UDPAddr{IP: net.ParseIP(n.ip())}, &net.UDPAddr{IP: net.ParseIP(n.Peer), Port: 9001})
			if err != nil {
				panic(err)
			}
			defer c.Close()
			p := make([]byte, 64)
			for i := 0; i < count; i++ {
				c.Write(p)
				if i%32 == 31 {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
}

// traffic makes every queue IRQ of the NIC fire: packets in over many
// flows, and out from every online CPU. It reports the IRQs that did not.
func (l *lab) traffic(n *nic) (silent []int) {
	before, err := readInterrupts()
	if err != nil {
		panic(err)
	}
	got := n.rx(3000)
	n.tx(200, l.online())
	time.Sleep(200 * time.Millisecond)
	after, err := readInterrupts()
	if err != nil {
		panic(err)
	}
	for _, q := range n.queues() {
		if total(delta(before, after, q.irq)) == 0 {
			silent = append(silent, q.irq)
		}
	}
	info("traffic", "%s: %d of 3000 packets in; queue IRQs that did not fire: %v", n.Name, got, silent)
	return silent
}

// pollEvery calls read now and then every d, on a goroutine of its own,
// until the returned stop is called. stop returns once the call under
// way has ended, so what read gathered may then be used without a lock.
func pollEvery(d time.Duration, read func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			read()
			select {
			case <-done:
				return
			case <-time.After(d):
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}
