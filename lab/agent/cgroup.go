package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

const (
	cgRoot  = "/sys/fs/cgroup"
	cgName  = "irqnuma-lab"
	cgDir   = cgRoot + "/" + cgName
	cgState = "/tmp/lab-cgroup.json"
)

// scenarioCgroup: a cgroup v2 cpuset partition root holding one CPU of
// eth0's node, with a process in it. With a queue IRQ moved onto that
// CPU, audit --cgroup reports cgroup-exclusive-irq; after irq pin
// --exclude of the group's CPUs the finding is gone and no queue IRQ is
// delivered there; exec --cgroup runs a command on the group's CPUs
// only. The guest is left as found: affinities restored, group removed,
// cgroup2 unmounted.
func scenarioCgroup(l *lab) {
	n := l.nic("eth0")
	local := l.nodes[n.node] & l.online()
	ids := local.ids()
	must("node-cpus", len(ids) >= 2, "eth0's node %d has online CPUs %s", n.node, local)
	cpu := ids[len(ids)-1]
	qs := n.queues()
	must("queues", len(qs) > 0, "eth0 has queue IRQs")
	orig := map[int]string{}
	for _, q := range qs {
		orig[q.irq] = strings.TrimSpace(readFile(irqDir(q.irq) + "/smp_affinity_list"))
	}
	defer func() {
		for irq, v := range orig {
			if err := writeAffinity(irq, v); err != nil {
				check("put-back", false, "write %s to IRQ %d: %v", v, irq, err)
			}
		}
	}()

	undo := makeGroup(cpu, n.node)
	defer undo()
	stop, pid := startHold(nil)
	defer stop()
	must("join", os.WriteFile(cgDir+"/cgroup.procs", []byte(itoa(pid)), 0) == nil, "move PID %d into %s", pid, cgDir)
	got := strings.TrimSpace(readFile(fmt.Sprintf("/proc/%d/cgroup", pid)))
	must("joined", got == "0::/"+cgName, "/proc/%d/cgroup: %q", pid, got)

	irq := qs[0].irq
	for _, q := range qs {
		if q.dir == "rx" {
			irq = q.irq
			break
		}
	}
	must("move", writeAffinity(irq, itoa(cpu)) == nil, "write %d to IRQ %d", cpu, irq)
	settle(l, n, cpu)
	must("moved", effective(irq) == 1<<cpu, "IRQ %d effective_affinity %s, want %d", irq, effectiveList(irq), cpu)

	f := cgroupFindings(n.Name)
	must("finding", len(f) == 1 && slices.Contains(f[0].IRQ, irq) && f[0].CPUs == itoa(cpu),
		"audit --cgroup /%s: cgroup-exclusive-irq findings %+v, want IRQ %d on CPU %d", cgName, f, irq, cpu)

	var pd pinDoc
	jsonOf(&pd, "irq", "pin", n.Name, "--exclude", itoa(cpu), "--state", cgState)
	defer func() {
		r := irqnuma("irq", "restore", cgState)
		check("restore", r.code == 0, "%s", r)
	}()
	settle(l, n, cpu)
	var on []int
	for _, q := range n.queues() {
		if effective(q.irq)&(1<<cpu) != 0 {
			on = append(on, q.irq)
		}
	}
	check("pinned-kernel", len(on) == 0, "queue IRQs with CPU %d in effective_affinity after pin --exclude: %v", cpu, on)
	f = cgroupFindings(n.Name)
	check("finding-gone", len(f) == 0, "audit --cgroup /%s after pin --exclude %d: %+v", cgName, cpu, f)

	execInGroup(cpu)
}

// settle sends traffic both ways so that pending IRQ moves complete;
// the group's CPU is left out of the senders: a process outside the
// partition may not run there (sched_setaffinity says EINVAL).
func settle(l *lab, n *nic, cpu int) {
	n.rx(3000)
	n.tx(200, l.online()&^(1<<cpu))
	time.Sleep(200 * time.Millisecond)
}

