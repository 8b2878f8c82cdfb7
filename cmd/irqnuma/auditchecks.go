package main

import (
	"fmt"
	"strings"

	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/manpage"
)

// checkDoc is what irqnuma-audit(1) says of a check id beside what the
// registry says (audit.Catalogue: what it needs, how it runs, the fix for
// its not-checked findings): the severities its findings take, what it
// finds and the fix its findings carry.
type checkDoc struct {
	severity, finds, fix string
}

// checkDocs are the words for every check id. The man page lists the
// registry's ids, not these keys: TestManAuditChecks fails when an id
// has no words here or when words name no id of the registry.
var checkDocs = map[audit.Check]checkDoc{
	audit.CheckNICNodeUnknown: {"warning; info when its IRQs' /proc/irq/N/node give its node",
		"the NIC's numa_node is -1 on a host with several nodes; says whether local_cpulist still gives its locality",
		"the firmware gives the device no node (ACPI _PXM): update the BIOS or enable its PCI NUMA reporting"},
	audit.CheckIRQRemote: {"error when its effective CPUs are all remote; warning when partly, or only its requested mask",
		"a queue IRQ off the NIC's node (NPS and SNC hosts: same or other package), with the queue's share of the RSS table",
		"irqnuma irq pin NIC; for a kernel-managed IRQ, keep traffic off the queue (ethtool -X, ethtool -L)"},
	audit.CheckIsolatedIRQ: {"warning",
		"a queue IRQ delivered to an isolcpus= (any flag) or nohz_full= CPU, naming the kinds",
		"irqnuma irq pin NIC, which leaves isolated CPUs out"},
	audit.CheckIRQSharedCPU: {"warning",
		"IRQs of two or more queues land on one CPU while local CPUs without any remain",
		"irqnuma irq pin NIC (one queue per core)"},
	audit.CheckIRQAppCPU: {"warning",
		"a queue IRQ delivered to a CPU kept for the application (--app-cpus, tune --reserve); judged only when CPUs are kept",
		"irqnuma tune with the same CPUs kept, or irqnuma irq pin NIC --exclude CPUS"},
	audit.CheckIrqbalance: {"warning",
		"irqbalance runs and does not ban the NIC's movable IRQs (--banirq, --banmod)",
		"the IRQBALANCE_ARGS ban line for irqbalance's environment file"},
	audit.CheckProcAbsent: {"warning",
		"a process named with --pid or --comm does not run, or a --cgroup or --pod names no group or one without a running process",
		"start it, or name it as it runs (/proc/PID/cgroup for a group)"},
	audit.CheckProcRemote: {"error when it last ran off the NIC's node; warning when it may run there",
		"a watched process or thread off the node of a NIC it is judged against",
		"run it on the NIC's CPUs: irqnuma exec --nic NIC -- COMMAND, or taskset with irqnuma mask"},
	audit.CheckProcIRQOverlap: {"warning",
		"a watched process may run on a core (CPU or SMT sibling) that services the NIC's queue IRQs",
		"taskset with irqnuma mask --nic NIC --exclude-irq-cpus"},
	audit.CheckProcMemRemote: {"warning",
		"most of a watched process's memory (numa_maps) is on other nodes than the NIC's",
		"migratepages, or start it with irqnuma exec --nic NIC --membind"},
	audit.CheckCgroupIRQ: {"warning",
		"a NIC's queue IRQs are delivered to CPUs a --cgroup holds exclusively (a v2 root or isolated partition, a v1 cpu_exclusive cpuset)",
		"irqnuma irq pin NIC --exclude GROUP-CPUS (and IRQBALANCE_BANNED_CPULIST; for a pod, CRI-O's irq-load-balancing.crio.io annotation)"},
	audit.CheckPodIRQBalancing: {"warning",
		"a NIC's queue IRQs are delivered to CPUs a pod's container asked CRI-O to keep IRQs off (irq-load-balancing.crio.io: disable, true, or housekeeping but the first CPU's thread siblings), read from the container's OCI config in CRI-O's storage",
		"irqnuma irq pin NIC --exclude CPUS, then find what moved the IRQs back (irqbalance without the ban, a pin, a managed IRQ)"},
	audit.CheckCgroupNICRemote: {"error when none of its CPUs is local; warning when some are",
		"a group's CPUs (cpuset.cpus.effective) are off the node of the NIC its processes use",
		"irqnuma exec --nic NIC --cgroup PATH, the NIC's node in the group's cpuset, or for a pod the kubelet's topology manager"},
	audit.CheckCgroupMemRemote: {"warning",
		"more than half of a group's memory (memory.numa_stat) is off its CPUs' node or its NIC's",
		"the local node in the group's cpuset.mems, or for a pod the kubelet's memory manager"},
	audit.CheckCgroupSharedCore: {"warning for a group whose CPUs are its own; info otherwise",
		"CPUs of a group that take none of a NIC's queue IRQs share a physical core with CPUs that do",
		"irqnuma irq pin NIC --exclude with the group's whole cores"},
	audit.CheckSteeringMalformed: {"warning",
		"a steering reply claims more queues than the host has, or than a device can have; the count is dropped",
		"take the capture again"},
	audit.CheckRPSRemote: {"warning",
		"a queue's rps_cpus includes CPUs off the NIC's node",
		"write irqnuma mask --nic NIC --format mask to the queues' rps_cpus"},
	audit.CheckXPSRemote: {"warning",
		"a queue's xps_cpus includes CPUs off the NIC's node",
		"irqnuma irq pin NIC --xps"},
	audit.CheckRSSQueueMissing: {"warning",
		"the RSS indirection table names queues the NIC does not have",
		"ethtool -X IF equal N"},
	audit.CheckRSSQueueUnused: {"info",
		"queues the RSS table leaves out get no RSS traffic",
		"ethtool -X IF equal N, if they should"},
	audit.CheckNtupleRemote: {"error",
		"an ntuple rule delivers to a queue whose IRQ or NAPI thread runs off the NIC's node",
		"irqnuma irq pin NIC, or send the rule to a local queue (ethtool -N IF delete LOC, then add it back)"},
	audit.CheckNAPIThreadRemote: {"error",
		"with threaded NAPI, a napi/IF-ID thread allowed or last run off the NIC's node",
		"irqnuma irq pin NIC, which moves each queue's thread with its IRQ"},
	audit.CheckNAPIThreadUnpinned: {"warning",
		"with threaded NAPI, a napi/IF-ID thread allowed on every CPU",
		"irqnuma irq pin NIC"},
	audit.CheckNAPIThreadShared: {"warning",
		"with threaded NAPI, a napi/IF-ID thread shares a watched process's cores",
		"taskset the process with irqnuma mask --nic NIC --exclude-irq-cpus after irqnuma irq pin NIC"},
	audit.CheckIRQManaged: {"info",
		"queue IRQs whose affinity the kernel manages (read-only smp_affinity): nothing can move them",
		"choose which queues carry traffic instead: ethtool -L (queue count) or ethtool -X (RSS)"},
	audit.CheckUDPHashNoPorts: {"warning",
		"UDP (udp4, udp6) is hashed without both port halves, so every UDP flow between two hosts lands on one queue",
		"ethtool -N IF rx-flow-hash udp4 sdfn (and udp6)"},
	audit.CheckQueuesVsCPUs: {"info",
		"more queues than local online CPUs, or fewer than half the local online cores",
		"ethtool -L IF combined N (ethtool -l shows the maximum)"},
	audit.CheckChannelsVsCores: {"info",
		"more channels than the NIC's node has cores; says the maximum the NIC allows",
		"ethtool -L IF combined N, N the local core count"},
	audit.CheckCPUGovernor: {"info",
		"local CPUs whose cpufreq governor is not performance (clock ramp-up adds run-to-run variance)",
		"cpupower -c CPUS frequency-set -g performance"},
	audit.CheckNAPISettings: {"warning for napi_defer_hard_irqs without gro_flush_timeout; info otherwise",
		"napi_defer_hard_irqs with a gro_flush_timeout of 0, an irq-suspend-timeout without both, or busy polling with threaded NAPI",
		"set gro_flush_timeout (or clear napi_defer_hard_irqs); turn busy polling or threaded NAPI off"},
	audit.CheckIOMMUMode: {"info",
		"the NIC's IOMMU group translates DMA, or an IOMMU is active and the command line has no iommu=pt",
		"to compare with passthrough, boot with iommu=pt"},
	audit.CheckProcNICUnknown: {"info",
		"which NIC a watched process uses cannot be told from its sockets and no --nic names one",
		"name the NIC it uses (--nic), or audit it once it has its connections"},
	audit.CheckProcNICUnaudited: {"info",
		"a watched process uses a NIC the audit does not cover",
		"audit that NIC too (--nic)"},
	audit.CheckZCBlocked: {"warning",
		"with --zc rx or --zc tx, an io_uring zero-copy prerequisite of the NIC that does not hold",
		"the prerequisite's own fix, as zc check gives it"},
	audit.CheckZCUnknown: {"info",
		"with --zc rx or --zc tx, a zero-copy prerequisite that cannot be told",
		"check it on the live host (zc check)"},
	audit.CheckNotChecked: {"info; warning when where a NIC's IRQs land cannot be judged; error when no NIC could be audited",
		"a check could not be made (the tree lacks a file, the NIC or kernel does not say): once, with the check as subject",
		"what the finding names: run on the live host, or capture the missing file"},
}

