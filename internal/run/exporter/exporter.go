// Package exporter exposes irqnuma's audit of a host as Prometheus
// metrics. Everything is computed at scrape time from a fresh read of the
// host, with the audit's own code (audit.Read and audit.Place), so a
// scrape says what the audit would say at that moment. Reading is all a
// scrape does: it never writes to the host.
//
// Series:
//
//	irqnuma_finding{check,severity,nic,subject}  number of current findings with these labels (1 each)
//	irqnuma_irq_local{irq,nic,queue}             1 local, 0 remote; absent when unknown
//	irqnuma_irq_effective_cpu{irq,nic,queue}     the CPU the IRQ is delivered to; absent unless exactly one
//	irqnuma_nic_numa_node{nic}                   the NIC's local node; absent when unknown
//	irqnuma_process_present{selector}            1 when a process --pid/--comm names runs, 0 when none does
//	irqnuma_process_nic{selector,nic,attribution} 1 per NIC the selector's processes use, from their sockets
//	irqnuma_pod_cpus{cgroup,namespace,pod,container}            CPUs in the group's cpuset.cpus.effective; absent when unknown
//	irqnuma_pod_exclusive{cgroup,namespace,pod,container}       1 when those CPUs are the group's alone, 0 when not
//	irqnuma_pod_processes{cgroup,namespace,pod,container}       the group's running processes
//	irqnuma_pod_exclusive_cpu_irqs{cgroup,namespace,pod,container,nic} the NIC's queue IRQs on the group's exclusive CPUs
//	irqnuma_pod_nic_remote{cgroup,namespace,pod,container,nic}  1 when none of the group's CPUs is local to a NIC it uses
//	irqnuma_pod_finding{check,severity,nic,cgroup,namespace,pod,container} 1 per finding about the group
//	irqnuma_scrape_duration_seconds              time the read and the audit took
//	irqnuma_scrape_error                         1 when the host could not be read or its steering is malformed, else 0
//	irqnuma_build_info{version,revision,goversion} 1, naming the build
//
// queue is the queue index ("3"), "rx-3" or "tx-3" for a vector that serves
// one direction, and "" for a NIC's non-queue vectors; nic is "" for
// host-wide findings. irqnuma_process_nic has attribution "sockets" and
// the NIC for each NIC the running processes of a selector use (package
// nicuse: their sockets' addresses and routes); when their sockets cannot
// tell, one series with nic "" and attribution "any" (bound to every
// address), "loopback" or "unknown" (then the audit judges them against
// the --nic NICs, or none). No PID label: a restarted benchmark keeps its
// series. The same text format goes to node_exporter's
// textfile collector with WriteTextfile.
//
// The irqnuma_pod_* series are per selected control group
// (audit.State.Groups: a --cgroup, or each container a --pod or
// --container resolves to), as kube-state-metrics labels a container:
// cgroup is the group's path in its hierarchy ("/kubepods.slice/…"),
// namespace, pod and container come from the group's proc.PodRef and are
// "" for a group named by --cgroup alone. No pod UID or container ID
// label: a restarted container keeps its series. Their number is bounded
// by the selection: per group six series at most, and the two with a nic
// label once per audited NIC (exclusive_cpu_irqs, for a group whose CPUs
// are its own) or per NIC its processes' sockets use (nic_remote).
// irqnuma_pod_exclusive_cpu_irqs counts the IRQs of the audit's own
// cgroup-exclusive-irq findings, so it says what `irqnuma audit --cgroup`
// says; 0 means the NIC's queue IRQs were judged and none lands there.
// irqnuma_pod_nic_remote is 1 only when every CPU of the group is off the
// NIC's local CPUs (its packets all cross the interconnect), not for a
// group spanning nodes. irqnuma_pod_finding repeats irqnuma_finding's
// findings whose subject is the group's selector (and, for one naming
// CPUs, whose CPUs are the group's), with the group's labels in place of
// subject.
//
// The package writes the text exposition format itself (WriteText)
// rather than through prometheus/client_golang: the CLI imports it for
// `audit --textfile`, and linking the client library and its protobuf
// runtime would cost every irqnuma command their initialisation at start.
// The exporter binary, cmd/irqnuma-exporter, serves Scrape's families
// through client_golang's promhttp (its negotiation, compression, bound
// on scrapes in flight and timeout) beside its own process and Go
// metrics; this package serves no HTTP of its own (the server's graceful
// stop is httpserve's, which only the binary links) and holds the bounds
// the binary uses.
package exporter