// makeGroup mounts cgroup2 if it is not, enables cpuset for the root's
// children and makes the group a partition root owning cpu, with its
// memory on node. It returns what undoes each step, in reverse.
func makeGroup(cpu, node int) func() {
	var undo []func()
	done := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	fail := func(name, format string, args ...any) {
		done()
		must(name, false, format, args...)
	}
	if !strings.Contains(readFile("/proc/self/mountinfo"), " "+cgRoot+" ") {
		if err := unix.Mount("cgroup2", cgRoot, "cgroup2", 0, ""); err != nil {
			fail("mount", "mount cgroup2 on %s: %v", cgRoot, err)
		}
		undo = append(undo, func() { check("unmount", unix.Unmount(cgRoot, 0) == nil, "unmount %s", cgRoot) })
	}
	sub := cgRoot + "/cgroup.subtree_control"
	if !slices.Contains(strings.Fields(readFile(sub)), "cpuset") {
		if err := os.WriteFile(sub, []byte("+cpuset"), 0); err != nil {
			fail("controller", "enable cpuset in %s (controllers %q): %v", sub, readFile(cgRoot+"/cgroup.controllers"), err)
		}
		undo = append(undo, func() {
			check("controller-off", os.WriteFile(sub, []byte("-cpuset"), 0) == nil, "disable cpuset in %s", sub)
		})
	}
	if err := os.Mkdir(cgDir, 0o755); err != nil {
		fail("mkdir", "%v", err)
	}
	undo = append(undo, func() { check("rmdir", unix.Rmdir(cgDir) == nil, "remove %s", cgDir) })
	for _, w := range []struct{ file, v string }{
		{"cpuset.cpus", itoa(cpu)}, {"cpuset.mems", itoa(node)}, {"cpuset.cpus.partition", "root"},
	} {
		if err := os.WriteFile(cgDir+"/"+w.file, []byte(w.v), 0); err != nil {
			fail("write", "write %s to %s/%s: %v", w.v, cgDir, w.file, err)
		}
	}
	if p := strings.TrimSpace(readFile(cgDir + "/cpuset.cpus.partition")); p != "root" {
		fail("partition", "%s/cpuset.cpus.partition reads %q, want root", cgDir, p)
	}
	check("partition", true, "%s: cpuset.cpus %s, cpuset.cpus.partition root, cpuset.cpus.effective %s",
		cgDir, readFile(cgDir+"/cpuset.cpus"), strings.TrimSpace(readFile(cgDir+"/cpuset.cpus.effective")))
	return done
}

// startHold starts "agent hold" (through args, when given) and returns
// what ends it and its pid.
func startHold(args []string) (func(), int) {
	cmd := exec.Command("/init", "hold")
	if args != nil {
		cmd = exec.Command(args[0], append(args[1:], "/init", "hold")...)
	}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	must("hold-start", cmd.Start() == nil, "start %v", cmd.Args)
	stop := func() {
		stdin.Close()
		err := cmd.Wait()
		check("hold-exit", err == nil, "%v: %v %s", cmd.Args, err, stderr.String())
	}
	sc := bufio.NewScanner(stdout)
	pid := 0
	if sc.Scan() {
		fmt.Sscanf(sc.Text(), "ready %d", &pid)
	}
	if pid == 0 {
		stop()
		must("hold-ready", false, "%v said %q", cmd.Args, sc.Text())
	}
	return stop, pid
}

// cgroupFindings are audit --cgroup's cgroup-exclusive-irq findings for
// nic.
func cgroupFindings(nic string) []finding {
	var d auditDoc
	jsonOf(&d, "audit", "--cgroup", "/"+cgName, "--fail-on", "never")
	var out []finding
	for _, f := range d.Findings {
		if f.Check == "cgroup-exclusive-irq" && f.NIC == nic {
			out = append(out, f)
		}
	}
	return out
}

// execInGroup: exec --cgroup starts a command on the group's CPUs only
// (Cpus_allowed_list); it does not join the group (/proc/PID/cgroup).
func execInGroup(cpu int) {
	stop, pid := startHold([]string{"/bin/irqnuma", "exec", "--cgroup", "/" + cgName, "--"})
	defer stop()
	status := readFile(fmt.Sprintf("/proc/%d/status", pid))
	allowed := ""
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			allowed = strings.TrimSpace(v)
		}
	}
	check("exec-cpus", allowed == itoa(cpu), "exec --cgroup /%s: Cpus_allowed_list %q, group CPU %d", cgName, allowed, cpu)
	cg := strings.TrimSpace(readFile(fmt.Sprintf("/proc/%d/cgroup", pid)))
	check("exec-cgroup", cg == "0::/", "exec --cgroup /%s: /proc/%d/cgroup %q (runs on the group's CPUs, not in it)", cgName, pid, cg)
}
