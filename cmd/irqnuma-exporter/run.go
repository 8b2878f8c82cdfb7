package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/kube"
	"github.com/irqnuma/irqnuma/internal/host/snapshot"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/run/exporter"
	"github.com/irqnuma/irqnuma/internal/safetext"
	"github.com/irqnuma/irqnuma/internal/shutdown"
	"github.com/irqnuma/irqnuma/internal/version"
)

// short is the exporter's one line, description and examples the rest
// of what -h prints and the manual page says.
const (
	short       = "Prometheus exporter of irqnuma's audit, with its own process and Go metrics"
	description = `irqnuma-exporter is irqnuma's Prometheus exporter: on every scrape of /metrics
it reads the host afresh and runs the audit (the same checks as irqnuma audit),
and answers

  irqnuma_finding{check,severity,nic,subject}  1 per current finding
  irqnuma_irq_local{irq,nic,queue}             1 local, 0 remote (absent when unknown)
  irqnuma_irq_effective_cpu{irq,nic,queue}     the one CPU the IRQ is delivered to
  irqnuma_nic_numa_node{nic}                   the NIC's local node (absent when unknown)
  irqnuma_process_present{selector}            1 when a --pid/--comm process runs, 0 when not
  irqnuma_process_nic{selector,nic,attribution} 1 per NIC their sockets use
  irqnuma_pod_cpus, irqnuma_pod_exclusive, irqnuma_pod_processes
                  {cgroup,namespace,pod,container}  per --cgroup group,
                  and per container of a --pod or --container
  irqnuma_pod_exclusive_cpu_irqs{...,nic}      NIC queue IRQs on its exclusive CPUs
  irqnuma_pod_nic_remote{...,nic}              1 when none of its CPUs is local to a NIC it uses
  irqnuma_pod_finding{check,severity,nic,...}  1 per finding about the group
  ("..." are the four pod labels above)
  irqnuma_scrape_duration_seconds, irqnuma_scrape_error, irqnuma_build_info

with its own process_*, go_* and promhttp_metric_handler_* series, in
OpenMetrics to a scraper that asks for it, else in the text format 0.0.4.
A scrape only reads; nothing but /metrics (GET, HEAD) is served. The default
address is loopback: listening elsewhere shows the host's layout to whoever
can reach the port. Read failures are logged on stderr and answered with
irqnuma_scrape_error 1; it never exits for them (a NIC or a mount may come
later), nor for anything else a scrape meets. Every scrape, the first (run
before it listens) too, reads within a budget of its own, 64 MiB
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
irqnuma_scrape_error 1.`
	examples = `  irqnuma-exporter
  irqnuma-exporter --listen 127.0.0.1:9143 --nic eth0 --comm iperf3
  irqnuma-exporter --cgroup /kubepods.slice/kubepods-pod1234.slice
  irqnuma-exporter --pod default/iperf-server --container 3f2e9a4b5c6d
  irqnuma-exporter --root host1.tar.gz --listen 127.0.0.1:9144`
	exitStatus = `  0      stopped by its caller's context (tests), or -h, --version
  1      runtime error: the address cannot be listened on, a snapshot
         cannot be unpacked
  2      usage error: a bad flag, value or argument
  128+N  stopped by signal N (129 SIGHUP, 130 SIGINT, 143 SIGTERM)`
)

// options are the exporter's flags.
type options struct {
	listen  string
	root    string
	sel     audit.Selection
	version bool
	// memoryLimit is --memory-limit, the Go runtime's soft limit
	// (setMemoryLimit), when memoryLimitSet.
	memoryLimit    int64
	memoryLimitSet bool
	budget         budget
}

// stringsFlag is a repeatable string flag.
type stringsFlag struct{ v *[]string }

func (s stringsFlag) String() string {
	if s.v == nil {
		return ""
	}
	return strings.Join(*s.v, ",")
}

func (s stringsFlag) Set(v string) error { *s.v = append(*s.v, v); return nil }

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

