package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// benchDoc is what the agent reads of irqnuma bench -o json.
type benchDoc struct {
	Plan struct {
		NICNode    int `json:"nic_node"`
		RemoteNode int `json:"remote_node"`
	} `json:"plan"`
	Cells []struct {
		Name       string `json:"name"`
		Applicable bool   `json:"applicable"`
		Reason     string `json:"reason"`
		Shared     bool   `json:"shared"`
		Membind    bool   `json:"membind"`
		IRQNode    int    `json:"irq_node"`
		AppNode    int    `json:"app_node"`
		IRQCPUs    string `json:"irq_cpus"`
		AppCPUs    string `json:"app_cpus"`
		MemNodes   string `json:"mem_nodes"`
		Runs       []struct {
			Error  string `json:"error"`
			Result *struct {
				Value float64 `json:"value"`
			} `json:"result"`
			Softirq *struct {
				CPU int `json:"cpu"`
			} `json:"softirq_cpu"`
		} `json:"runs"`
	} `json:"cells"`
	StateFiles []string `json:"state_files"`
	Unrestored []string `json:"unrestored"`
	Stopped    string   `json:"stopped"`
}

// scenarioBench: irqnuma bench runs the default matrix with a real
// iperf3 (its server in the test's namespace, sending to eth0), pins
// eth0's queue IRQs where each placement wants them while the agent
// watches, reads every run's throughput, and leaves the affinity of
// every IRQ of the guest as it found it.
func scenarioBench(l *lab) {
	n := l.nic("eth0")
	// A placement of eth0's queue IRQs no bench cell has, over both
	// nodes, so that both of bench's pins change every one and its
	// restores must bring this back.
	for i, q := range n.queueIRQs() {
		if err := writeAffinity(q, itoa(i*3%8)); err != nil {
			must("scramble", false, "IRQ %d: %v", q, err)
		}
	}
	before := affinities()
	stop := pollAffinities(n.queueIRQs())
	r := irqnuma("bench", "--nic", n.Name, "--repeat", "1", "-o", "json", "--svg", "/tmp/bench.svg",
		"--", "iperf3", "-c", n.Peer, "-t", "1", "-J", "-R")
	seen := stop()
	info("stderr", "%.6000s", r.stderr)
	d := diffAffinities(before, affinities())
	check("restored", len(d) == 0, "every smp_affinity_list as before the bench: %v", d)
	left, _ := filepath.Glob("/var/lib/irqnuma/state-*.json")
	check("state-retired", len(left) == 0, "no state file left to restore: %v", left)
	must("exit", r.code == 0, "%s", r)
	var doc benchDoc
	must("decode", json.Unmarshal([]byte(r.stdout), &doc) == nil, "bench -o json: %.2000s", r.stdout)
	sendFile("bench.json", []byte(r.stdout))
	if svg, err := os.ReadFile("/tmp/bench.svg"); check("svg", err == nil && strings.HasPrefix(string(svg), "<svg"), "--svg: %v", err) {
		sendFile("bench.svg", svg)
	}
	other := 1 - n.node
	check("nodes", doc.Plan.NICNode == n.node && doc.Plan.RemoteNode == other, "NIC node %d, remote node %d; want %d and %d",
		doc.Plan.NICNode, doc.Plan.RemoteNode, n.node, other)
	check("state-files", len(doc.StateFiles) == 2 && len(doc.Unrestored) == 0 && doc.Stopped == "",
		"a pin for each IRQ node, each restored: %v, unrestored %v, stopped %q", doc.StateFiles, doc.Unrestored, doc.Stopped)
	must("cells", len(doc.Cells) == 6, "the default matrix has 6 placements: %d", len(doc.Cells))
	for _, c := range doc.Cells {
		irqCPUs, appCPUs := mustCPUs(c.IRQCPUs), mustCPUs(c.AppCPUs)
		apart := irqCPUs&appCPUs == 0
		if c.Shared {
			apart = irqCPUs == appCPUs
		}
		mem := c.MemNodes == ""
		if c.Membind {
			mem = c.MemNodes == itoa(c.AppNode)
		}
		check("placed-"+c.Name, c.Applicable && irqCPUs != 0 && irqCPUs.within(l.nodes[c.IRQNode]) && appCPUs != 0 &&
			appCPUs.within(l.nodes[c.AppNode]) && apart && mem,
			"applicable %v (%s); IRQs on %s (node %d, CPUs %s), the command on %s (node %d, CPUs %s), memory %q",
			c.Applicable, c.Reason, irqCPUs, c.IRQNode, l.nodes[c.IRQNode], appCPUs, c.AppNode, l.nodes[c.AppNode], c.MemNodes)
		if !check("ran-"+c.Name, len(c.Runs) == 1 && c.Runs[0].Error == "" && c.Runs[0].Result != nil && c.Runs[0].Result.Value > 0,
			"one run with a throughput: %+v", c.Runs) {
			continue
		}
		run := c.Runs[0]
		info("throughput", "%s: %.1f Mbit/s", c.Name, run.Result.Value/1e6)
		if run.Softirq != nil {
			check("softirq-"+c.Name, irqCPUs.has(run.Softirq.CPU), "eth0's softirq ran most on CPU %d, one of the IRQ CPUs %s", run.Softirq.CPU, irqCPUs)
		}
		check("irqs-placed-"+c.Name, seen[irqCPUs], "the agent saw every queue IRQ of %s within CPUs %s during the bench (saw %v)", n.Name, irqCPUs, seenKeys(seen))
	}
}

// pollAffinities reads the IRQs' smp_affinity_list every 20 ms until the
// returned function is called, which returns the union of the IRQs'
// CPUs at each reading: a placement was seen when one reading's union
// is exactly its IRQ CPUs.
func pollAffinities(irqs []int) func() map[cpus]bool {
	seen := map[cpus]bool{}
	stop := pollEvery(20*time.Millisecond, func() {
		var all cpus
		for _, q := range irqs {
			c, err := parseCPUs(affinityList(q))
			if err == nil {
				all |= c
			}
		}
		seen[all] = true
	})
	return func() map[cpus]bool {
		stop()
		return seen
	}
}

func seenKeys(m map[cpus]bool) []string {
	var out []string
	for c := range m {
		out = append(out, c.String())
	}
	return out
}

// sendFile sends a file to the host driver in base64 chunks.
func sendFile(name string, b []byte) {
	s := base64.StdEncoding.EncodeToString(b)
	for len(s) > 0 {
		k := min(len(s), 3000)
		emit(line{Kind: "file", Name: name, Data: s[:k]})
		s = s[k:]
	}
}
