package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sync"

	"github.com/prometheus/common/promslog"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/kube"
	"github.com/irqnuma/irqnuma/internal/host/snapshot"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/run/exporter"
	"github.com/irqnuma/irqnuma/internal/run/exporter/httpserve"
	"github.com/irqnuma/irqnuma/internal/safetext"
	"github.com/irqnuma/irqnuma/internal/shutdown"
	"github.com/irqnuma/irqnuma/internal/version"
)

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
	logger := promslog.New(&promslog.Config{Level: o.logLevel, Format: o.logFormat, Writer: stderr})
	for _, w := range o.deprecated {
		logger.Warn(w)
	}
	if o.webConfig != "" {
		// What Serve would find at its first connection, said before the
		// first scrape: a file that cannot be read, or is not a web
		// configuration, is not served over.
		if err := web.Validate(o.webConfig); err != nil {
			return fmt.Errorf("--web.config.file %s: %w", o.webConfig, err)
		}
	}
	fsys, closeRoot, err := openRoot(ctx, o.root)
	if err != nil {
		return err
	}
	defer func() {
		if err := closeRoot(); err != nil {
			logger.Error(safetext.Escape(err.Error()))
		}
	}()
	defer setMemoryLimit(o, os.Getenv)()
	r := &hostReader{ctx: ctx, root: fsys, sel: o.sel, budget: o.budget, allPods: o.allPods, podsMax: o.podsMax}
	log := logLines{logger}
	ex := exporter.NewReader(r.read, log)
	scrape := func() []exporter.Family { return r.scrape(ex) }
	// The first scrape, before listening, is one like every other: within
	// its budget, a panic recovered, a failure logged. What the host
	// lacks now may come later (a NIC's driver, a mount): said, and
	// served as irqnuma_scrape_error 1, no exit.
	if scrapeFailed(scrape()) {
		logger.Warn("the first scrape failed (above): serving irqnuma_scrape_error 1 until a scrape succeeds")
	}
	h, err := newHandler(scrape, log, o.telemetryPath)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if host, _, _ := net.SplitHostPort(o.listen); !isLoopback(host) && o.webConfig == "" {
		logger.Warn(o.listen + " is not a loopback address and no --web.config.file asks for auth: anyone who can reach it sees this host's layout")
	}
	logger.Info("serving", "address", ln.Addr().String(), "path", o.telemetryPath)
	noSocket := false
	flags := &web.FlagConfig{WebListenAddresses: &[]string{o.listen}, WebSystemdSocket: &noSocket, WebConfigFile: &o.webConfig}
	return httpserve.ServeWith(ctx, ln, h, func(srv *http.Server, ln net.Listener) error {
		// The server's own errors (a TLS handshake that failed) are
		// the log's too, escaped: a client chooses what they quote.
		srv.ErrorLog = stdlog.New(log, "", 0)
		return web.Serve(ln, srv, flags, logger)
	})
}

// hostReader is the exporter's reading of the host, one scrape at a
// time (exporter.Exporter calls read under its lock, and scrape holds
// mu around it).
type hostReader struct {
	ctx    context.Context
	root   kfile.FS
	sel    audit.Selection
	budget budget
	// allPods is --pods all, within podsMax (kube.ResolveAll).
	allPods bool
	podsMax int
	mu      sync.Mutex
	// dropped is the running pods the last read left out past podsMax;
	// nil when it did not list them (the listing failed).
	dropped *int
}

// metricPodsDropped is --pods all's count of the pods it left out.
const metricPodsDropped = "irqnuma_pods_dropped"

// scrape is ex's Scrape, whose read is r.read, and with --pods all
// irqnuma_pods_dropped from that same read (absent when the node's pods
// could not be listed).
func (r *hostReader) scrape(ex *exporter.Exporter) []exporter.Family {
	r.mu.Lock()
	defer r.mu.Unlock()
	fams := ex.Scrape()
	if !r.allPods {
		return fams
	}
	f := exporter.Family{Name: metricPodsDropped, Help: "Running pods --pods all leaves out, past --pods-max (the first by NAMESPACE/NAME are kept); absent when the node's pods could not be listed."}
	if r.dropped != nil {
		f.Samples = []exporter.Sample{{Value: float64(*r.dropped)}}
	}
	return append(fams, f)
}

// reader is hostReader's read of root with sel within b, without --pods
// all.
func reader(ctx context.Context, root kfile.FS, sel audit.Selection, b budget) func() (*audit.State, error) {
	r := &hostReader{ctx: ctx, root: root, sel: sel, budget: b}
	return r.read
}

// read is one scrape's reading of the host, within a budget of its own
// (kfile.Budget): with --pods all every pod the node runs added to the
// selection (kube.ResolveAll), --pod and --container looked up afresh
// (kube.Resolve, over the kubelet's socket when there is one, podSocket;
// pods come and go between scrapes), then audit.Read. Without a pod
// selection it is audit.Read alone. A read that passes its budget fails
// with the budget's error, whatever the readers made of theirs. One that
// passed it, or read more than freeAfter, gives the memory it read into
// back when it ends.
func (r *hostReader) read() (*audit.State, error) {
	spent := kfile.NewBudget(r.budget.bytes, r.budget.files)
	fsys := r.root.WithBudget(spent)
	r.dropped = nil
	st, err := func() (*audit.State, error) {
		s := r.sel
		s.Resolved = nil // this scrape's, not a map shared with the last
		if r.allPods {
			n, err := kube.ResolveAll(r.ctx, fsys, &s.Selection, podSocket(fsys), r.podsMax)
			if err != nil {
				return nil, fmt.Errorf("--pods all: %w", err)
			}
			r.dropped = &n
		} else if err := kube.Resolve(r.ctx, fsys, &s.Selection, podSocket(fsys)); err != nil {
			return nil, fmt.Errorf("--pod, --container: %w", err)
		}
		return auditRead(fsys, s)
	}()
	berr := spent.Err()
	if bytes, _ := spent.Used(); bytes > freeAfter || berr != nil {
		debug.FreeOSMemory()
	}
	if berr != nil {
		return nil, budgetError(r.budget, berr)
	}
	return st, err
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
