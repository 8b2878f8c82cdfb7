package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/judge/audit"
	"github.com/irqnuma/irqnuma/internal/shutdown"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
)

// seedQueueIRQs are the seed's eth0 queue IRQs.
var seedQueueIRQs = []int{284, 285, 286, 287, 288, 289, 290, 291, 292, 293, 294, 295, 296, 297, 298, 299}

// recorder observes a bench: every step in order, and the writes made
// before each.
type recorder struct {
	mu     sync.Mutex
	w      *failingWriter
	events []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%d writes: ", r.w.n)+fmt.Sprintf(format, args...))
}

func (r *recorder) Planned(res *Result) { r.add("planned %d cells", len(res.Cells)) }
func (r *recorder) Pinning(p *tune.PinResult) {
	r.add("pinning to %s", p.Targets[0].CPUs)
}
func (r *recorder) Pinned(p *tune.PinResult) { r.add("pinned %d of %d", p.Changed, p.Changes) }
func (r *recorder) Running(c *PlannedCell, rep int) {
	r.add("running %s #%d", c.Name, rep)
}
func (r *recorder) Ran(c *PlannedCell, run *RunResult) {
	r.add("ran %s #%d: %q", c.Name, run.Repeat, run.Error)
}
func (r *recorder) Restoring(string) { r.add("restoring") }
func (r *recorder) Restored(res *tune.RestoreResult) {
	r.add("restored %d, %d failed", res.Total, len(res.Failed))
}

// failingWriter writes through tune.FileWriter, counting, and fails the
// writes whose numbers (from 1) are in fail.
type failingWriter struct {
	mu   sync.Mutex
	n    int
	fail map[int]bool
}

func (w *failingWriter) WriteFile(path string, b []byte) error {
	w.mu.Lock()
	w.n++
	n := w.n
	w.mu.Unlock()
	if w.fail[n] {
		return &os.PathError{Op: "write", Path: path, Err: syscall.EINVAL}
	}
	return tune.FileWriter{}.WriteFile(path, b)
}

// affinities reads the smp_affinity_list of the IRQs under root.
func affinities(t *testing.T, root string, irqs []int) cpuset.Set {
	t.Helper()
	var all cpuset.Set
	for _, n := range irqs {
		b, err := os.ReadFile(filepath.Join(root, "proc/irq", fmt.Sprint(n), "smp_affinity_list"))
		if err != nil {
			t.Fatal(err)
		}
		s, err := cpuset.ParseList(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		all = all.Union(s)
	}
	return all
}

// fakeIperf3 is a benchmark that checks where bench put it and the IRQs,
// then prints a real iperf3 -J document (or fails, or waits).
type fakeIperf3 struct {
	t     *testing.T
	root  string
	doc   []byte
	runs  int
	fails map[int]int // run number (from 1) -> exit code
	block bool        // wait for ctx, then exit as a signal would
	panic int         // panic on this run
	onRun func()      // called as each run starts
	seen  []string    // "app CPUs / IRQ CPUs / mem nodes" per run
}

func (f *fakeIperf3) exec(ctx context.Context, p sched.Placement, args []string, s sched.Streams) (int, error) {
	f.runs++
	if f.onRun != nil {
		f.onRun()
	}
	f.seen = append(f.seen, fmt.Sprintf("%s / %s / %s", p.CPUs, affinities(f.t, f.root, seedQueueIRQs), p.MemNodes))
	if f.runs == f.panic {
		panic("benchmark harness bug")
	}
	if f.block {
		<-ctx.Done()
		return 143, nil
	}
	if code := f.fails[f.runs]; code != 0 {
		fmt.Fprintln(s.Stderr, "iperf3: error - the server is busy running a test")
		return code, nil
	}
	s.Stdout.Write(f.doc)
	return 0, nil
}

func benchSeed(t *testing.T, f *fakeIperf3, w *failingWriter, ctx context.Context, keepGoing bool) (*Result, *recorder, error) {
	t.Helper()
	cells, _ := ParseCells("default")
	p, _ := NewParser(iperf3Cmd, "", "")
	rec := &recorder{w: w}
	res, err := Run(ctx, Request{Root: hosttest.Open(t, f.root), NIC: "eth0", Cells: cells, Repeat: 2, Command: iperf3Cmd, Parser: p,
		Writer: w, Exec: f.exec, Observer: rec, KeepGoing: keepGoing})
	return res, rec, err
}

// TestRunSeed runs the default matrix twice over on a copy of the seed:
// each run sees its cell's CPUs and the IRQs where the cell wants them,
// every result is parsed, each change is announced before it is made,
// and the tree ends byte for byte as it began, state files retired.
func TestRunSeed(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	before := hosttest.Files(t, root)
	f := &fakeIperf3{t: t, root: root, doc: iperf3Sample(t, "tcp.json")}
	w := &failingWriter{}
	res, rec, err := benchSeed(t, f, w, context.Background(), false)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, strings.Join(rec.events, "\n"))
	}
	wantSeen := []string{
		"24-31,56-63 / 16-23,48-55 / ", "24-31,56-63 / 16-23,48-55 / 1", "16-23,48-55 / 16-23,48-55 / ", "8-15,40-47 / 16-23,48-55 / ",
		"24-31,56-63 / 16-23,48-55 / ", "24-31,56-63 / 16-23,48-55 / 1", "16-23,48-55 / 16-23,48-55 / ", "8-15,40-47 / 16-23,48-55 / ",
		"24-31,56-63 / 0-7,32-39 / ", "8-15,40-47 / 0-7,32-39 / ",
		"24-31,56-63 / 0-7,32-39 / ", "8-15,40-47 / 0-7,32-39 / ",
	}
	if diff := cmp.Diff(wantSeen, f.seen); diff != "" {
		t.Errorf("app CPUs / IRQ CPUs / memory per run (-want +got):\n%s", diff)
	}
	for _, c := range res.Cells {
		if len(c.Runs) != 2 || c.Summary == nil || c.Summary.Median != 10901652520.948277 || *c.Summary.Retransmits != 13 {
			t.Errorf("%s: %d runs, summary %+v", c.Name, len(c.Runs), c.Summary)
		}
	}
	wantEvents := []string{
		"0 writes: planned 6 cells",
		"0 writes: pinning to 16-23,48-55",
		"16 writes: pinned 16 of 16",
	}
	if diff := cmp.Diff(wantEvents, rec.events[:3]); diff != "" {
		t.Errorf("first events (-want +got):\n%s", diff)
	}
	for _, e := range rec.events {
		if strings.Contains(e, "pinning to 0-7") && !strings.HasPrefix(e, "32 writes") {
			t.Errorf("second pin announced after %q: want after the 16 writes of the first pin and the 16 of its restore", e)
		}
	}
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("tree not as it was (-before +after):\n%s", diff)
	}
	if len(res.StateFiles) != 2 || len(res.Unrestored) != 0 || res.Stopped != "" {
		t.Errorf("state files %v, unrestored %v, stopped %q", res.StateFiles, res.Unrestored, res.Stopped)
	}
	for _, sf := range res.StateFiles {
		if _, err := os.Stat(sf + ".restored"); err != nil {
			t.Errorf("state file not retired: %v", err)
		}
	}
}

