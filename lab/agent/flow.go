package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/irqnuma/irqnuma/internal/judge/flow"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// flowJSON is the part of irqnuma flow -o json the scenario reads.
type flowJSON struct {
	Queue    *uint32        `json:"queue"`
	Unknown  unknown.Reason `json:"queue_unknown"`
	Observed *struct {
		Source  string  `json:"counter_source"`
		Busiest *uint32 `json:"busiest_queue"`
		Delta   uint64  `json:"busiest_delta"`
		Landed  *bool   `json:"landed"`
		Verdict string  `json:"verdict"`
	} `json:"observed"`
}

// flowTable is one indirection table the scenario sets, the queues it
// may send a flow to, and whether irqnuma's --observe judges each flow
// too (the default table; the others compare the prediction with the
// agent's own packet counts only, to keep the scenario short).
type flowTable struct {
	name    string
	args    []string // after -X IF
	allowed func(q uint32) bool
	observe bool
}

// oneFlow is one flow sent from the namespace into the guest.
type oneFlow struct {
	proto          string
	sport, dport   int
	peer, guestIP  string
	predicted      *uint32
	truth          map[uint32]uint64 // rx queue -> received packets' rise
	busiest        int               // -1: none rose, -2: tie
	observed       *flowJSON
	sent           int
	sendErr, irqOK string
	nic            string
	source         string    // where the rx packets were counted
	inWindow       uint64    // packets on any rx queue by irqnuma --observe's exit
	keep           io.Closer // the guest's socket of the flow, open until predicted
}

func (f *oneFlow) args() []string {
	return []string{"flow", f.proto, f.peer + ":" + strconv.Itoa(f.sport), f.guestIP + ":" + strconv.Itoa(f.dport)}
}

// scenarioFlow: for 16 UDP and 16 TCP flows sent from the namespace
// into the RSS NIC, each from its own source port, the queue irqnuma
// flow predicts is the rx queue whose received packets rose (netdev
// qstats on 6.12, ethtool -S rx_queue_N_packets on 6.1), with the default table, with ethtool -X
// equal 2 (no flow on queues 2 and 3) and with a weighted table. With
// the default table each flow is predicted by irqnuma flow PROTO SRC DST
// --observe, which must also say it landed (by qstats where the kernel
// has them, 6.12, else by ethtool -S); with the others, all 32 at
// once by irqnuma flow --pid from the agent's sockets, kept open.
func scenarioFlow(l *lab) {
	n := l.rssNIC()
	defer ethtool("-X", n.Name, "default")
	tables := []flowTable{
		{name: "default", args: []string{"default"}, allowed: func(uint32) bool { return true }, observe: true},
		{name: "equal-2", args: []string{"equal", "2"}, allowed: func(q uint32) bool { return q < 2 }},
		{name: "weight-1234", args: []string{"weight", "1", "2", "3", "4"}, allowed: func(uint32) bool { return true }},
	}
	rxIRQ := map[int]uint32{}
	for _, q := range n.queues() {
		if q.dir == "rx" {
			rxIRQ[q.irq] = uint32(q.queue)
		}
	}
	must("rx-irqs", len(rxIRQ) == n.QueuePairs, "%s's rx queue IRQs %v, want %d", n.Name, rxIRQ, n.QueuePairs)
	for ti, t := range tables {
		ethtool(append([]string{"-X", n.Name}, t.args...)...)
		var flows []*oneFlow
		for i := range 32 {
			proto := "udp"
			if i >= 16 {
				proto = "tcp"
			}
			f := &oneFlow{proto: proto, sport: 40000 + 100*ti + i, dport: 6000 + 7*i, peer: n.Peer, guestIP: n.ip(), nic: n.Name}
			f.run(rxIRQ, t.observe)
			flows = append(flows, f)
		}
		if !t.observe {
			predictByPID(flows)
		}
		for _, f := range flows {
			if f.keep != nil {
				f.keep.Close()
			}
		}
		judgeFlows(t, flows)
	}
	observedText(n, rxIRQ)
}

