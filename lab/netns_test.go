//go:build vmtest

package lab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// labNet is the network namespace one guest's taps live in. Nothing in
// it routes anywhere: its only interfaces are lo and the taps, with
// TEST-NET addresses, so traffic reaches the guest and nothing else.
type labNet struct {
	Name string
}

// ipCmd runs ip with args and fails the test on error.
func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// newLabNet creates the namespace and one multi-queue tap per NIC, and
// removes it all when the test ends, whatever happened.
func newLabNet(t *testing.T, name string, nics []guestNIC) *labNet {
	removeStaleNets(t)
	ipCmd(t, "netns", "add", name)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v\n%s", name, err, out)
		}
	})
	// No IPv6: no router or neighbour solicitations, so the only packets
	// on the taps are the ones the scenarios ask for. The flow scenario's
	// source ports are reserved, so that no socket of the namespace is
	// given one as its ephemeral port while a flow needs it (a run lost
	// one flow to "bind: address already in use").
	ipCmd(t, "netns", "exec", name, "sh", "-c",
		"echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6 && echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6"+
			fmt.Sprintf(" && echo %d-%d > /proc/sys/net/ipv4/ip_local_reserved_ports", firstFlowPort, lastFlowPort))
	ipCmd(t, "-n", name, "link", "set", "lo", "up")
	for _, n := range nics {
		ipCmd(t, "-n", name, "tuntap", "add", "dev", n.Tap, "mode", "tap", "multi_queue")
		ipCmd(t, "-n", name, "link", "set", "dev", n.Tap, "address", n.PeerMAC)
		ipCmd(t, "-n", name, "addr", "add", n.Peer+"/24", "dev", n.Tap)
		ipCmd(t, "-n", name, "link", "set", n.Tap, "up")
		ipCmd(t, "-n", name, "neigh", "replace", strings.Split(n.Addr, "/")[0], "lladdr", n.MAC, "dev", n.Tap, "nud", "permanent")
	}
	return &labNet{Name: name}
}

// removeStaleNets deletes the namespaces of earlier lab runs whose test
// process is gone (killed before its cleanup could run): their names
// carry that process's id.
func removeStaleNets(t *testing.T) {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		rest, ok := strings.CutPrefix(f[0], "irqnuma-lab-")
		pid, _, _ := strings.Cut(rest, "-")
		if !ok || pid == "" {
			continue
		}
		if _, err := os.Stat("/proc/" + pid); err == nil {
			continue // its test is still running
		}
		t.Logf("removing %s, left by a lab run that was killed", f[0])
		ipCmd(t, "netns", "del", f[0])
	}
}