import (
	"cmp"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/irqnuma/irqnuma/internal/host/irq"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/version"
)

// Metric names, the exporter's contract with dashboards and alert rules.
const (
	MetricFinding        = "irqnuma_finding"
	MetricIRQLocal       = "irqnuma_irq_local"
	MetricIRQEffective   = "irqnuma_irq_effective_cpu"
	MetricNICNode        = "irqnuma_nic_numa_node"
	MetricProcessPresent = "irqnuma_process_present"
	MetricProcessNIC     = "irqnuma_process_nic"
	MetricScrapeDuration = "irqnuma_scrape_duration_seconds"
	MetricScrapeError    = "irqnuma_scrape_error"
	MetricBuildInfo      = "irqnuma_build_info"
)

// Metrics lists every metric the exporter exports.
var Metrics = []string{MetricFinding, MetricIRQLocal, MetricIRQEffective, MetricNICNode, MetricProcessPresent,
	MetricProcessNIC, MetricPodCPUs, MetricPodExclusive, MetricPodProcesses, MetricPodExclusiveIRQ, MetricPodNICRemote,
	MetricPodFinding, MetricScrapeDuration, MetricScrapeError, MetricBuildInfo}

// help is each metric's HELP text.
var help = map[string]string{
	MetricFinding:         "Current audit findings with these labels (1 per finding); check ids as in irqnuma audit.",
	MetricIRQLocal:        "1 when the NIC IRQ is delivered to CPUs local to its NIC, 0 when not; absent when unknown.",
	MetricIRQEffective:    "The CPU the NIC IRQ is delivered to (effective affinity); absent unless exactly one CPU is known.",
	MetricNICNode:         "The NUMA node local to the NIC; absent when unknown.",
	MetricProcessPresent:  "1 when a process the selector (--pid N, --comm NAME) names runs, 0 when none does.",
	MetricProcessNIC:      "1 per NIC the selector's running processes use, from their sockets (attribution=\"sockets\"); nic=\"\" with attribution any, loopback or unknown when their sockets cannot tell.",
	MetricPodCPUs:         "Number of CPUs in the selected group's cpuset.cpus.effective; absent when unknown.",
	MetricPodExclusive:    "1 when the group's CPUs are its alone (a valid cpuset partition root, v1 cpu_exclusive, the kubelet's CPU manager), 0 when not; absent when its CPUs are unknown, or the kubelet's word on a pod's CPUs is not taken (logged).",
	MetricPodProcesses:    "Number of the group's processes (cgroup.procs) that run.",
	MetricPodExclusiveIRQ: "Number of the NIC's queue IRQs delivered to CPUs the group holds exclusively (the audit's cgroup-exclusive-irq); per audited NIC, 0 included, for a group with exclusive known CPUs only.",
	MetricPodNICRemote:    "1 when none of the group's CPUs is local to a NIC its processes' sockets use, 0 when some are; absent when the NIC's locality or the group's CPUs are unknown.",
	MetricPodFinding:      "Current audit findings about the selected group (1 per finding), with its cgroup and pod labels; check ids as in irqnuma audit.",
	MetricScrapeDuration:  "Seconds the read of the host and the audit took.",
	MetricScrapeError:     "1 when the host could not be read or audited, or its steering replies claim more queues than it has (logged), 0 otherwise.",
	MetricBuildInfo:       "Always 1; the labels say which irqnuma build answers.",
}

func family(name string, labels ...string) Family {
	return Family{Name: name, Help: help[name], Labels: labels}
}

// Exporter reads and audits the host on every Scrape.
type Exporter struct {
	// read reads and audits the host: audit.Read of root and the
	// selection (tests give their own).
	read func() (*audit.State, error)
	mu   sync.Mutex // one read of the host, and its log line, at a time
	log  io.Writer  // failed reads and pod notes; nil: none
	// podNoted are the pod notes the last scrape had (podNotes), each
	// logged once while it lasts.
	podNoted map[string]bool
}