// run sends the flow and reads each rx queue's received packets around
// it; with observe, irqnuma flow --observe runs over the traffic (sent
// once irqnuma says its first sample is taken) and gives the prediction.
// Packets, not IRQ counts, are the truth: under NAPI one interrupt may
// bring the whole flow (a poll takes up to 64 packets, and the IRQ stays
// masked while it polls), so the flow's queue can rise by 1 while another
// queue rises by 1 or 2 for the responder's reply or an ARP, and the
// busiest queue by interrupts is then a tie or the wrong one.
func (f *oneFlow) run(rxIRQ map[int]uint32, observe bool) {
	fsys := liveFS()
	before := mustCounters(fsys, f.nic)
	var cmd *exec.Cmd
	var out, errOut bytes.Buffer
	count := 30
	if observe {
		count = 40
		// 750ms: the host's responder, on a loaded machine, can take
		// more than 250ms to start a flow's traffic, and a second sample
		// of one ethtool ioctl (6.1) closes the window on time.
		cmd = exec.Command("/bin/irqnuma", append(f.args(), "--observe", "750ms", "-o", "json")...)
		cmd.Stdout = &out
		pipe, err := cmd.StderrPipe()
		if err != nil {
			panic(err)
		}
		if err := cmd.Start(); err != nil {
			panic(err)
		}
		// "observing eth2's rx queues for 750ms (...)": the first sample is taken.
		first, _ := bufio.NewReader(pipe).ReadString('\n')
		errOut.WriteString(first)
		// The counters as irqnuma exits: whether any of the flow had
		// arrived inside its window.
		exited := make(chan *flow.Counters, 1)
		go func() {
			io.Copy(&errOut, pipe)
			cmd.Wait()
			exited <- mustCounters(fsys, f.nic)
		}()
		defer func() {
			atExit := <-exited
			for q, n := range atExit.Queues {
				f.inWindow += n - before.Queues[q]
			}
			var j flowJSON
			if err := json.Unmarshal(out.Bytes(), &j); err != nil {
				f.irqOK = fmt.Sprintf("irqnuma %s: %v: %.500s %.500s", strings.Join(f.args(), " "), err, out.String(), errOut.String())
				return
			}
			f.predicted, f.observed = j.Queue, &j
		}()
	}
	f.sent, f.sendErr, f.keep = receiveFlow(f.proto, f.guestIP, f.peer, f.sport, f.dport, count)
	if observe {
		time.Sleep(50 * time.Millisecond)
	}
	after := mustCounters(fsys, f.nic)
	f.source = after.Source
	f.truth, f.busiest = map[uint32]uint64{}, -1
	var top uint64
	for _, q := range rxIRQ {
		d := after.Queues[q] - before.Queues[q]
		f.truth[q] = d
		switch {
		case d > top:
			top, f.busiest = d, int(q)
		case d == top && d > 0:
			f.busiest = -2
		}
	}
}

// liveFS is the guest's own root.
func liveFS() kfile.FS {
	fsys, err := kfile.Open("/")
	if err != nil {
		panic(err)
	}
	return fsys
}

// mustCounters reads nic's per-queue rx packet counters (netdev qstats,
// else the driver's ethtool -S per-queue packets); the scenario needs
// packets, so IRQ counts do not do.
func mustCounters(fsys kfile.FS, nic string) *flow.Counters {
	c, err := flow.ReadCounters(fsys, nic)
	if err != nil || c.Source == flow.CountersIRQ {
		// must only when failing: one check line per reading floods
		// the guest's serial console.
		must("rx-packets", false, "%s's per-queue rx packets: %v (%+v)", nic, err, c)
	}
	return c
}

// predictByPID predicts every flow at once from the agent's own
// connected sockets (irqnuma flow --pid), which run kept open.
func predictByPID(flows []*oneFlow) {
	var doc struct {
		Processes []struct {
			Flows []struct {
				Proto   string         `json:"proto"`
				Src     string         `json:"src"`
				Dst     string         `json:"dst"`
				Queue   *uint32        `json:"queue"`
				Unknown unknown.Reason `json:"queue_unknown"`
			} `json:"flows"`
		} `json:"processes"`
	}
	jsonOf(&doc, "flow", "--pid", strconv.Itoa(os.Getpid()))
	for _, f := range flows {
		for _, p := range doc.Processes {
			for _, pf := range p.Flows {
				if pf.Proto == f.proto && pf.Src == f.peer+":"+strconv.Itoa(f.sport) && pf.Dst == f.guestIP+":"+strconv.Itoa(f.dport) {
					f.predicted, f.observed = pf.Queue, &flowJSON{Queue: pf.Queue, Unknown: pf.Unknown}
				}
			}
		}
		if f.observed == nil && f.irqOK == "" {
			f.irqOK = "irqnuma flow --pid lists no such flow"
		}
	}
}