// TestRunRestoresOnFailure: a run that fails, a stop signal during a
// run, a pin write the kernel refuses, a panic in the middle: the matrix
// stops there and the tree is back as it was.
func TestRunRestoresOnFailure(t *testing.T) {
	tests := []struct {
		name      string
		fake      fakeIperf3
		fail      map[int]bool
		cancel    bool
		keepGoing bool
		wantErr   error
		wantRuns  int
		wantStop  string
	}{
		{name: "third run fails", fake: fakeIperf3{fails: map[int]int{3: 1}}, wantErr: ErrRun, wantRuns: 3,
			wantStop: "a benchmark run failed: shared run 1: exit status 1"},
		{name: "runs fail, keep going", fake: fakeIperf3{fails: map[int]int{3: 1, 9: 2}}, keepGoing: true, wantErr: ErrRun, wantRuns: 12},
		{name: "SIGTERM during the first run", fake: fakeIperf3{block: true}, cancel: true, wantRuns: 1,
			wantStop: "stopped during local run 1: terminated signal received"},
		{name: "pin write refused", fail: map[int]bool{5: true}, wantRuns: 0,
			wantStop: "pin to node 1: a write failed: every change was rolled back"},
		{name: "second pin write refused", fail: map[int]bool{38: true}, wantRuns: 8,
			wantStop: "pin to node 0: a write failed: every change was rolled back"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := hosttest.Copy(t, "seed")
			before := hosttest.Files(t, root)
			f := tt.fake
			f.t, f.root, f.doc = t, root, iperf3Sample(t, "tcp.json")
			ctx := context.Background()
			if tt.cancel {
				c, cancel := context.WithCancelCause(ctx)
				ctx = c
				f.onRun = func() { cancel(shutdown.Cause(syscall.SIGTERM)) }
			}
			res, rec, err := benchSeed(t, &f, &failingWriter{fail: tt.fail}, ctx, tt.keepGoing)
			if err == nil {
				t.Fatalf("Run succeeded\n%s", strings.Join(rec.events, "\n"))
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Run = %v, want %v", err, tt.wantErr)
			}
			if res.runs() != tt.wantRuns || (tt.wantStop != "" && res.Stopped != tt.wantStop) {
				t.Errorf("%d runs, stopped %q; want %d, %q", res.runs(), res.Stopped, tt.wantRuns, tt.wantStop)
			}
			if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
				t.Errorf("tree not as it was (-before +after):\n%s\n%s", diff, strings.Join(rec.events, "\n"))
			}
			if len(res.Unrestored) > 0 {
				t.Errorf("unrestored %v", res.Unrestored)
			}
		})
	}
}

