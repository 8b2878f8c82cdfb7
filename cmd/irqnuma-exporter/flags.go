package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/prometheus/common/promslog"
	"github.com/spf13/pflag"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/kube"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/run/exporter"
)

// short is the exporter's one line, description and examples the rest
// of what -h prints and the manual page says.
const (
	short       = "Prometheus exporter of irqnuma's audit, with its own process and Go metrics"
	description = `irqnuma-exporter is irqnuma's Prometheus exporter: on every scrape of
--web.telemetry-path (/metrics) it reads the host afresh and runs the audit
(the same checks as irqnuma audit), and answers

  irqnuma_finding{check,severity,nic,subject}  1 per current finding
  irqnuma_irq_local{irq,nic,queue}             1 local, 0 remote (absent when unknown)
  irqnuma_irq_effective_cpu{irq,nic,queue}     the one CPU the IRQ is delivered to
  irqnuma_nic_numa_node{nic}                   the NIC's local node (absent when unknown)
  irqnuma_process_present{selector}            1 when a --pid/--comm process runs, 0 when not
  irqnuma_process_nic{selector,nic,attribution} 1 per NIC their sockets use
  irqnuma_pod_cpus, irqnuma_pod_exclusive, irqnuma_pod_processes
                  {cgroup,namespace,pod,container}  per --cgroup group,
                  and per container of a --pod, --container or --pods all
  irqnuma_pod_exclusive_cpu_irqs{...,nic}      NIC queue IRQs on its exclusive CPUs
  irqnuma_pod_nic_remote{...,nic}              1 when none of its CPUs is local to a NIC it uses
  irqnuma_pod_finding{check,severity,nic,...}  1 per finding about the group
  ("..." are the four pod labels above)
  irqnuma_pods_dropped                         running pods --pods all left out (--pods-max)
  irqnuma_scrape_duration_seconds, irqnuma_scrape_error, irqnuma_build_info

with its own process_*, go_* and promhttp_metric_handler_* series, in
OpenMetrics to a scraper that asks for it, else in the text format 0.0.4.
A scrape only reads; nothing but the metrics and a landing page at / linking
to them (GET, HEAD) is served. The default address is loopback: listening
elsewhere shows the host's layout to whoever can reach the port, unless
--web.config.file (prometheus/exporter-toolkit's web configuration) asks for
TLS, client certificates or basic auth. Logs go to stderr in logfmt or JSON
(--log.format) from --log.level up. Read failures are logged and answered
with irqnuma_scrape_error 1; it never exits for them (a NIC or a mount may
come later), nor for anything else a scrape meets. Every scrape, the first
(run before it listens) too, reads within a budget of its own, 64 MiB
(--scrape-max-bytes) and 200000 files (--scrape-max-files: paths opened and
folder entries listed), past which it fails with an error naming the budget;
a panic in a scrape (a bug a hostile tree may find) fails that scrape alone,
logged with its stack. The Go runtime's soft memory limit is 100 MiB
(--memory-limit; or GOMEMLIMIT, when that is set and the flag is not). Four
scrapes are answered at a time; a fifth gets 503 (counted in
promhttp_metric_handler_requests_total{code="503"}). On SIGTERM it takes no
new scrape and lets those in flight finish for up to 0.9 s.

--pod and --container are looked up at every scrape, as irqnuma's are:
the pod's name from /var/log/pods, its containers' groups from the cgroup
tree, their exclusive CPUs from the kubelet's pod resources API (one List
over its socket, at most 10 s: /var/lib/kubelet/pod-resources/kubelet.sock,
under --root too when a socket is there, as in the DaemonSet) or else the
CPU manager's checkpoint, or on a snapshot the List answer it recorded. A
pod that is not running has no irqnuma_pod_* series and
irqnuma_process_present 0; a lookup that fails (a corrupt checkpoint) is
irqnuma_scrape_error 1. --pods all adds, at every scrape, every pod the node
runs (a /var/log/pods folder whose pod has a group under kubepods), sorted by
NAMESPACE/NAME, at most --pods-max of them (220: twice the kubelet's default
of 110 pods a node); irqnuma_pods_dropped counts those left out. No label
selector: a pod's labels are not on the node.

The single-dash spellings of Go's flag package (-root, -listen) and
--listen still work in this release, each with a warning naming its new
spelling; they go in the next.`
	examples = `  irqnuma-exporter
  irqnuma-exporter --web.listen-address 127.0.0.1:9143 --nic eth0 --comm iperf3
  irqnuma-exporter --cgroup /kubepods.slice/kubepods-pod1234.slice
  irqnuma-exporter --pod default/iperf-server --container 3f2e9a4b5c6d
  irqnuma-exporter --root /host --pods all --web.listen-address :9143 --web.config.file web.yml
  irqnuma-exporter --root host1.tar.gz --web.listen-address 127.0.0.1:9144`
	exitStatus = `  0      stopped by its caller's context (tests), or -h, --version
  1      runtime error: the address cannot be listened on, a snapshot
         cannot be unpacked, the web configuration file is invalid
  2      usage error: a bad flag, value or argument
  128+N  stopped by signal N (129 SIGHUP, 130 SIGINT, 143 SIGTERM)`
)

