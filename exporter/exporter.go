// Package exporter exposes irqnuma's audit of a host as Prometheus
// metrics. Everything is computed at scrape time from a fresh read of the
// host, with the audit's own code (report.Audit and report.Place), so a
// scrape says what the audit would say at that moment. Reading is all a
// scrape does: it never writes to the host.
//
// Series:
//
//	irqnuma_finding{check,severity,nic,subject}  number of current findings with these labels (1 each)
//	irqnuma_irq_local{irq,nic,queue}             1 local, 0 remote; absent when unknown
//	irqnuma_irq_effective_cpu{irq,nic,queue}     the CPU the IRQ is delivered to; absent unless exactly one
//	irqnuma_nic_numa_node{nic}                   the NIC's local node; absent when unknown
//	irqnuma_scrape_duration_seconds              time the read and the audit took
//	irqnuma_scrape_error                         1 when the host could not be read, else 0
//
// queue is the queue index ("3"), "rx-3" or "tx-3" for a vector that serves
// one direction, and "" for a NIC's non-queue vectors; nic is "" for
// host-wide findings. The same text format goes to node_exporter's
// textfile collector with WriteTextfile.
package exporter

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/irqnuma/irqnuma/irq"
	"github.com/irqnuma/irqnuma/report"
	"github.com/irqnuma/irqnuma/topology"
)

// State is one reading of a host: its topology, its NICs' IRQs and the
// audit's findings on them.
type State struct {
	Host     *topology.Host
	IRQs     *irq.Table
	Findings []report.Finding
	// NICs limits irqnuma_nic_numa_node to these NICs; nil means every
	// NIC of the host.
	NICs []string
}

// Gather reads a host and audits it. The exporter calls it once per
// scrape, never concurrently.
type Gather func(ctx context.Context) (*State, error)

// Metric names, the exporter's contract with dashboards and alert rules.
const (
	MetricFinding        = "irqnuma_finding"
	MetricIRQLocal       = "irqnuma_irq_local"
	MetricIRQEffective   = "irqnuma_irq_effective_cpu"
	MetricNICNode        = "irqnuma_nic_numa_node"
	MetricScrapeDuration = "irqnuma_scrape_duration_seconds"
	MetricScrapeError    = "irqnuma_scrape_error"
)

// Metrics lists every metric the exporter exports.
var Metrics = []string{MetricFinding, MetricIRQLocal, MetricIRQEffective, MetricNICNode, MetricScrapeDuration, MetricScrapeError}

var (
	descFinding = prometheus.NewDesc(MetricFinding,
		"Current audit findings with these labels (1 per finding); check ids as in irqnuma audit.",
		[]string{"check", "severity", "nic", "subject"}, nil)
	descLocal = prometheus.NewDesc(MetricIRQLocal,
		"1 when the NIC IRQ is delivered to CPUs local to its NIC, 0 when not; absent when unknown.",
		[]string{"irq", "nic", "queue"}, nil)
	descEffective = prometheus.NewDesc(MetricIRQEffective,
		"The CPU the NIC IRQ is delivered to (effective affinity); absent unless exactly one CPU is known.",
		[]string{"irq", "nic", "queue"}, nil)
	descNode = prometheus.NewDesc(MetricNICNode,
		"The NUMA node local to the NIC; absent when unknown.",
		[]string{"nic"}, nil)
	descDuration = prometheus.NewDesc(MetricScrapeDuration,
		"Seconds the read of the host and the audit took.", nil, nil)
	descError = prometheus.NewDesc(MetricScrapeError,
		"1 when the host could not be read or audited, 0 otherwise.", nil, nil)
)

// Collector is a prometheus.Collector that reads and audits the host on
// every Collect.
type Collector struct {
	gather  Gather
	onError func(error)
	mu      sync.Mutex // one read of the host at a time
	ctx     context.Context
}

// NewCollector returns a collector calling gather on each scrape. onError,
// when not nil, is told of each failed read (the scrape itself answers
// irqnuma_scrape_error 1). ctx bounds every read.
func NewCollector(ctx context.Context, gather Gather, onError func(error)) *Collector {
	return &Collector{gather: gather, onError: onError, ctx: ctx}
}

// Describe sends every metric's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descFinding, descLocal, descEffective, descNode, descDuration, descError} {
		ch <- d
	}
}

// Collect reads the host, audits it and sends the metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	start := time.Now()
	st, err := c.gather(c.ctx)
	failed := 0.0
	if err != nil {
		failed = 1
		if c.onError != nil {
			c.onError(err)
		}
	} else {
		for _, m := range Series(st) {
			ch <- m
		}
	}
	ch <- gauge(descDuration, time.Since(start).Seconds())
	ch <- gauge(descError, failed)
}

// Series returns the metrics of one reading (all but the scrape ones).
func Series(st *State) []prometheus.Metric {
	var out []prometheus.Metric
	// Findings that share all four labels add up, so a series is never
	// sent twice.
	type key struct{ check, sev, nic, subject string }
	counts := map[key]float64{}
	var order []key
	for _, f := range st.Findings {
		k := key{f.Check, string(f.Severity), f.NIC, f.Subject}
		if _, ok := counts[k]; !ok {
			order = append(order, k)
		}
		counts[k]++
	}
	for _, k := range order {
		out = append(out, gauge(descFinding, counts[k], k.check, k.sev, k.nic, k.subject))
	}
	if st.IRQs != nil {
		for i := range st.IRQs.IRQs {
			q := &st.IRQs.IRQs[i]
			if q.Owner == nil {
				continue
			}
			labels := []string{strconv.Itoa(q.IRQ), q.Owner.NIC, queueLabel(q.Owner)}
			if p := report.Place(st.Host, q); p.LocalKnown && p.HasWhere {
				v := 0.0
				if p.Local {
					v = 1
				}
				out = append(out, gauge(descLocal, v, labels...))
			}
			if q.HasEffective && q.Effective.Len() == 1 {
				cpu, _ := q.Effective.Min()
				out = append(out, gauge(descEffective, float64(cpu), labels...))
			}
		}
	}
	for i := range st.Host.NICs {
		n := &st.Host.NICs[i]
		if st.NICs != nil && !slices.Contains(st.NICs, n.Name) {
			continue
		}
		if loc := st.Host.Locality(n); loc.Node >= 0 {
			out = append(out, gauge(descNode, float64(loc.Node), n.Name))
		}
	}
	return out
}

// gauge makes a gauge sample. Label values that are not valid UTF-8 (an
// interface name may hold any byte but '/', ':' and blanks) make an
// invalid metric, which the scrape reports as an error for that series
// alone, instead of a panic.
func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return m
}

// queueLabel is "3" for queue 3, "rx-3"/"tx-3" for a one-direction
// vector, "" for a non-queue vector.
func queueLabel(o *irq.Owner) string {
	if o.Kind != irq.KindQueue || o.Queue < 0 {
		return ""
	}
	if o.Dir != "" {
		return fmt.Sprintf("%s-%d", o.Dir, o.Queue)
	}
	return strconv.Itoa(o.Queue)
}

// NewRegistry returns a registry holding only the collector: no Go
// runtime or process metrics, which say nothing about the host.
func NewRegistry(c *Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return reg
}