// parse reads the flags; a mistake in them is a usage error (exit 2).
func parse(args []string, stdout io.Writer) (*options, bool, error) {
	o := &options{memoryLimit: defaultMemoryLimit, budget: budget{bytes: defaultMaxBytes, files: defaultMaxFiles}}
	fl := flag.NewFlagSet("irqnuma-exporter", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.StringVar(&o.listen, "listen", exporter.DefaultListen, "address to serve /metrics on, `HOST:PORT`")
	fl.StringVar(&o.root, "root", "/", "the host's root: a `folder` holding proc/ and sys/, or a snapshot .tar.gz")
	fl.Var(stringsFlag{&o.sel.NICs}, "nic", "audit only this `NIC` (repeatable)")
	fl.Var(pidsFlag{&o.sel.PIDs}, "pid", "watch the process `PID` and all its threads (repeatable, or a comma-separated list)")
	fl.Var(stringsFlag{&o.sel.Comms}, "comm", "watch every process whose comm is exactly `NAME` (repeatable)")
	fl.Var(stringsFlag{&o.sel.Cgroups}, "cgroup", "watch the control group `PATH` (cgroup v2, or v1's cpuset hierarchy): its processes, CPUs and memory nodes, as irqnuma_pod_* series (repeatable)")
	fl.Var(stringsFlag{&o.sel.Pods}, "pod", "watch every container of the Kubernetes pod `NAMESPACE/NAME`, each as a --cgroup, looked up at every scrape (repeatable)")
	fl.Var(stringsFlag{&o.sel.Containers}, "container", "watch the container `ID` (its runtime ID or a unique prefix, as crictl ps shows it) as a --cgroup, looked up at every scrape (repeatable)")
	fl.Var(sizeFlag{&o.memoryLimit}, "memory-limit", "the Go runtime's soft memory limit (debug.SetMemoryLimit), `BYTES` such as 100MiB or 1GiB; 0: none; without the flag, GOMEMLIMIT's when that is set")
	fl.Var(sizeFlag{&o.budget.bytes}, "scrape-max-bytes", "fail a scrape that reads more than `BYTES` of the host's files, such as 64MiB or 1GiB; 0: no bound")
	fl.Int64Var(&o.budget.files, "scrape-max-files", o.budget.files, "fail a scrape that reads more than `N` files: each path opened, each folder entry listed; 0: no bound")
	fl.BoolVar(&o.version, "version", false, "print the version and exit")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: irqnuma-exporter [flags]\n\n%s\n\nExamples:\n%s\n\nFlags:\n", description, examples)
			fl.SetOutput(stdout)
			fl.PrintDefaults()
			return nil, true, nil
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
		return nil, false, cli.Usagef("--listen %q: want HOST:PORT: %v", o.listen, err)
	}
	if o.budget.files < 0 {
		return nil, false, cli.Usagef("--scrape-max-files %d: want 0 (no bound) or more", o.budget.files)
	}
	fl.Visit(func(f *flag.Flag) { o.memoryLimitSet = o.memoryLimitSet || f.Name == "memory-limit" })
	return o, false, nil
}

// run is the exporter: flags, the root opened once, then /metrics until
// ctx ends. It returns the exit code (internal/cli's).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Code(ctx, serve(ctx, args, stdout, stderr), stderr)
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, done, err := parse(args, stdout)
	if err != nil || done {
		return err
	}
	if o.version {
		fmt.Fprintln(stdout, version.Get().String())
		return nil
	}
	fsys, closeRoot, err := openRoot(ctx, o.root)
	if err != nil {
		return err
	}
	defer func() {
		if err := closeRoot(); err != nil {
			fmt.Fprintf(stderr, "irqnuma-exporter: %s\n", safetext.Escape(err.Error()))
		}
	}()
	defer setMemoryLimit(o, os.Getenv)()
	ex := exporter.NewReader(reader(ctx, fsys, o.sel, o.budget), escaped{stderr})
	// The first scrape, before listening, is one like every other: within
	// its budget, a panic recovered, a failure logged. What the host
	// lacks now may come later (a NIC's driver, a mount): said, and
	// served as irqnuma_scrape_error 1, no exit.
	if scrapeFailed(ex.Scrape()) {
		fmt.Fprintln(stderr, "irqnuma-exporter: warning: the first scrape failed (above): serving irqnuma_scrape_error 1 until a scrape succeeds")
	}
	h, err := newHandler(ex.Scrape, stderr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if host, _, _ := net.SplitHostPort(o.listen); !isLoopback(host) {
		fmt.Fprintf(stderr, "irqnuma-exporter: warning: %s is not a loopback address: anyone who can reach it sees this host's layout\n", o.listen)
	}
	fmt.Fprintf(stderr, "irqnuma-exporter: serving http://%s/metrics\n", ln.Addr())
	return exporter.Serve(ctx, ln, h)
}