// options are the exporter's flags.
type options struct {
	listen        string // --web.listen-address
	telemetryPath string // --web.telemetry-path
	webConfig     string // --web.config.file
	logLevel      *promslog.Level
	logFormat     *promslog.Format
	root          string
	sel           audit.Selection
	// allPods is --pods all: every pod of the node, at most podsMax.
	allPods bool
	podsMax int
	version bool
	// memoryLimit is --memory-limit, the Go runtime's soft limit
	// (setMemoryLimit), when memoryLimitSet.
	memoryLimit    int64
	memoryLimitSet bool
	budget         budget
	// deprecated are the warnings for the old spellings the arguments
	// used (modernize), logged once the log is set up.
	deprecated []string
}

// renamed are the flags whose names changed, old to new.
var renamed = map[string]string{"listen": "web.listen-address"}

// stringsFlag is a repeatable string flag.
type stringsFlag struct{ v *[]string }

func (s stringsFlag) String() string {
	if s.v == nil {
		return ""
	}
	return strings.Join(*s.v, ",")
}

func (s stringsFlag) Set(v string) error { *s.v = append(*s.v, v); return nil }
func (stringsFlag) Type() string         { return "strings" }

// pidsFlag is a repeatable --pid that also takes a comma-separated list,
// as the CLI's does.
type pidsFlag struct{ v *[]int }

func (p pidsFlag) String() string {
	if p.v == nil {
		return ""
	}
	var s []string
	for _, n := range *p.v {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, ",")
}

func (p pidsFlag) Set(v string) error {
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("%q: not a number", f)
		}
		*p.v = append(*p.v, n)
	}
	return nil
}

func (pidsFlag) Type() string { return "pids" }

// levelFlag and formatFlag are promslog's --log.level and --log.format
// as pflag values.
type (
	levelFlag  struct{ *promslog.Level }
	formatFlag struct{ *promslog.Format }
)

func (levelFlag) Type() string  { return "level" }
func (formatFlag) Type() string { return "format" }

