package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/irqnuma/irqnuma/internal/unknown"
)

// flowBenchDoc is what the agent reads of irqnuma bench -o json with
// the flow placements.
type flowBenchDoc struct {
	Plan struct {
		NICNode int `json:"nic_node"`
		Flow    *struct {
			Flow    string         `json:"flow"`
			Queue   *uint32        `json:"queue"`
			QueueBy string         `json:"queue_by"`
			Unknown unknown.Reason `json:"queue_unknown"`
			IRQ     int            `json:"irq"` // 0: null, unknown
			Core    *int           `json:"core"`
			Sibling *int           `json:"sibling"`
			Other   *int           `json:"other"`
			NAPIPID int            `json:"napi_pid"` // 0: null, not threaded or unknown
			// NAPIUnknown says why NAPIPID is null: not applicable when
			// NAPI is not threaded.
			NAPIUnknown *unknown.Reason `json:"napi_pid_unknown"`
		} `json:"flow"`
	} `json:"plan"`
	Cells []struct {
		Name       string `json:"name"`
		Applicable bool   `json:"applicable"`
		Reason     string `json:"reason"`
		IRQNode    int    `json:"irq_node"`
		AppNode    int    `json:"app_node"`
		IRQCPUs    string `json:"irq_cpus"`
		AppCPUs    string `json:"app_cpus"`
		PinIRQs    []int  `json:"pin_irqs"`
		Runs       []struct {
			Error  string `json:"error"`
			Result *struct {
				Value float64 `json:"value"`
			} `json:"result"`
		} `json:"runs"`
	} `json:"cells"`
	StateFiles []string `json:"state_files"`
	Unrestored []string `json:"unrestored"`
	Stopped    string   `json:"stopped"`
}

// flowBenchPort is the guest's port of the bench's flow: iperf3 binds
// its data stream there (--cport), so that the flow is known before it
// runs.
const flowBenchPort = 45000

// scenarioFlowBench: irqnuma bench runs the three flow placements with
// a single-stream UDP iperf3 whose server (in the test's namespace)
// sends into the RSS NIC (-R), for the flow given with --flow, then
// found with --observe (which must find the queue --flow predicted). With
// threaded NAPI off and the NIC's queue IRQs first moved to the other
// node, each applicable row has the flow's queue IRQ on one CPU C of the
// NIC's node and the command on C or on another core of that node
// (flow-sibling is refused: the guest has one thread per core); during
// the runs the flow's IRQ is effective on C while every other IRQ of
// the NIC stays where it was; afterwards every IRQ's smp_affinity_list
// and every napi kthread's CPUs are as before. With threaded NAPI on,
// a dry run refuses the flow placements where netdev does not name the
// queue's NAPI (both lab kernels), and plans its thread where it does.
func scenarioFlowBench(l *lab) {
	n := l.rssNIC()
	// The NIC's queue IRQs on the other node first, so that the flow's
	// IRQ must move to C and back, and the others must stay there.
	orig := affinities()
	defer func() {
		for _, q := range n.queueIRQs() {
			if affinityList(q) != orig[q] {
				writeAffinity(q, orig[q])
			}
		}
	}()
	other := l.nodes[1-n.node]
	for i, q := range n.queueIRQs() {
		if err := writeAffinity(q, itoa(other.ids()[i%other.len()])); err != nil {
			must("flow-bench-scramble", false, "IRQ %d: %v", q, err)
		}
	}
	fl := fmt.Sprintf("udp %s:5201 %s:%d", n.Peer, n.ip(), flowBenchPort)
	// The table the device steers by is the one ethtool -x shows only
	// once the driver has sent it: 6.12's virtio_net sends it at probe,
	// 6.1's not until an ethtool -X (alone, this scenario's pinned runs
	// on 6.1 landed on the queue the guest had sent the flow's first
	// datagram on, not the predicted one). -X default sends it on both.
	ethtool("-X", n.Name, "default")
	var pred flowJSON
	jsonOf(&pred, "flow", "udp", n.Peer+":5201", n.ip()+":"+itoa(flowBenchPort))
	must("flow-predicted", pred.Queue != nil, "irqnuma flow %s: a queue: %+v", fl, pred)
	defer steerTx(l, n, *pred.Queue)()
	predicted, _ := flowBench(l, n, "flow", "--flow", fl)
	// The same flow found instead by its counters during a first,
	// unpinned run (qstats on 6.12, the queue IRQs' counts on 6.1): the
	// queue --flow predicted.
	observed, by := flowBench(l, n, "observe", "--observe")
	check("observe-queue", observed == predicted && strings.HasPrefix(by, "observed: "),
		"--observe found queue %d (%s); --flow predicted queue %d", observed, by, predicted)
	flowBenchThreaded(l, n, fl, predicted)
}

