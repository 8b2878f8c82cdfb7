package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// interval is one JSON line of `irqnuma watch -o json`.
type interval struct {
	Seq     int       `json:"seq"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Seconds float64   `json:"seconds"`
	NICs    []struct {
		Name string `json:"name"`
		IRQs []struct {
			IRQ    int      `json:"irq"`
			PerSec *float64 `json:"per_sec"`
			CPUs   []struct {
				CPU    int     `json:"cpu"`
				PerSec float64 `json:"per_sec"`
			} `json:"cpus"`
		} `json:"irqs"`
		Verdict struct {
			Text  string `json:"text"`
			CPU   *int   `json:"cpu"`
			Node  *int   `json:"node"`
			Local *bool  `json:"local"`
		} `json:"verdict"`
	} `json:"nics"`
	CPUs []struct {
		CPU   int      `json:"cpu"`
		NetRX *float64 `json:"net_rx_per_sec"`
	} `json:"cpus"`
}

// scenarioWatch: during traffic, watch's per-CPU rates times the
// interval are the /proc/interrupts deltas, and NET_RX softirqs run on
// the CPUs effective_affinity names.
func scenarioWatch(l *lab) {
	n := l.nic("eth0")
	r := irqnuma("irq", "pin", n.Name, "--state", "/tmp/lab-watch.json")
	must("pin", r.code == 0, "%s", r)
	must("settle", len(l.traffic(n)) == 0, "every queue IRQ of %s fired after the pin", n.Name)
	var rxCPUs cpus
	for _, q := range n.queues() {
		if q.dir == "rx" {
			rxCPUs |= effective(q.irq)
		}
	}
	m := measureWatch(n)
	checkWatchCounts(n, m)
	checkWatchNetRX(rxCPUs, m)
	watchText(n)
}

// watchText runs watch as a user would before a benchmark, piped:
// `irqnuma watch --count 4 --interval 1s --comm iperf3`, then an iperf3
// client receiving from the test's namespace through the NIC (-R). The
// first interval waits for iperf3, a later one picks it up and says
// which NIC it uses; the text goes back to the host (watch.txt) for the
// README.
func watchText(n *nic) {
	cmd := exec.Command("/bin/irqnuma", "watch", "--count", "4", "--interval", "1s", "--comm", "iperf3")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	pipe, perr := cmd.StdoutPipe()
	must("text-pipe", perr == nil, "watch's stdout: %v", perr)
	must("text-start", cmd.Start() == nil, "start watch")
	// iperf3 starts once watch has printed its first interval, waiting for
	// it: on a slow guest a fixed delay let iperf3 start first.
	out, waited := readUntil(pipe, "note: waiting for --comm iperf3", 60*time.Second)
	check("text-first", waited, "watch printed no waiting interval in 60s:\n%s", out.String())
	client := exec.Command("iperf3", "-c", n.Peer, "-t", "4", "-R")
	var cout bytes.Buffer
	client.Stdout, client.Stderr = &cout, &cout
	must("text-iperf3", client.Start() == nil, "start iperf3")
	<-out.done
	err := cmd.Wait()
	cerr := client.Wait()
	must("text-exit", err == nil, "watch: %v\n%s", err, errb.String())
	check("text-iperf3-exit", cerr == nil, "iperf3 -c %s -t 4 -R: %v\n%.2000s", n.Peer, cerr, cout.String())
	text := out.String()
	blocks := strings.Split(text, "\nirqnuma watch  #")
	check("text-intervals", len(blocks) == 4, "%d intervals, want 4:\n%s", len(blocks), text)
	check("text-waits", strings.Contains(blocks[0], "note: waiting for --comm iperf3: no such process yet"), "interval 1 waits for iperf3:\n%s", blocks[0])
	started := regexp.MustCompile(`note: --comm iperf3: process (\d+) started; watching it`).FindStringSubmatch(text)
	check("text-started", started != nil, "an interval says iperf3 started:\n%s", text)
	if started != nil {
		uses := regexp.MustCompile(`(?m)^iperf3 \(PID ` + started[1] + `\) uses ` + n.Name + `: tcp `)
		check("text-uses", uses.MatchString(text), "an interval says iperf3 %s uses %s through a TCP connection:\n%s", started[1], n.Name, text)
		check("text-verdict", strings.Contains(blocks[len(blocks)-1], "iperf3 thread "), "the last interval's verdict names an iperf3 thread:\n%s", blocks[len(blocks)-1])
	}
	sendFile("watch.txt", []byte(text))
}

// watchRun is one watch run with traffic inside its window, and the
// kernel's counters before and after it.
type watchRun struct {
	a, b     *interrupts
	rxA, rxB map[int]uint64
	ivs      []interval
	got      int // packets received
}

// measureWatch runs watch while traffic flows. The traffic must fall
// inside watch's window (after its first sample, before its last). A
// slow start on a busy host can miss it: then the measurement is taken
// again with more time, never judged.
func measureWatch(n *nic) watchRun {
	var (
		m          watchRun
		t0, t1     time.Time
		windowOK   bool
		windowText string
	)
	for attempt := 1; attempt <= 3 && !windowOK; attempt++ {
		m.a, _ = readInterrupts()
		m.rxA, _ = softirq("NET_RX")
		cmd := exec.Command("/bin/irqnuma", "watch", "--nic", n.Name, "--interval", "1s", "--count", strconv.Itoa(2+attempt), "-o", "json")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		must("start", cmd.Start() == nil, "start watch")
		time.Sleep(time.Duration(attempt) * 1300 * time.Millisecond)
		t0 = time.Now()
		m.got = n.rx(2000)
		t1 = time.Now()
		err := cmd.Wait()
		m.b, _ = readInterrupts()
		m.rxB, _ = softirq("NET_RX")
		must("watch-exit", err == nil, "watch: %v\n%s", err, errb.String())
		m.ivs = nil
		sc := bufio.NewScanner(&out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var iv interval
			if err := json.Unmarshal(sc.Bytes(), &iv); err != nil {
				must("json", false, "%v: %q", err, sc.Text())
			}
			m.ivs = append(m.ivs, iv)
		}
		must("intervals", len(m.ivs) == 2+attempt, "%d intervals:\n%s", len(m.ivs), out.String())
		last := m.ivs[len(m.ivs)-1]
		windowOK = m.ivs[0].Start.Before(t0) && last.End.After(t1)
		windowText = fmt.Sprintf("attempt %d: watch %s..%s, traffic %s..%s (%d packets in)", attempt,
			m.ivs[0].Start.Format(time.StampMilli), last.End.Format(time.StampMilli), t0.Format(time.StampMilli), t1.Format(time.StampMilli), m.got)
		if !windowOK {
			info("window", "%s: traffic outside the window, measuring again", windowText)
		}
	}
	must("window", windowOK, "%s", windowText)
	return m
}

// checkWatchCounts: per IRQ and CPU, the rates times the seconds add up
// to the kernel's counts over the same window (nothing else makes eth0
// interrupt).
func checkWatchCounts(n *nic, m watchRun) {
	fired := 0
	for _, q := range n.queues() {
		sum := map[int]float64{}
		for _, iv := range m.ivs {
			for _, ns := range iv.NICs {
				for _, qi := range ns.IRQs {
					if qi.IRQ != q.irq {
						continue
					}
					for _, c := range qi.CPUs {
						sum[c.CPU] += c.PerSec * iv.Seconds
					}
				}
			}
		}
		d := delta(m.a, m.b, q.irq)
		ok := true
		for cpu := 0; cpu < 64; cpu++ {
			if math.Abs(sum[cpu]-float64(d[cpu])) > 0.5 {
				ok = false
			}
		}
		if total(d) > 0 {
			fired++
		}
		check(fmt.Sprintf("irq%d-counts", q.irq), ok, "IRQ %d (%s %d): watch rate x seconds by CPU %v, /proc/interrupts delta %v", q.irq, q.dir, q.queue, rounded(sum), d)
	}
	check("traffic", fired >= n.QueuePairs, "%d queue IRQs fired during the watch (%d packets in)", fired, m.got)
}

// checkWatchNetRX: the kernel's NET_RX deltas lie on the rx IRQs'
// effective CPUs, watch reports no more than the kernel counted, and its
// verdict names a local rx CPU.
func checkWatchNetRX(rxCPUs cpus, m watchRun) {
	var softCPUs cpus
	var kernelRX float64
	for cpu, v := range m.rxB {
		if d := v - m.rxA[cpu]; d > 0 {
			softCPUs |= 1 << cpu
			if rxCPUs.has(cpu) {
				kernelRX += float64(d)
			}
		}
	}
	check("net-rx-cpus", softCPUs != 0 && softCPUs.within(rxCPUs), "NET_RX ran on CPUs %s; eth0's rx IRQs' effective CPUs %s", softCPUs, rxCPUs)
	watchRX := map[int]float64{}
	var watchTotal float64
	for _, iv := range m.ivs {
		for _, c := range iv.CPUs {
			if c.NetRX != nil {
				watchRX[c.CPU] += *c.NetRX * iv.Seconds
			}
		}
	}
	var watchCPUs cpus
	for cpu, v := range watchRX {
		if v > 0.5 {
			watchCPUs |= 1 << cpu
			watchTotal += v
			check(fmt.Sprintf("cpu%d-net-rx", cpu), v <= float64(m.rxB[cpu]-m.rxA[cpu])+0.5, "CPU %d: watch NET_RX x seconds %.1f, /proc/softirqs delta %d", cpu, v, m.rxB[cpu]-m.rxA[cpu])
		}
	}
	check("watch-net-rx-cpus", watchCPUs != 0 && watchCPUs.within(rxCPUs), "watch shows NET_RX on CPUs %s; rx IRQs' effective CPUs %s", watchCPUs, rxCPUs)
	info("net-rx", "kernel NET_RX on rx CPUs %.0f, watch %.1f", kernelRX, watchTotal)
	for _, iv := range m.ivs {
		for _, ns := range iv.NICs {
			v := ns.Verdict
			if v.CPU != nil && v.Local != nil {
				check(fmt.Sprintf("verdict-%d", iv.Seq), rxCPUs.has(*v.CPU) && *v.Local, "interval %d: %q", iv.Seq, v.Text)
			}
		}
	}
}

func rounded(m map[int]float64) map[int]int64 {
	out := map[int]int64{}
	for k, v := range m {
		if r := int64(math.Round(v)); r != 0 {
			out[k] = r
		}
	}
	return out
}

// streamed is what a reader has read so far, read on to the end in the
// background (done is closed then).
type streamed struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{}
}

func (s *streamed) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// readUntil reads r to its end in the background and returns once what it
// read holds want (true) or after timeout (false).
func readUntil(r io.Reader, want string, timeout time.Duration) (*streamed, bool) {
	s := &streamed{done: make(chan struct{})}
	seen := make(chan struct{})
	go func() {
		defer close(s.done)
		b := make([]byte, 4096)
		found := false
		for {
			n, err := r.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			if !found && strings.Contains(s.buf.String(), want) {
				found = true
				close(seen)
			}
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-seen:
		return s, true
	case <-s.done:
		return s, strings.Contains(s.String(), want)
	case <-time.After(timeout):
		return s, false
	}
}