// New returns an exporter that reads and audits root with sel on each
// scrape (audit.Read), one scrape at a time. Each failed read (the scrape
// itself answers irqnuma_scrape_error 1) is logged to log, a line at a
// time, when log is not nil.
func New(fsys kfile.FS, sel audit.Selection, log io.Writer) *Exporter {
	return NewReader(func() (*audit.State, error) { return audit.Read(fsys, sel) }, log)
}

// NewReader is New with the reading given: read is called once per
// scrape, one scrape at a time, and its error answered and logged as
// New's are. The exporter binary gives one that resolves --pod and
// --container afresh before audit.Read, as pods come and go.
func NewReader(read func() (*audit.State, error), log io.Writer) *Exporter {
	return &Exporter{read: read, log: log}
}

// logf writes one line to the log, "irqnuma: " first; its caller holds
// e.mu.
func (e *Exporter) logf(format string, args ...any) {
	if e.log == nil {
		return
	}
	fmt.Fprintf(e.log, "irqnuma: "+format+"\n", args...)
}

// Scrape reads the host, audits it and returns the metrics. Whatever the
// host holds, it answers: a read that fails, and a panic while reading or
// turning the reading into series (a bug, which a hostile tree may find),
// fail this scrape alone, answered irqnuma_scrape_error 1 and logged (a
// panic with its stack, a line of the log for each of its lines), and the
// next scrape reads afresh.
func (e *Exporter) Scrape() []Family {
	e.mu.Lock()
	defer e.mu.Unlock()
	start := time.Now()
	st, out, stack, err := e.collect()
	if err == nil {
		e.logPodNotes(st)
		err = malformed(st)
	}
	if err != nil {
		e.logf("scrape: %v", err)
	}
	// The stack a line at a time, as every line of the log is written.
	for l := range strings.Lines(string(stack)) {
		e.logf("  %s", strings.ReplaceAll(strings.TrimSuffix(l, "\n"), "\t", "    "))
	}
	return append(out, scrapeSeries(err, time.Since(start))...)
}

// collect is one reading and its host series, or the error that stopped
// it; a panic is recovered as an error, with the stack it was raised on.
func (e *Exporter) collect() (st *audit.State, out []Family, stack []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			st, out, stack, err = nil, nil, debug.Stack(), fmt.Errorf("panic: %v (a bug in irqnuma: please report it with the stack below)", r)
		}
	}()
	st, err = e.read()
	if err != nil || st == nil {
		return nil, nil, nil, err
	}
	return st, hostSeries(st), nil, nil
}

// malformed is the error of a reading whose steering replies claim what
// the host does not have (audit.State.Malformed): its series are served,
// judged without those counts, and the scrape answers
// irqnuma_scrape_error 1, so a capture or a host that lies is seen.
func malformed(st *audit.State) error {
	if m := st.Malformed(); len(m) > 0 {
		return fmt.Errorf("the host's steering is malformed: %s", strings.Join(m, "; "))
	}
	return nil
}

// families returns the metrics of one reading: the host's series when the
// read succeeded (st is used only when readErr is nil), then the scrape's
// own.
func families(st *audit.State, readErr error, took time.Duration) []Family {
	var out []Family
	if readErr == nil && st != nil {
		out = hostSeries(st)
	}
	return append(out, scrapeSeries(readErr, took)...)
}

// scrapeSeries is a scrape's own series: how long the read took, whether
// it failed, and which build answers.
func scrapeSeries(readErr error, took time.Duration) []Family {
	dur, fail, build := family(MetricScrapeDuration), family(MetricScrapeError), family(MetricBuildInfo, "version", "revision", "goversion")
	dur.add(took.Seconds())
	failed := 0.0
	if readErr != nil {
		failed = 1
	}
	fail.add(failed)
	v := version.Get()
	build.add(1, v.Version, v.Revision, v.GoVersion)
	return []Family{dur, fail, build}
}