// flowBenchThreaded: with threaded NAPI on, bench --dry-run plans the
// flow placements only if it knows the flow's NAPI kthread (netdev ties
// it to the queue); where it does not, they are refused saying why, and
// the node-wide local cell beside them still is planned.
func flowBenchThreaded(l *lab, n *nic, fl string, queue uint32) {
	setThreaded(n.Name, 1)
	defer setThreaded(n.Name, 0)
	before := affinities()
	var doc flowBenchDoc
	r := irqnuma("bench", "--nic", n.Name, "--dry-run", "-o", "json", "--flow", fl,
		"--placements", "local,flow-same-core,flow-other-core", "--", "iperf3", "-c", n.Peer, "-u", "-R", "-J")
	must("threaded-exit", r.code == 0 && json.Unmarshal([]byte(r.stdout), &doc) == nil, "%s", r)
	d := diffAffinities(before, affinities())
	check("threaded-unchanged", len(d) == 0, "a dry run changes no smp_affinity_list: %v", d)
	fp := doc.Plan.Flow
	must("threaded-flow", fp != nil && fp.Queue != nil && *fp.Queue == queue && len(doc.Cells) == 3,
		"the plan's flow on queue %d, three cells: %+v, %d cells", queue, fp, len(doc.Cells))
	check("threaded-local", doc.Cells[0].Applicable, "local planned: %+v", doc.Cells[0])
	links := l.cfg.LinksNAPI != nil && *l.cfg.LinksNAPI
	for _, c := range doc.Cells[1:] {
		if links {
			check("threaded-"+c.Name+"-planned", c.Applicable && fp.NAPIPID > 0,
				"netdev names the queue's NAPI: the cell is planned with its thread (PID %d): applicable %v (%s)", fp.NAPIPID, c.Applicable, c.Reason)
			continue
		}
		want := fmt.Sprintf("queue %d's receive work runs in a NAPI kthread: threaded NAPI is on, and which thread serves the queue is unknown (", queue)
		check("threaded-"+c.Name+"-refused", !c.Applicable && strings.HasPrefix(c.Reason, want) && fp.NAPIPID == 0 && fp.NAPIUnknown != nil && fp.NAPIUnknown.Kind != unknown.KindNotApplicable,
			"virtio_net does not name the queue's NAPI to netdev: refused, applicable %v, napi_pid %d, reason %q", c.Applicable, fp.NAPIPID, c.Reason)
	}
}