// auditChecksSection is irqnuma-audit(1)'s CHECKS: every id of the
// registry, in run order, then not-checked, each with its severity, what
// it finds, what it needs, how it runs and its fixes.
func auditChecksSection() manpage.Section {
	s := manpage.Section{Title: "Checks", Body: "Each check id, as findings and -o json carry it. Ids are a contract: added, never renamed. " +
		"Every check also reads the topology and the IRQs; \"needs\" names what else it cannot judge without, " +
		"and a check missing it is a not-checked finding naming it."}
	item := func(id audit.Check, needs []string, runs, notCheckedFix string) {
		d, ok := checkDocs[id]
		if !ok {
			d = checkDoc{"undocumented", "undocumented", "undocumented"}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Severity: %s.\nFinds: %s.\n", d.severity, d.finds)
		if len(needs) > 0 {
			fmt.Fprintf(&b, "Needs: %s.\n", strings.Join(needs, "; "))
		} else {
			b.WriteString("Needs: nothing beyond the topology and the IRQs.\n")
		}
		if runs != "" {
			fmt.Fprintf(&b, "Runs: %s.\n", runs)
		}
		fmt.Fprintf(&b, "Fix: %s.", d.fix)
		if notCheckedFix != "" {
			fmt.Fprintf(&b, "\nWhen not checked: %s.", notCheckedFix)
		}
		s.Items = append(s.Items, manpage.Item{Tag: string(id), Body: b.String()})
	}
	for _, c := range audit.Catalogue() {
		var runs []string
		if c.PerNIC {
			runs = append(runs, "per audited NIC")
		}
		if c.PerProcess {
			runs = append(runs, "per watched process, against each NIC it is judged against")
		}
		if c.ForHost {
			runs = append(runs, "once for the host")
		}
		item(c.ID, c.Needs, strings.Join(runs, "; "), c.NotCheckedFix)
	}
	item(audit.CheckNotChecked, nil, "", "")
	return s
}