// reader is one scrape's reading of the host, within a budget of its own
// (b; kfile.Budget): --pod and --container looked up afresh (kube.Resolve,
// over the kubelet's socket when there is one, podSocket; pods come and
// go between scrapes), then audit.Read. Without --pod or --container it
// is audit.Read alone. A read that passes its budget fails with the
// budget's error, whatever the readers made of theirs. One that passed
// it, or read more than freeAfter, gives the memory it read into back
// when it ends.
func reader(ctx context.Context, root kfile.FS, sel audit.Selection, b budget) func() (*audit.State, error) {
	return func() (*audit.State, error) {
		spent := kfile.NewBudget(b.bytes, b.files)
		fsys := root.WithBudget(spent)
		st, err := func() (*audit.State, error) {
			s := sel
			s.Resolved = nil // this scrape's, not a map shared with the last
			if err := kube.Resolve(ctx, fsys, &s.Selection, podSocket(fsys)); err != nil {
				return nil, fmt.Errorf("--pod, --container: %w", err)
			}
			return auditRead(fsys, s)
		}()
		berr := spent.Err()
		if bytes, _ := spent.Used(); bytes > freeAfter || berr != nil {
			debug.FreeOSMemory()
		}
		if berr != nil {
			return nil, budgetError(b, berr)
		}
		return st, err
	}
}

// auditRead is audit.Read; tests replace it (with a read that panics on
// the trees they mark), nothing else does.
var auditRead = audit.Read

// scrapeFailed reports whether a scrape's families say it failed.
func scrapeFailed(fams []exporter.Family) bool {
	for _, f := range fams {
		if f.Name == exporter.MetricScrapeError {
			return len(f.Samples) == 1 && f.Samples[0].Value == 1
		}
	}
	return false
}

// podSocket is the kubelet's pod resources socket a scrape asks: the
// live root's (kube.LiveSocket), and under a --root folder the one at its
// kube.SocketFile when that is a socket, as in the DaemonSet, whose /host
// holds the node's /var/lib/kubelet. A capture holds no socket: on one,
// Resolve reads the answer a snapshot recorded. Looked at every scrape,
// as the kubelet re-creates its socket when it restarts.
func podSocket(fsys kfile.FS) string {
	if s := kube.LiveSocket(fsys); s != "" {
		return s
	}
	p := fsys.Path(kube.SocketFile)
	if st, err := os.Stat(p); err == nil && st.Mode()&fs.ModeSocket != 0 {
		return p
	}
	return ""
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// openRoot opens --root once: a folder as it is (one that does not exist
// is left to the scrapes, which answer irqnuma_scrape_error 1 and name
// it), a snapshot unpacked into a temporary folder that the returned
// close removes.
func openRoot(ctx context.Context, root string) (kfile.FS, func() error, error) {
	var cleanups []func() error
	closeAll := func() error {
		var errs []error
		for i := len(cleanups) - 1; i >= 0; i-- {
			errs = append(errs, cleanups[i]())
		}
		return errors.Join(errs...)
	}
	if st, err := os.Stat(root); err == nil && !st.IsDir() {
		if !snapshot.IsArchive(root) {
			return kfile.FS{}, nil, cli.Usagef("--root %s: neither a folder nor a snapshot .tar.gz", root)
		}
		dir, cleanup, err := snapshot.Open(ctx, root, snapshot.Limits{})
		if err != nil {
			return kfile.FS{}, nil, err
		}
		// Removed when the exporter ends, and by the signal handler if a
		// stop signal finds it still unpacking past its grace.
		cleanups = append(cleanups, shutdown.OnExit(cleanup))
		root = dir
	} else if err := kfile.CheckRoot(root); err != nil {
		return kfile.FS{}, nil, err
	}
	fsys, err := kfile.Open(root)
	if err != nil {
		closeAll()
		return kfile.FS{}, nil, fmt.Errorf("root: %w", err)
	}
	cleanups = append(cleanups, fsys.Close)
	return fsys, closeAll, nil
}