// inNetns runs f on an OS thread moved into the namespace; sockets f
// opens belong to it for good. The thread is discarded afterwards.
func inNetns(name string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		fd, err := os.Open("/run/netns/" + name)
		if err != nil {
			errc <- err
			return
		}
		defer fd.Close()
		if _, _, e := unix.RawSyscall(unix.SYS_SETNS, fd.Fd(), unix.CLONE_NEWNET, 0); e != 0 {
			errc <- fmt.Errorf("setns %s: %w", name, e)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// trafficRequest is what the guest asks the responder for: count UDP
// packets to its port, spread over flows source ports so that the tap
// spreads them over the queues, within seconds.
//
// With SrcPort set (firstFlowPort..lastFlowPort) it is one flow of Proto
// from that port instead, for the flow scenario: udp sends Count
// 64-byte packets, tcp connects to the guest's Port and writes Count
// 1 KiB chunks, both paced over about Count*2 ms.
type trafficRequest struct {
	Port    int    `json:"port"`
	Count   int    `json:"count"`
	Flows   int    `json:"flows"`
	Seconds int    `json:"seconds"`
	Proto   string `json:"proto,omitempty"`
	SrcPort int    `json:"src_port,omitempty"`
}

// Bounds of the traffic one guest can ask for.
const (
	maxRequests      = 400
	maxCount         = 20000
	maxFlows         = 64
	maxSecondsPerReq = 10
	responderPort    = 9000
	sinkPort         = 9001 // where the guest sends its own traffic; drained here
	firstFlowPort    = 40000
	lastFlowPort     = 40999
	maxFlowCount     = 500
)

// responder serves trafficRequests on port 9000 of the namespace. It
// answers only addresses of the namespace's own subnets and stops when
// the test ends.
type responder struct {
	ns    string
	conn  *net.UDPConn
	sink  *net.UDPConn
	flows []*net.UDPConn
	wg    sync.WaitGroup
	mu    sync.Mutex
	sent  int
	reqs  int
	log   func(string, ...any)
}

func startResponder(t *testing.T, ns string, subnets []*net.IPNet) *responder {
	r := &responder{ns: ns, log: t.Logf}
	err := inNetns(ns, func() error {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{Port: responderPort})
		if err != nil {
			return err
		}
		r.conn = c
		if r.sink, err = net.ListenUDP("udp4", &net.UDPAddr{Port: sinkPort}); err != nil {
			return err
		}
		for i := 0; i < maxFlows; i++ {
			f, err := net.ListenUDP("udp4", &net.UDPAddr{})
			if err != nil {
				return err
			}
			r.flows = append(r.flows, f)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("responder in %s: %v", ns, err)
	}
	t.Cleanup(func() {
		r.conn.Close()
		r.sink.Close()
		r.wg.Wait()
		for _, f := range r.flows {
			f.Close()
		}
	})
	r.wg.Add(2)
	go func() {
		defer r.wg.Done()
		buf := make([]byte, 2048)
		for {
			if _, _, err := r.sink.ReadFromUDP(buf); err != nil {
				return
			}
		}
	}()
	go func() {
		defer r.wg.Done()
		buf := make([]byte, 2048)
		for {
			n, from, err := r.conn.ReadFromUDP(buf)
			if err != nil {
				return
			}
			ok := false
			for _, s := range subnets {
				ok = ok || s.Contains(from.IP)
			}
			var req trafficRequest
			if !ok || json.Unmarshal(buf[:n], &req) != nil {
				continue
			}
			r.serve(from, req)
		}
	}()
	return r
}

// serve blasts one request's packets, then tells the guest how many went.
func (r *responder) serve(from *net.UDPAddr, req trafficRequest) {
	r.mu.Lock()
	r.reqs++
	over := r.reqs > maxRequests
	r.mu.Unlock()
	if over {
		r.log("responder: request %d refused: over %d", r.reqs, maxRequests)
		return
	}
	if req.SrcPort != 0 {
		r.serveFlow(from, req)
		return
	}
	req.Count = min(max(req.Count, 0), maxCount)
	req.Flows = min(max(req.Flows, 1), maxFlows)
	req.Seconds = min(max(req.Seconds, 1), maxSecondsPerReq)
	dst := &net.UDPAddr{IP: from.IP, Port: req.Port}
	payload := make([]byte, 64)
	deadline := time.Now().Add(time.Duration(req.Seconds) * time.Second)
	sent := 0
	for i := 0; sent < req.Count && time.Now().Before(deadline); i++ {
		if _, err := r.flows[i%req.Flows].WriteToUDP(payload, dst); err == nil {
			sent++
		}
		if (i+1)%req.Flows == 0 {
			time.Sleep(2 * time.Millisecond) // let the guest keep up
		}
	}
	r.mu.Lock()
	r.sent += sent
	r.mu.Unlock()
	reply, _ := json.Marshal(map[string]int{"sent": sent})
	r.conn.WriteToUDP(reply, from)
}

// serveFlow sends one flow from req.SrcPort to the guest's req.Port,
// from a socket made in the namespace, then says how many packets (udp)
// or chunks (tcp) went, or why none.
func (r *responder) serveFlow(from *net.UDPAddr, req trafficRequest) {
	reply := map[string]any{}
	if req.SrcPort < firstFlowPort || req.SrcPort > lastFlowPort || (req.Proto != "udp" && req.Proto != "tcp") {
		reply["error"] = fmt.Sprintf("want proto udp or tcp and a source port %d-%d", firstFlowPort, lastFlowPort)
	} else {
		count := min(max(req.Count, 1), maxFlowCount)
		sent := 0
		err := inNetns(r.ns, func() error {
			var err error
			sent, err = sendFlow(req.Proto, req.SrcPort, &net.UDPAddr{IP: from.IP, Port: req.Port}, count)
			return err
		})
		reply["sent"] = sent
		if err != nil {
			reply["error"] = err.Error()
		}
	}
	b, _ := json.Marshal(reply)
	r.conn.WriteToUDP(b, from)
}

// sendFlow sends count packets or chunks of one flow from local port
// src to dst, 2 ms apart.
func sendFlow(proto string, src int, dst *net.UDPAddr, count int) (int, error) {
	var c net.Conn
	var err error
	size := 64
	if proto == "udp" {
		c, err = net.DialUDP("udp4", &net.UDPAddr{Port: src}, dst)
	} else {
		size = 1024
		d := net.Dialer{LocalAddr: &net.TCPAddr{Port: src}, Timeout: 2 * time.Second}
		c, err = d.Dial("tcp4", (&net.TCPAddr{IP: dst.IP, Port: dst.Port}).String())
	}
	if err != nil {
		return 0, err
	}
	defer c.Close()
	buf := make([]byte, size)
	sent := 0
	for ; sent < count; sent++ {
		if _, err := c.Write(buf); err != nil {
			return sent, err
		}
		time.Sleep(2 * time.Millisecond)
	}
	return sent, nil
}

// startIperf3Server runs iperf3's server in the namespace on addr, port
// 5201, for the bench scenario's client in the guest, and stops it when
// the test ends.
func startIperf3Server(t *testing.T, ns, addr string) {
	cmd := exec.Command("ip", "netns", "exec", ns, "iperf3", "-s", "-B", addr, "-p", "5201")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("iperf3 server in %s: %v", ns, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() // ip netns exec became iperf3: this is its pid
		cmd.Wait()
		if t.Failed() {
			t.Logf("iperf3 server:\n%.4000s", out.String())
		}
	})
}
