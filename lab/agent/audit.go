package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// finding is one finding of `irqnuma audit -o json`.
type finding struct {
	Check string `json:"check"`
	NIC   string `json:"nic"`
	IRQ   []int  `json:"irq"`
	CPUs  string `json:"cpus"`
}

type auditDoc struct {
	Findings []finding `json:"findings"`
}

// remoteIRQs returns the IRQs the audit calls irq-remote for nic.
func remoteIRQs(args ...string) map[int]bool {
	var d auditDoc
	jsonOf(&d, append([]string{"audit", "--fail-on", "never"}, args...)...)
	m := map[int]bool{}
	for _, f := range d.Findings {
		if f.Check == "irq-remote" {
			for _, n := range f.IRQ {
				m[n] = true
			}
		}
	}
	return m
}

// pinRow is one step of `irqnuma irq pin -o json`.
type pinRow struct {
	IRQ      noneIs1 `json:"irq"` // -1: an xps step, which sets no IRQ
	NIC      string  `json:"nic"`
	Queue    noneIs1 `json:"queue"` // -1: a vector that serves no queue
	Kind     string  `json:"kind"`
	From     string  `json:"from"`
	To       string  `json:"to"`
	Action   string  `json:"action"`
	Result   string  `json:"result"`
	Error    string  `json:"error"`
	Affinity *string `json:"affinity"`
}

// noneIs1 is an id irqnuma writes as null where there is none (an xps
// step's IRQ, with its reason beside it): -1 here, as the checks compare.
type noneIs1 int

func (n *noneIs1) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = -1
		return nil
	}
	var v int
	err := json.Unmarshal(b, &v)
	*n = noneIs1(v)
	return err
}

type pinDoc struct {
	Plan      []pinRow `json:"plan"`
	StateFile string   `json:"state_file"`
}

// state shared by the audit and restore scenarios.
var (
	beforePin map[int]string // every smp_affinity_list just before the pin
	pinState  string         // the pin's state file
)

// scenarioAudit: the test moves eth0's queue IRQs to the other node and
// sends traffic: the audit calls every one irq-remote. After irq pin and
// more traffic none is, and each lands on the NIC's node.
func scenarioAudit(l *lab) {
	n := l.nic("eth0")
	local := l.nodes[n.node]
	var other cpus
	for id, c := range l.nodes {
		if id != n.node {
			other |= c
		}
	}
	ids := other.ids()
	qs := n.queues()
	for i, q := range qs {
		cpu := strconv.Itoa(ids[i%len(ids)])
		if err := writeAffinity(q.irq, cpu); err != nil {
			must("move", false, "write %s to IRQ %d: %v", cpu, q.irq, err)
		}
	}
	check("moved-traffic", len(l.traffic(n)) == 0, "every queue IRQ of %s fired after the move", n.Name)
	remote := remoteIRQs("--nic", n.Name)
	for _, q := range qs {
		eff := effective(q.irq)
		check(fmt.Sprintf("moved-irq%d-effective", q.irq), eff != 0 && eff.within(other), "IRQ %d (%s %d) effective %s, moved to node CPUs %s", q.irq, q.dir, q.queue, eff, other)
		check(fmt.Sprintf("moved-irq%d-remote", q.irq), remote[q.irq], "IRQ %d (%s %d) effective %s, NIC on node %d: irqnuma irq-remote %v", q.irq, q.dir, q.queue, eff, n.node, remote[q.irq])
	}

	beforePin = affinities()
	pinState = "/tmp/lab-pin.json"
	r := irqnuma("-o", "json", "irq", "pin", n.Name, "--state", pinState)
	must("pin", r.code == 0, "%s", r)
	var d pinDoc
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		must("pin-json", false, "%v\n%s", err, r)
	}
	to := map[int]string{}
	for _, row := range d.Plan {
		if row.IRQ >= 0 {
			to[int(row.IRQ)] = row.To
		}
	}
	check("pinned-traffic", len(l.traffic(n)) == 0, "every queue IRQ of %s fired after the pin", n.Name)
	remote = remoteIRQs("--nic", n.Name)
	for _, q := range qs {
		eff := effective(q.irq)
		aff := affinityList(q.irq)
		check(fmt.Sprintf("pinned-irq%d-affinity", q.irq), to[q.irq] != "" && mustCPUs(aff) == mustCPUs(to[q.irq]), "IRQ %d smp_affinity_list %s, pin planned %q", q.irq, aff, to[q.irq])
		check(fmt.Sprintf("pinned-irq%d-effective", q.irq), eff != 0 && eff.within(local), "IRQ %d effective %s, NIC's node %d CPUs %s", q.irq, eff, n.node, local)
		check(fmt.Sprintf("pinned-irq%d-not-remote", q.irq), !remote[q.irq], "IRQ %d effective %s: irqnuma irq-remote %v", q.irq, eff, remote[q.irq])
	}
}

