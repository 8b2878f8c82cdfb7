package main

import (
	"os"
	"strconv"
	"strings"
)

// scenarioZC: zc prepare on eth2 (virtio_net rss=on, 4 queue pairs,
// node 1). virtio_net has no queue-management API and no tcp-data-split,
// so prepare refuses without --partial; with it, it applies the channels
// (the scenario first sets one combined channel and the default table,
// so queue 1 needs two),
// the RSS table without queue 1 and queue 1's IRQ pin, and skips the
// ntuple rule and the rings with their reasons. A fault injected after
// the channels and before the table rolls back the channels; irq restore
// brings ethtool -l and ethtool -x back byte for byte.
func scenarioZC(l *lab) {
	n := l.nic("eth2")
	// One channel and the default table over it: 6.1 keeps a table
	// nobody configured as it was when the channels change, which -X
	// default spreads over the one queue.
	ethtool("-L", n.Name, "combined", "1")
	ethtool("-X", n.Name, "default")
	defer func() {
		ethtool("-L", n.Name, "combined", strconv.Itoa(n.QueuePairs))
		ethtool("-X", n.Name, "default")
	}()
	chBefore, xBefore, affBefore := ethtool("-l", n.Name), ethtool("-x", n.Name), affinities()
	same := func(name string) {
		ch, x := ethtool("-l", n.Name), ethtool("-x", n.Name)
		check(name+"-channels", ch == chBefore, "ethtool -l %s byte for byte as before:\n%s\nwas:\n%s", n.Name, ch, chBefore)
		check(name+"-rss", x == xBefore, "ethtool -x %s byte for byte as before:\n%s\nwas:\n%s", n.Name, x, xBefore)
		diff := diffAffinities(affBefore, affinities())
		check(name+"-irqs", len(diff) == 0, "every IRQ's smp_affinity_list as before; differences: %v", diff)
	}
	args := []string{"zc", "prepare", n.Name, "--queue", "1", "--port", "9000"}

	r := irqnuma(append(args, "--dry-run")...)
	check("dry-run-refuses", r.code == 1 && strings.Contains(r.stderr, "cannot do zero-copy receive") &&
		strings.Contains(r.stdout, "virtio_net does not implement netdev_queue_mgmt_ops") && strings.Contains(r.stdout, "header split"),
		"the dry run names the driver's missing queue API and header split and refuses: %s", r)
	r = irqnuma(args...)
	check("refuses", r.code == 1 && strings.Contains(r.stderr, "nothing was changed"), "without --partial nothing is changed: %s", r)
	same("refused")

	os.Setenv("IRQNUMA_LAB_ZC_FAULT", "1")
	r = irqnuma(append(args, "--partial", "--state", "/tmp/lab-zc-fault.json")...)
	os.Unsetenv("IRQNUMA_LAB_ZC_FAULT")
	check("fault-exit", r.code == 1 && strings.Contains(r.stdout, "rolled-back") && strings.Contains(r.stderr, "rolled back"),
		"a fault after the channels, before the table, fails the prepare and rolls back: %s", r)
	same("fault")
	_, err := os.Stat("/tmp/lab-zc-fault.json.rolled-back")
	check("fault-retired", err == nil, "the state file is renamed .rolled-back: %v", err)

	state := "/tmp/lab-zc.json"
	r = irqnuma(append(args, "--partial", "--state", state)...)
	check("partial-exit", r.code == 0, "zc prepare --partial: %s", r)
	check("partial-skips", strings.Contains(r.stdout, "skip    ntuple rule") && strings.Contains(r.stdout, "skip    tcp-data-split on") &&
		strings.Contains(r.stderr, "still cannot bind zero-copy"), "the rule and the rings are skipped with their reasons: %s", r)
	cur := ethSections(ethtool("-l", n.Name))["current"]["Combined"]
	check("partial-channels", cur == "2", "ethtool -l %s: combined %q, want 2", n.Name, cur)
	rss, perr := parseEthtoolX(ethtool("-x", n.Name))
	without := perr == nil && len(rss.table) > 0
	for _, q := range rss.table {
		without = without && q != 1
	}
	check("partial-table", without, "ethtool -x %s: no entry sends to queue 1 (%v): %v", n.Name, perr, rss.table)
	for _, q := range n.queues() {
		if q.queue != 1 {
			continue
		}
		c, err := parseCPUs(affinityList(q.irq))
		check("partial-irq-"+q.dir, err == nil && c.len() == 1 && c.within(l.nodes[n.node]),
			"queue 1's %s IRQ %d on one CPU of node %d (%s): %v", q.dir, q.irq, n.node, l.nodes[n.node], affinityList(q.irq))
	}

	r = irqnuma("irq", "restore", state)
	check("restore-exit", r.code == 0, "irq restore: %s", r)
	same("restore")
}