// flagSet is the exporter's flags, bound to o.
func flagSet(o *options) *pflag.FlagSet {
	fl := pflag.NewFlagSet("irqnuma-exporter", pflag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.SortFlags = false
	fl.StringVar(&o.listen, "web.listen-address", exporter.DefaultListen, "address to serve the metrics and the landing page on, `HOST:PORT`")
	fl.StringVar(&o.telemetryPath, "web.telemetry-path", "/metrics", "`PATH` under which to serve the metrics")
	fl.StringVar(&o.webConfig, "web.config.file", "", "prometheus/exporter-toolkit's web configuration `FILE`, for TLS, client certificates and basic auth; read again at each connection")
	fl.Var(levelFlag{o.logLevel}, "log.level", "log only messages at or above `LEVEL`: debug, info, warn or error")
	fl.Var(formatFlag{o.logFormat}, "log.format", "log messages in `FORMAT`: logfmt or json")
	fl.StringVar(&o.root, "root", "/", "the host's root: a `folder` holding proc/ and sys/, or a snapshot .tar.gz")
	fl.Var(stringsFlag{&o.sel.NICs}, "nic", "audit only this `NIC` (repeatable)")
	fl.Var(pidsFlag{&o.sel.PIDs}, "pid", "watch the process `PID` and all its threads (repeatable, or a comma-separated list)")
	fl.Var(stringsFlag{&o.sel.Comms}, "comm", "watch every process whose comm is exactly `NAME` (repeatable)")
	fl.Var(stringsFlag{&o.sel.Cgroups}, "cgroup", "watch the control group `PATH` (cgroup v2, or v1's cpuset hierarchy): its processes, CPUs and memory nodes, as irqnuma_pod_* series (repeatable)")
	fl.Var(stringsFlag{&o.sel.Pods}, "pod", "watch every container of the Kubernetes pod `NAMESPACE/NAME`, each as a --cgroup, looked up at every scrape (repeatable)")
	fl.Var(stringsFlag{&o.sel.Containers}, "container", "watch the container `ID` (its runtime ID or a unique prefix, as crictl ps shows it) as a --cgroup, looked up at every scrape (repeatable)")
	fl.Var(podsFlag{&o.allPods}, "pods", "`all` the pods the node runs: watch each as a --pod, listed afresh at every scrape, at most --pods-max of them (no label selector: a pod's labels are not on the node)")
	fl.IntVar(&o.podsMax, "pods-max", kube.DefaultMaxPods, "with --pods all, watch at most `N` pods, the first by NAMESPACE/NAME; irqnuma_pods_dropped counts the rest")
	fl.Var(sizeFlag{&o.memoryLimit}, "memory-limit", "the Go runtime's soft memory limit (debug.SetMemoryLimit), `BYTES` such as 100MiB or 1GiB; 0: none; without the flag, GOMEMLIMIT's when that is set")
	fl.Var(sizeFlag{&o.budget.bytes}, "scrape-max-bytes", "fail a scrape that reads more than `BYTES` of the host's files, such as 64MiB or 1GiB; 0: no bound")
	fl.Int64Var(&o.budget.files, "scrape-max-files", o.budget.files, "fail a scrape that reads more than `N` files: each path opened, each folder entry listed; 0: no bound")
	fl.BoolVar(&o.version, "version", false, "print the version and exit")
	return fl
}

// podsFlag is --pods: "all" is the one value.
type podsFlag struct{ v *bool }

func (p podsFlag) String() string {
	if p.v != nil && *p.v {
		return "all"
	}
	return ""
}

func (p podsFlag) Set(v string) error {
	if v != "all" {
		return errors.New(`want all (no label selector: a pod's labels are not on the node)`)
	}
	*p.v = true
	return nil
}

func (podsFlag) Type() string { return "all" }

// parse reads the flags; a mistake in them is a usage error (exit 2).
func parse(args []string, stdout io.Writer) (*options, bool, error) {
	o := &options{memoryLimit: defaultMemoryLimit, budget: budget{bytes: defaultMaxBytes, files: defaultMaxFiles},
		logLevel: promslog.NewLevel(), logFormat: promslog.NewFormat()}
	if err := o.logLevel.Set("info"); err != nil {
		return nil, false, err
	}
	if err := o.logFormat.Set("logfmt"); err != nil {
		return nil, false, err
	}
	fl := flagSet(o)
	args, o.deprecated = modernize(fl, args)
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: irqnuma-exporter [flags]\n\n%s\n\nExamples:\n%s\n\nFlags:\n%s", description, examples, fl.FlagUsages())
			return nil, true, nil
		}
		if ve := (*pflag.InvalidValueError)(nil); errors.As(err, &ve) {
			return nil, false, cli.FlagError(err) // worded as irqnuma's are
		}
		return nil, false, cli.Usagef("%v (see irqnuma-exporter -h)", err)
	}
	if fl.NArg() == 2 && fl.Arg(0) == "__man" {
		// make install: the manual page, from the same text as -h.
		return nil, true, writeManPage(fl, fl.Arg(1))
	}
	if fl.NArg() > 0 {
		return nil, false, cli.Usagef("unexpected argument %q: irqnuma-exporter takes flags only", fl.Arg(0))
	}
	if err := o.sel.Validate(); err != nil {
		return nil, false, cli.Usage(err)
	}
	if _, _, err := net.SplitHostPort(o.listen); err != nil {
		return nil, false, cli.Usagef("--web.listen-address %q: want HOST:PORT: %v", o.listen, err)
	}
	if !isPath(o.telemetryPath) {
		return nil, false, cli.Usagef("--web.telemetry-path %q: want a path starting with /, of letters, digits and - . _ ~ /", o.telemetryPath)
	}
	if o.budget.files < 0 {
		return nil, false, cli.Usagef("--scrape-max-files %d: want 0 (no bound) or more", o.budget.files)
	}
	if o.podsMax < 1 {
		return nil, false, cli.Usagef("--pods-max %d: want 1 or more (the bound on --pods all's series)", o.podsMax)
	}
	if fl.Changed("pods-max") && !o.allPods {
		return nil, false, cli.Usagef("--pods-max bounds --pods all: give both or neither")
	}
	o.memoryLimitSet = fl.Changed("memory-limit")
	return o, false, nil
}

// modernize rewrites the spellings of the Go flag package the exporter
// used to take, for one release: a long flag with one dash (-root,
// -root=/host) and a renamed flag (renamed: -listen, --listen) become
// pflag's double-dash spelling of today's name, and each such spelling
// gives a warning naming its new one. The value of a flag that takes
// one is passed as it is, as is everything after "--" and whatever is no
// flag of fl (pflag says what is wrong with it).
func modernize(fl *pflag.FlagSet, args []string) (out, warnings []string) {
	out = make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		dashes, body := "--", ""
		switch {
		case strings.HasPrefix(a, "--"):
			body = a[2:]
		case strings.HasPrefix(a, "-") && len(a) > 2:
			dashes, body = "-", a[1:]
		default:
			out = append(out, a)
			continue
		}
		name, value, hasValue := strings.Cut(body, "=")
		newName := name
		if n, ok := renamed[name]; ok {
			newName = n
		}
		f := fl.Lookup(newName)
		if f == nil {
			out = append(out, a)
			continue
		}
		if dashes == "-" || newName != name {
			warnings = append(warnings, fmt.Sprintf("%s%s is an old spelling, taken in this release only: use --%s", dashes, name, newName))
		}
		arg := "--" + newName
		if hasValue {
			arg += "=" + value
		}
		out = append(out, arg)
		if !hasValue && f.NoOptDefVal == "" && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out, warnings
}

// isPath reports whether p is a URL path of unreserved characters
// (RFC 3986) and slashes, starting with one: nothing the landing page's
// link or a scraper's URL would need to escape.
func isPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for _, r := range p {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("-._~/", r) {
			return false
		}
	}
	return true
}