// receiveFlow asks the namespace's responder for one flow from sport
// to this guest's dport and takes it in on a socket connected to the
// peer (a connected UDP socket, the accepted TCP one), which it returns
// open; with how many packets or chunks the responder said went, and
// any error either side saw.
func receiveFlow(proto, guest, peer string, sport, dport, count int) (int, string, io.Closer) {
	var wg sync.WaitGroup
	var recvErr error
	var keep io.Closer
	var udp *net.UDPConn
	ip := net.ParseIP(guest)
	switch proto {
	case "udp":
		c, err := net.DialUDP("udp4", &net.UDPAddr{IP: ip, Port: dport}, &net.UDPAddr{IP: net.ParseIP(peer), Port: sport})
		if err != nil {
			return 0, err.Error(), nil
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		udp, keep = c, c
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 2048)
			for {
				if _, err := c.Read(buf); err != nil {
					return
				}
			}
		}()
	default:
		ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: ip, Port: dport})
		if err != nil {
			return 0, err.Error(), nil
		}
		defer ln.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ln.SetDeadline(time.Now().Add(3 * time.Second))
			c, err := ln.AcceptTCP()
			if err != nil {
				recvErr = err
				return
			}
			keep = c
			c.SetDeadline(time.Now().Add(3 * time.Second))
			_, recvErr = io.Copy(io.Discard, c)
		}()
	}
	req, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.ParseIP(peer), Port: 9000})
	if err != nil {
		return 0, err.Error(), keep
	}
	defer req.Close()
	b, _ := json.Marshal(map[string]any{"port": dport, "count": count, "proto": proto, "src_port": sport})
	if _, err := req.Write(b); err != nil {
		return 0, err.Error(), keep
	}
	req.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 512)
	k, err := req.Read(buf)
	if err != nil {
		wg.Wait()
		return 0, "no answer from the responder: " + err.Error(), keep
	}
	var reply struct {
		Sent  int    `json:"sent"`
		Error string `json:"error"`
	}
	json.Unmarshal(buf[:k], &reply)
	if udp != nil {
		udp.SetReadDeadline(time.Now().Add(30 * time.Millisecond)) // the last packets in
	}
	wg.Wait()
	why := reply.Error
	if recvErr != nil {
		why += " guest: " + recvErr.Error()
	}
	return reply.Sent, strings.TrimSpace(why), keep
}

// judgeFlows checks one table's flows: each arrived on one queue, the
// predicted one, which the table allows; with --observe, irqnuma saw
// the same.
func judgeFlows(t flowTable, flows []*oneFlow) {
	var bad, notLanded, late []string
	queues := map[uint32]int{}
	source, truth := "", ""
	for _, f := range flows {
		truth = f.source
		id := fmt.Sprintf("%s %d->%d", f.proto, f.sport, f.dport)
		switch {
		case f.irqOK != "":
			bad = append(bad, id+": "+f.irqOK)
		case f.sendErr != "" || f.sent == 0:
			bad = append(bad, fmt.Sprintf("%s: %d sent: %s", id, f.sent, f.sendErr))
		case f.predicted == nil:
			bad = append(bad, id+": "+f.observed.Unknown.Detail)
		case f.busiest != int(*f.predicted) || !t.allowed(*f.predicted):
			bad = append(bad, fmt.Sprintf("%s: predicted queue %d, rx packets rose %v", id, *f.predicted, f.truth))
		default:
			queues[*f.predicted]++
		}
		if o := f.observed; t.observe && o != nil && o.Observed != nil {
			source = o.Observed.Source
			switch {
			case o.Observed.Landed != nil && *o.Observed.Landed:
			case f.inWindow == 0 && o.Observed.Busiest == nil:
				// irqnuma saw nothing and nothing had come: the
				// responder (on a loaded host) sent after the window.
				late = append(late, id)
			default:
				notLanded = append(notLanded, fmt.Sprintf("%s: %s (%d packets had arrived by its exit)", id, o.Observed.Verdict, f.inWindow))
			}
		} else if t.observe {
			notLanded = append(notLanded, id+": no observation")
		}
	}
	check("flows-"+t.name, len(bad) == 0 && len(queues) > 1,
		"%d of %d flows (16 udp, 16 tcp) arrived on the predicted queue, by the rx queues' packets (%s); flows per queue %v; wrong:\n%s",
		len(flows)-len(bad), len(flows), truth, queues, strings.Join(bad, "\n"))
	if t.observe {
		check("observe-"+t.name, len(notLanded) == 0 && 2*len(late) < len(flows),
			"irqnuma flow --observe (counters: %s) said %d of %d landed on the predicted queue; %d saw nothing, rightly (none of the flow had arrived when it ended: %v); wrong:\n%s",
			source, len(flows)-len(notLanded)-len(late), len(flows), len(late), late, strings.Join(notLanded, "\n"))
	}
}

// observedText runs one UDP flow with the default table and reports
// irqnuma flow --observe's text, for the README.
func observedText(n *nic, rxIRQ map[int]uint32) {
	ethtool("-X", n.Name, "default")
	f := &oneFlow{proto: "udp", sport: 40900, dport: 5201, peer: n.Peer, guestIP: n.ip()}
	cmd := exec.Command("/bin/irqnuma", append(f.args(), "--observe", "2s")...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	time.Sleep(200 * time.Millisecond)
	sent, why, keep := receiveFlow("udp", f.guestIP, f.peer, f.sport, f.dport, 400)
	if keep != nil {
		keep.Close()
	}
	err := cmd.Wait()
	info("observe-text", "$ irqnuma %s --observe 2s   (%d packets sent %s; exit %v)\n%s", strings.Join(f.args(), " "), sent, why, err, out.String())
}