// scenarioRestore: irq restore puts back every smp_affinity_list
// exactly; a write the kernel refuses mid-pin rolls back everything
// written before it, exit 1.
func scenarioRestore(l *lab) {
	must("pinned-before", pinState != "" && beforePin != nil, "the audit scenario pinned eth0 (state %q)", pinState)
	r := irqnuma("irq", "restore", pinState)
	check("restore-exit", r.code == 0, "%s", r)
	diff := diffAffinities(beforePin, affinities())
	check("restore-exact", len(diff) == 0, "smp_affinity_list of every IRQ as before the pin; differences: %v", diff)
	_, err := os.Stat(pinState + ".restored")
	check("restore-retired", err == nil, "state file renamed to .restored: %v", err)

	refusedMidPin(l)
}

// refusedMidPin makes the kernel refuse a write in the middle of a pin:
// irq pin's stderr is a full one-page pipe, so its first line (printed
// after the plan, before any write) blocks it; the agent then takes
// offline the CPU a later queue is planned for and lets it go on. A write
// naming only offline CPUs fails with EINVAL.
func refusedMidPin(l *lab) {
	n := l.nic("eth0")
	var dry pinDoc
	jsonOf(&dry, "irq", "pin", n.Name, "--dry-run")
	// The victim is the CPU of the last single-CPU change; the refused
	// write is the first change to it, after every change before it.
	victim, victimIRQ, earlier := -1, noneIs1(-1), 0
	for _, row := range dry.Plan {
		if c, err := parseCPUs(row.To); err == nil && row.Action == "change" && c.len() == 1 {
			victim = c.ids()[0]
		}
	}
	for _, row := range dry.Plan {
		if row.Action != "change" {
			continue
		}
		if c, _ := parseCPUs(row.To); c.len() == 1 && c.ids()[0] == victim {
			victimIRQ = row.IRQ
			break
		}
		earlier++
	}
	victim = map[bool]int{true: victim, false: -1}[earlier > 0 && victim != 0]
	must("plan-victim", victim > 0, "a single-CPU change after other changes in the plan (%d rows)", len(dry.Plan))
	info("victim", "CPU %d goes offline before the write of IRQ %d, after %d earlier changes", victim, victimIRQ, earlier)

	pr, pw, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	defer pr.Close()
	size, err := fcntlSetPipeSize(pw, 4096)
	must("pipe-size", err == nil, "F_SETPIPE_SZ: %d, %v", size, err)
	if _, err := pw.Write(make([]byte, size)); err != nil {
		panic(err)
	}
	state := "/tmp/lab-refused.json"
	cmd, stdout := startGated(pw, "-o", "json", "irq", "pin", n.Name, "--state", state)
	pw.Close()
	blocked := waitBlockedOnStderr(cmd.Process.Pid)
	must("gate", blocked, "irq pin (pid %d) blocked writing its stderr", cmd.Process.Pid)
	online := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/online", victim)
	if err := os.WriteFile(online, []byte("0"), 0); err != nil {
		must("offline", false, "take CPU %d offline: %v", victim, err)
	}
	defer func() {
		err := os.WriteFile(online, []byte("1"), 0)
		check("online-again", err == nil && l.online().has(victim), "CPU %d back online: %v", victim, err)
	}()
	recorded := affinities()
	errOut := readAllAsync(pr)
	code := waitExit(cmd)
	stderr := (<-errOut)[size:]
	first, _, _ := strings.Cut(stderr, "\n")
	check("gate-after-plan", strings.HasPrefix(first, n.Name+": "), "the blocked line was the plan's: %q", first)
	check("exit-1", code == 1, "irq pin exit %d\nstderr:\n%s\nstdout:\n%.2000s", code, stderr, stdout.String())
	var d pinDoc
	if err := json.Unmarshal(stdout.Bytes(), &d); err != nil {
		must("json", false, "%v: %s", err, stdout.String())
	}
	rolled := 0
	for _, row := range d.Plan {
		switch {
		case row.IRQ == victimIRQ:
			check("refused-row", row.Result == "failed" && strings.Contains(row.Error, "invalid argument"), "IRQ %d to CPU %d (offline): result %q error %q", row.IRQ, victim, row.Result, row.Error)
		case row.Result == "rolled-back":
			rolled++
		case row.Result == "changed":
			check(fmt.Sprintf("irq%d-not-left-changed", row.IRQ), false, "IRQ %d left changed after the failure", row.IRQ)
		}
	}
	check("rolled-back", rolled == earlier, "%d rows rolled back, %d changes came before the refused one", rolled, earlier)
	diff := diffAffinities(recorded, affinities())
	check("rollback-exact", len(diff) == 0, "smp_affinity_list of every IRQ as before the pin; differences: %v", diff)
	_, err = os.Stat(state + ".rolled-back")
	check("state-retired", err == nil, "state file renamed to .rolled-back: %v", err)
}