// hostSeries returns the metrics of one reading (all but the scrape ones).
func hostSeries(st *audit.State) []Family {
	finding := family(MetricFinding, "check", "severity", "nic", "subject")
	local := family(MetricIRQLocal, "irq", "nic", "queue")
	effective := family(MetricIRQEffective, "irq", "nic", "queue")
	node := family(MetricNICNode, "nic")
	// Findings that share all four labels add up, so a series is never
	// sent twice.
	type key struct{ check, sev, nic, subject string }
	counts := map[key]float64{}
	var order []key
	for _, f := range st.Findings {
		k := key{string(f.Check), string(f.Severity), f.NIC, f.Subject}
		if _, ok := counts[k]; !ok {
			order = append(order, k)
		}
		counts[k]++
	}
	for _, k := range order {
		finding.add(counts[k], k.check, k.sev, k.nic, k.subject)
	}
	if st.IRQs != nil {
		for i := range st.IRQs.IRQs {
			q := &st.IRQs.IRQs[i]
			if q.Owner == nil {
				continue
			}
			labels := []string{strconv.Itoa(q.IRQ), q.Owner.NIC, queueLabel(q.Owner)}
			if isLocal, ok := audit.Place(st.Host, q).Local.Get(); ok {
				v := 0.0
				if isLocal {
					v = 1
				}
				local.add(v, labels...)
			}
			if eff, ok := q.Effective.Get(); ok && eff.Len() == 1 {
				cpu, _ := eff.Min()
				effective.add(float64(cpu), labels...)
			}
		}
	}
	for i := range st.Host.NICs {
		n := &st.Host.NICs[i]
		if st.NICs != nil && !slices.Contains(st.NICs, n.Name) {
			continue
		}
		if id, ok := st.Host.Locality(n).Node.Get(); ok {
			node.add(float64(id), n.Name)
		}
	}
	present := family(MetricProcessPresent, "selector")
	for _, m := range st.Matches {
		v := 0.0
		if len(m.PIDs) > 0 {
			v = 1
		}
		present.add(v, m.Selector.String())
	}
	return append([]Family{finding, local, effective, node, present, processNICs(st)}, podSeries(st)...)
}

// Series returns the series of one reading st (the host's and the
// selected groups'), without the scrape's own (duration, error, build),
// for a caller that read the State itself.
func Series(st *audit.State) []Family { return hostSeries(st) }

// attributionUnknown is irqnuma_process_nic's attribution label of a
// process whose sockets cannot tell its NICs (nicuse.Use.Attribution
// unknown): a label has no null, and docs/many-hosts.md gives the word
// to the queries that match it.
const attributionUnknown = "unknown"

// processNICs is irqnuma_process_nic: per selector, each NIC its running
// processes use, or what their sockets say instead.
func processNICs(st *audit.State) Family {
	f := family(MetricProcessNIC, "selector", "nic", "attribution")
	for _, m := range st.Matches {
		type key struct{ nic, attribution string }
		var keys []key
		for _, pid := range m.PIDs {
			for _, u := range st.Uses {
				if u.PID != pid {
					continue
				}
				a := attributionUnknown
				if u.Attribution.Known() {
					a = u.Attribution.String()
				}
				if !u.Known() {
					keys = append(keys, key{"", a})
				}
				for _, n := range u.NICs {
					keys = append(keys, key{n, a})
				}
			}
		}
		slices.SortFunc(keys, func(a, b key) int {
			return cmp.Or(strings.Compare(a.nic, b.nic), strings.Compare(a.attribution, b.attribution))
		})
		for _, k := range slices.Compact(keys) {
			f.add(1, m.Selector.String(), k.nic, k.attribution)
		}
	}
	return f
}

// queueLabel is "3" for queue 3, "rx-3"/"tx-3" for a one-direction
// vector, "" for a non-queue vector.
func queueLabel(o *irq.Owner) string {
	q, ok := o.Queue.Get()
	if o.Kind != irq.KindQueue || !ok {
		return ""
	}
	if o.Dir != "" {
		return fmt.Sprintf("%s-%d", o.Dir, q)
	}
	return strconv.Itoa(q)
}
