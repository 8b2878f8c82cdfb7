package main

import (
	"bufio"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// scenarioExecMask: the process exec --membind starts runs on the NIC's
// node's CPUs with its memory bound there (numa_maps), and mask
// --exclude-irq-cpus drops exactly the CPUs the queue IRQs land on; when
// that leaves nothing it says what to do instead.
func scenarioExecMask(l *lab) {
	n := l.nic("eth0")
	local := l.nodes[n.node] & l.online()

	r := irqnuma("mask", "--nic", n.Name)
	got, err := parseCPUs(r.stdout)
	check("mask", r.code == 0 && err == nil && got == local, "mask --nic %s: %q (exit %d), node %d online CPUs %s", n.Name, strings.TrimSpace(r.stdout), r.code, n.node, local)

	execMembind(l, n, local)

	// The watch scenario pinned one queue pair per CPU of the node: every
	// local CPU takes a queue IRQ.
	must("settle", len(l.traffic(n)) == 0, "every queue IRQ of %s fired", n.Name)
	irqCPUs := queueCPUs(n)
	must("all-taken", local.within(irqCPUs), "queue IRQs land on %s, node CPUs %s", irqCPUs, local)
	r = irqnuma("mask", "--nic", n.Name, "--exclude-irq-cpus")
	check("nothing-left-exit", r.code != 0 && r.stdout == "", "%s", r)
	check("nothing-left-advice", strings.Contains(r.stderr, "ethtool -L "+n.Name) && strings.Contains(r.stderr, "irqnuma irq pin "+n.Name+" --cpus"),
		"says what to do instead (fewer queues: ethtool -L; or pin them to part of the node: irq pin --cpus): %q", r.stderr)

	// Pinned to part of the node, the rest is left.
	part := cpus(0)
	for _, id := range local.ids()[:local.len()/2] {
		part |= 1 << id
	}
	r = irqnuma("irq", "pin", n.Name, "--cpus", part.String(), "--state", "/tmp/lab-part.json")
	must("pin-part", r.code == 0, "%s", r)
	must("settle-part", len(l.traffic(n)) == 0, "every queue IRQ of %s fired", n.Name)
	irqCPUs = queueCPUs(n)
	want := local &^ irqCPUs
	r = irqnuma("mask", "--nic", n.Name, "--exclude-irq-cpus")
	got, err = parseCPUs(r.stdout)
	check("exclude-irq-cpus", r.code == 0 && err == nil && got == want && want != 0, "mask --exclude-irq-cpus: %q (exit %d, %s); node CPUs %s minus queue IRQ CPUs %s = %s",
		strings.TrimSpace(r.stdout), r.code, strings.TrimSpace(r.stderr), local, irqCPUs, want)
}

// queueCPUs is where the NIC's queue IRQs land: their effective CPUs.
func queueCPUs(n *nic) cpus {
	var c cpus
	for _, q := range n.queues() {
		c |= effective(q.irq)
	}
	return c
}

var numaPages = regexp.MustCompile(`\bN(\d+)=(\d+)`)

// execMembind starts "agent hold" with irqnuma exec --membind and reads
// its CPUs and memory policy from /proc.
func execMembind(l *lab, n *nic, local cpus) {
	cmd := exec.Command("/bin/irqnuma", "exec", "--nic", n.Name, "--membind", "--", "/init", "hold")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	must("exec-start", cmd.Start() == nil, "start irqnuma exec")
	defer func() {
		stdin.Close()
		err := cmd.Wait()
		check("exec-exit", err == nil, "irqnuma exec exit: %v", err)
	}()
	sc := bufio.NewScanner(stdout)
	pid := 0
	if sc.Scan() {
		fmt.Sscanf(sc.Text(), "ready %d", &pid)
	}
	must("exec-ready", pid > 0, "the started process said %q", sc.Text())
	status := readFile(fmt.Sprintf("/proc/%d/status", pid))
	field := func(name string) string {
		for _, line := range strings.Split(status, "\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	allowed, err := parseCPUs(field("Cpus_allowed_list"))
	check("exec-cpus", err == nil && allowed == local, "Cpus_allowed_list %q, node %d CPUs %s", field("Cpus_allowed_list"), n.node, local)
	var allNodes cpus
	for id := range l.nodes {
		allNodes |= 1 << id
	}
	mems, err := parseCPUs(field("Mems_allowed_list"))
	check("exec-mems-allowed", err == nil && mems == allNodes, "Mems_allowed_list %q is the cpuset's (every node), not the policy's", field("Mems_allowed_list"))

	maps := readFile(fmt.Sprintf("/proc/%d/numa_maps", pid))
	policy := "bind:" + strconv.Itoa(n.node)
	var lines, bound int
	pages := map[int]int{}
	var offNode []string
	for _, line := range strings.Split(maps, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		lines++
		if f[1] == policy {
			bound++
		}
		// Anonymous mappings only: on a file mapping N<node>= counts its
		// page cache too (the initramfs's, on node 0).
		if strings.Contains(line, " anon=") && !strings.Contains(line, " file=") {
			for _, m := range numaPages.FindAllStringSubmatch(line, -1) {
				node, _ := strconv.Atoi(m[1])
				c, _ := strconv.Atoi(m[2])
				pages[node] += c
				if node != n.node {
					offNode = append(offNode, line)
				}
			}
		}
	}
	check("exec-numa-maps-policy", lines > 0 && bound == lines, "%d of %d mappings show %s", bound, lines, policy)
	other := 0
	for node, c := range pages {
		if node != n.node {
			other += c
		}
	}
	check("exec-anon-pages", pages[n.node] >= (32<<20)/4096 && other == 0, "anonymous pages by node %v (32 MiB touched), NIC on node %d; mappings with pages elsewhere: %q", pages, n.node, offNode)
}