// flowBench runs the flow placements with how (--flow FLOW or
// --observe) and checks them; name prefixes its checks. It returns the
// flow's queue and how bench found it.
func flowBench(l *lab, n *nic, name string, how ...string) (uint32, string) {
	before, threads := affinities(), napiAffinities(n.Name)
	diag := readFlowDiag(n.Name)
	stop := pollIRQs(n.queueIRQs())
	socks := map[string]bool{}
	stopSocks := pollEvery(100*time.Millisecond, func() {
		for _, s := range udpSockets(flowBenchPort) {
			socks[s] = true
		}
	})
	args := append([]string{"bench", "--nic", n.Name, "--repeat", "1", "-o", "json",
		"--placements", "flow-same-core,flow-sibling,flow-other-core"}, how...)
	r := irqnuma(append(args, "--", "iperf3", "-c", n.Peer, "-u", "-b", "20M", "-t", "2", "-R",
		"--cport", itoa(flowBenchPort), "-J")...)
	samples := stop()
	stopSocks()
	info(name+"-udp-sockets", "the guest's UDP sockets on port %d during the bench (local->remote, hex): %v", flowBenchPort, socks)
	diag.report(name, readFlowDiag(n.Name))
	info(name+"-stderr", "%.6000s", r.stderr)
	d := diffAffinities(before, affinities())
	check(name+"-restored", len(d) == 0, "every smp_affinity_list as before the bench: %v", d)
	dt := diffThreads(threads, napiAffinities(n.Name))
	// napi kthreads outlive threaded NAPI being turned off (the steer
	// scenario leaves eth2's behind): they need only be as they were.
	check(name+"-threads-restored", len(dt) == 0, "every napi/%s-* kthread's CPUs as before (%d threads): %v", n.Name, len(threads), dt)
	left, _ := filepath.Glob("/var/lib/irqnuma/state-*.json")
	check(name+"-state-retired", len(left) == 0, "no state file left to restore: %v", left)
	must(name+"-exit", r.code == 0, "%s", r)
	var doc flowBenchDoc
	must(name+"-decode", json.Unmarshal([]byte(r.stdout), &doc) == nil, "bench -o json: %.2000s", r.stdout)
	sendFile(name+"-bench.json", []byte(r.stdout))
	fp := doc.Plan.Flow
	must(name+"-flow", fp != nil && fp.Queue != nil && fp.IRQ > 0 && fp.Core != nil,
		"the plan's flow has a queue, its IRQ and C: %+v", fp)
	c := *fp.Core
	check(name+"-core", l.nodes[n.node].has(c), "C = CPU %d, on the NIC's node %d (CPUs %s)", c, n.node, l.nodes[n.node])
	checkFlowCells(l, n, name, &doc)
	checkFlowSamples(n, name, fp.IRQ, c, before, samples)
	return *fp.Queue, fp.QueueBy
}

// checkFlowCells checks each flow row: as planned, run once with a
// throughput; flow-sibling refused for want of SMT.
func checkFlowCells(l *lab, n *nic, name string, doc *flowBenchDoc) {
	fp := doc.Plan.Flow
	c := cpus(1) << *fp.Core
	must(name+"-cells", len(doc.Cells) == 3, "three flow placements: %d", len(doc.Cells))
	for _, cell := range doc.Cells {
		id := name + "-" + cell.Name
		if cell.Name == "flow-sibling" {
			check(id+"-refused", !cell.Applicable && strings.HasPrefix(cell.Reason, "no SMT sibling") && len(cell.Runs) == 0,
				"the guest has one thread per core: applicable %v, reason %q, %d runs", cell.Applicable, cell.Reason, len(cell.Runs))
			continue
		}
		irqCPUs, appCPUs := mustCPUs(cell.IRQCPUs), mustCPUs(cell.AppCPUs)
		wantApp := appCPUs == c
		if cell.Name == "flow-other-core" {
			wantApp = appCPUs.len() == 1 && appCPUs != c && appCPUs.within(l.nodes[n.node])
		}
		check(id+"-placed", cell.Applicable && irqCPUs == c && wantApp && slices.Equal(cell.PinIRQs, []int{fp.IRQ}) &&
			cell.IRQNode == n.node && cell.AppNode == n.node,
			"applicable %v (%s); IRQ %v on %s (node %d), the command on %s (node %d); C is %s",
			cell.Applicable, cell.Reason, cell.PinIRQs, irqCPUs, cell.IRQNode, appCPUs, cell.AppNode, c)
		if check(id+"-ran", len(cell.Runs) == 1 && cell.Runs[0].Error == "" && cell.Runs[0].Result != nil && cell.Runs[0].Result.Value > 0,
			"one run with a throughput: %+v", cell.Runs) {
			info(id+"-throughput", "%.1f Mbit/s", cell.Runs[0].Result.Value/1e6)
		}
	}
}