// TestRunRestoresOnPanic: a panic during a run unwinds through the
// restore.
func TestRunRestoresOnPanic(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	before := hosttest.Files(t, root)
	f := &fakeIperf3{t: t, root: root, doc: iperf3Sample(t, "tcp.json"), panic: 2}
	func() {
		defer func() {
			if p := recover(); p == nil {
				t.Error("no panic")
			}
		}()
		benchSeed(t, f, &failingWriter{}, context.Background(), false)
	}()
	if diff := cmp.Diff(before, hosttest.Files(t, root)); diff != "" {
		t.Errorf("tree not as it was after a panic (-before +after):\n%s", diff)
	}
}

// TestRunRestoreFails: a restore the kernel refuses is said, with the
// state file to restore from, and the matrix stops.
func TestRunRestoreFails(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	f := &fakeIperf3{t: t, root: root, doc: iperf3Sample(t, "tcp.json")}
	res, _, err := benchSeed(t, f, &failingWriter{fail: map[int]bool{18: true}}, context.Background(), false)
	if err == nil || len(res.Unrestored) != 1 || !strings.Contains(err.Error(), "run irqnuma irq restore "+res.Unrestored[0]) {
		t.Fatalf("Run = %v; unrestored %v", err, res.Unrestored)
	}
	if f.runs != 8 {
		t.Errorf("%d runs, want the 8 of the first pin only", f.runs)
	}
	if _, err := os.Stat(res.Unrestored[0]); err != nil {
		t.Errorf("state file of the failed restore: %v", err)
	}
}

// TestRunRefusesIrqbalance: a running irqbalance is a refusal before
// anything changes, unless allowed; a dry run only reports it.
func TestRunRefusesIrqbalance(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	pid := filepath.Join(root, "proc/4242")
	if err := os.MkdirAll(pid, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, v := range map[string]string{"comm": "irqbalance\n", "cmdline": "/usr/sbin/irqbalance\x00--foreground\x00"} {
		if err := os.WriteFile(filepath.Join(pid, f), []byte(v), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	cells, _ := ParseCells("local")
	p, _ := NewParser(iperf3Cmd, "", "")
	w := &failingWriter{}
	f := &fakeIperf3{t: t, root: root, doc: iperf3Sample(t, "tcp.json")}
	req := Request{Root: hosttest.Open(t, root), NIC: "eth0", Cells: cells, Repeat: 1, Command: iperf3Cmd, Parser: p, Writer: w, Exec: f.exec}
	if _, err := Run(context.Background(), req); !errors.Is(err, ErrIrqbalance) || w.n != 0 || f.runs != 0 {
		t.Errorf("Run with irqbalance running = %v, %d writes, %d runs; want ErrIrqbalance and nothing done", err, w.n, f.runs)
	}
	req.AllowIrqbalance = true
	if _, err := Run(context.Background(), req); err != nil || f.runs != 1 {
		t.Errorf("Run with --allow-irqbalance = %v, %d runs", err, f.runs)
	}
	req.AllowIrqbalance, req.DryRun = false, true
	res, err := Run(context.Background(), req)
	if err != nil || !slices.ContainsFunc(res.Findings, func(f audit.Finding) bool { return f.Check == audit.CheckIrqbalance }) {
		t.Errorf("dry run: %v; the audit should say irqbalance runs: %+v", err, res.Findings)
	}
}

// TestRunIperf3Errors: iperf3 3.12 reports a refused connection inside
// its JSON and exits 0, later versions exit 1: either way the run fails
// saying what iperf3 said.
func TestRunIperf3Errors(t *testing.T) {
	for code, want := range map[int]string{
		0: "cannot read the result: iperf3: unable to connect to server: Connection refused",
		1: "exit status 1 (iperf3: unable to connect to server: Connection refused)",
	} {
		root := hosttest.Copy(t, "seed")
		cells, _ := ParseCells("local")
		p, _ := NewParser(iperf3Cmd, "", "")
		refused := iperf3Sample(t, "refused.json")
		exec := func(ctx context.Context, pl sched.Placement, args []string, s sched.Streams) (int, error) {
			s.Stdout.Write(refused)
			return code, nil
		}
		res, err := Run(context.Background(), Request{Root: hosttest.Open(t, root), NIC: "eth0", Cells: cells, Repeat: 1, Command: iperf3Cmd,
			Parser: p, Writer: tune.FileWriter{}, Exec: exec})
		if !errors.Is(err, ErrRun) || res.Cells[0].Runs[0].Error != want || res.Cells[0].Runs[0].ExitCode != code {
			t.Errorf("exit %d: %v; run %+v; want its error %q", code, err, res.Cells[0].Runs[0], want)
		}
	}
}