// checkFlowSamples checks what the agent saw during the bench: the
// flow's IRQ effective on C, and no other queue IRQ of the NIC moved.
func checkFlowSamples(n *nic, name string, flowIRQ, c int, before map[int]string, samples []irqSample) {
	var onC int
	var moved []string
	for _, s := range samples {
		if s.effective[flowIRQ] == itoa(c) && s.affinity[flowIRQ] == itoa(c) {
			onC++
		}
		for irq, a := range s.affinity {
			if irq != flowIRQ && a != before[irq] {
				moved = append(moved, fmt.Sprintf("IRQ %d on %s (was %s)", irq, a, before[irq]))
			}
		}
	}
	check(name+"-irq-on-c", onC > 0, "the flow's IRQ %d was effective on C = CPU %d in %d of %d readings during the bench", flowIRQ, c, onC, len(samples))
	sort.Strings(moved)
	check(name+"-others-untouched", len(moved) == 0, "%s's other queue IRQs stayed where they were during the bench: %.1000v", n.Name, slices.Compact(moved))
}

// irqSample is one reading of some IRQs' smp_affinity_list and
// effective_affinity_list.
type irqSample struct {
	affinity, effective map[int]string
}

// pollIRQs reads the IRQs' affinities every 20 ms until the returned
// function is called, which returns every reading.
func pollIRQs(irqs []int) func() []irqSample {
	var out []irqSample
	stop := pollEvery(20*time.Millisecond, func() {
		s := irqSample{affinity: map[int]string{}, effective: map[int]string{}}
		for _, q := range irqs {
			s.affinity[q], s.effective[q] = affinityList(q), effectiveList(q)
		}
		out = append(out, s)
	})
	return func() []irqSample {
		stop()
		return out
	}
}

// napiAffinities reads the CPUs of each napi/IF-* kernel thread, by pid.
func napiAffinities(ifname string) map[int]cpus {
	out := map[int]cpus{}
	for _, pids := range napiThreads(ifname) {
		for _, pid := range pids {
			out[pid] = kthreadAffinity(pid)
		}
	}
	return out
}

func diffThreads(want, got map[int]cpus) []string {
	var d []string
	for pid, w := range want {
		if g, ok := got[pid]; !ok || g != w {
			d = append(d, fmt.Sprintf("pid %d: %s, want %s", pid, g, w))
		}
	}
	sort.Strings(d)
	return d
}

// steerTx makes every CPU of the guest transmit on tx queue q (xps_cpus)
// and returns what puts the queues' xps_cpus back. It keeps the flow's
// packets off a QEMU deadlock: with RSS in software (its eBPF steering
// does not load here), QEMU takes a packet from the tap queue the host
// chose, which is the queue the guest last sent that flow on, and hands
// it to the RSS queue; when that queue has no buffer free, the packet
// waits on the tap queue it came from, and QEMU retries it only when
// the guest refills that queue (virtio_net_handle_rx flushes its own
// queue), which it never does if no other flow lands there. So a flow
// pinned with its reader to one busy CPU stalled for good whenever its
// RSS queue ran dry: guests stopped reporting, or a 2s run took 23-33s.
// Sent on q, the flow comes back on tap queue q, which is its RSS queue
// too, and a dry queue holds up only its own tap queue until refilled.
func steerTx(l *lab, n *nic, q uint32) func() {
	var all cpus
	for _, c := range l.nodes {
		all |= c
	}
	mask := strconv.FormatUint(uint64(all), 16)
	own := fmt.Sprintf("/sys/class/net/%s/queues/tx-%d/xps_cpus", n.Name, q)
	others, _ := filepath.Glob("/sys/class/net/" + n.Name + "/queues/tx-*/xps_cpus")
	others = slices.DeleteFunc(others, func(f string) bool { return f == own })
	// q's first: a CPU must never be left with no tx queue of its own.
	files := append([]string{own}, others...)
	orig := map[string]string{}
	for _, f := range files {
		orig[f] = readFile(f)
	}
	restore := func() {
		for _, f := range slices.Backward(files) {
			if err := os.WriteFile(f, []byte(orig[f]), 0); err != nil {
				check("xps-restored", false, "%s back to %s: %v", f, orig[f], err)
			}
		}
	}
	for _, f := range files {
		v := "0"
		if f == own {
			v = mask
		}
		if err := os.WriteFile(f, []byte(v), 0); err != nil {
			restore()
			must("xps", false, "%s: %v", f, err)
		}
	}
	info("xps", "%s: every CPU (%s) transmits on tx-%d, the flow's predicted queue (xps_cpus were %v)", n.Name, mask, q, orig)
	return restore
}
