package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/irqnuma/irqnuma/internal/run/watch"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// RunResult is one run of the command in a cell.
type RunResult struct {
	Repeat   int       `json:"repeat"` // 1 for the first
	Start    time.Time `json:"start"`
	Seconds  float64   `json:"seconds"` // from before the command started to after it ended
	ExitCode int       `json:"exit_code"`
	Error    string    `json:"error"`  // why the run failed; "" when it did not
	Result   *Value    `json:"result"` // null when it failed
	// App is the busiest of the command's CPUs; Softirq the CPU that ran
	// most of the NIC's softirq (watch's verdict CPU), null when no CPU
	// took the NIC's queue IRQs.
	App     *CPULoad `json:"app_cpu"`
	Softirq *CPULoad `json:"softirq_cpu"`
	// NICIRQsPerSec is the NIC's queue IRQs per second; NetRXPerSec the
	// NET_RX softirqs per second on the command's and the IRQs' CPUs.
	NICIRQsPerSec float64                `json:"nic_irqs_per_sec"`
	NetRXPerSec   unknown.Value[float64] `json:"net_rx_per_sec"`
	SoftirqBound  bool                   `json:"softirq_bound"`
	Verdict       string                 `json:"verdict"`
	// CPUs are the command's and the IRQs' CPUs (and any other that took
	// the NIC's IRQs or was busy), as watch measured them over the run.
	CPUs  []watch.CPUStats `json:"cpus"`
	NIC   *watch.NICStats  `json:"nic"`
	Notes []string         `json:"notes"`
}

// MarshalJSON writes the unknowns' reasons beside them.
func (r RunResult) MarshalJSON() ([]byte, error) {
	type plain RunResult
	return unknown.MarshalObject(plain(r))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *RunResult) UnmarshalJSON(b []byte) error {
	type plain RunResult
	return unknown.UnmarshalObject(b, (*plain)(r))
}

// CPULoad is one CPU's share of user, system and softirq time over a run.
type CPULoad struct {
	CPU  int                    `json:"cpu"`
	Node unknown.Value[int]     `json:"node"`
	Usr  unknown.Value[float64] `json:"usr"`
	Sys  unknown.Value[float64] `json:"sys"`
	Soft unknown.Value[float64] `json:"soft"`
	Busy unknown.Value[float64] `json:"busy"`
}

// MarshalJSON writes the unknowns' reasons beside them.
func (l CPULoad) MarshalJSON() ([]byte, error) {
	type plain CPULoad
	return unknown.MarshalObject(plain(l))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (l *CPULoad) UnmarshalJSON(b []byte) error {
	type plain CPULoad
	return unknown.UnmarshalObject(b, (*plain)(l))
}

// execHere runs the command on this host in a process group of its own
// and kills whatever it leaves behind (sched.RunGroup).
var execHere Exec = sched.RunGroup

// errTimeout is the cause of a run's context when --timeout ends it.
var errTimeout = errors.New("run timed out")

// maxOutput bounds the standard output kept of a run for its parser.
const maxOutput = 64 << 20

// measure runs the command once in cell c between two samples of the
// host's counters and reads its result.
func (b *bencher) measure(ctx context.Context, c *PlannedCell, rep int) RunResult {
	r := RunResult{Repeat: rep, Start: b.req.Now(), CPUs: []watch.CPUStats{}, Notes: []string{}}
	prev, err := b.sampler.Sample()
	if err != nil {
		r.Error = fmt.Sprintf("sample before the run: %v", err)
		return r
	}
	// --regexp reads the output as it comes and keeps its last match;
	// the JSON parsers need the document whole, up to maxOutput.
	out := &capped{max: maxOutput}
	var stdout io.Writer = out
	var lm *lastMatch
	if b.req.Parser.Kind == ParseRegexp {
		lm = b.req.Parser.lastMatch()
		stdout = lm
	}
	exe := b.req.Exec
	if exe == nil {
		exe = execHere
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if b.req.Timeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(ctx, b.req.Timeout, errTimeout)
	}
	code, runErr := exe(runCtx, sched.Placement{CPUs: c.AppCPUs, MemNodes: c.MemNodes}, b.req.Command,
		sched.Streams{Stdout: stdout, Stderr: b.req.Stderr})
	timedOut := ctx.Err() == nil && errors.Is(context.Cause(runCtx), errTimeout)
	cancel()
	cur, err := b.sampler.Sample()
	if err != nil {
		r.Error = fmt.Sprintf("sample after the run: %v", err)
		return r
	}
	r.Seconds = cur.Time.Sub(prev.Time).Seconds()
	if iv, err := b.sampler.Diff(prev, cur, c.AppCPUs.Union(c.IRQCPUs)); err == nil {
		r.load(iv, c)
	} else {
		r.Notes = append(r.Notes, err.Error())
	}
	r.ExitCode = code
	var v Value
	var perr error
	if lm != nil {
		v, perr = lm.value()
	} else {
		v, perr = b.req.Parser.Parse(out.Bytes())
	}
	switch {
	case timedOut:
		r.Error = fmt.Sprintf("timed out: still running after %s (--timeout), stopped", b.req.Timeout)
		if runErr != nil {
			r.Error += ": " + runErr.Error()
		}
	case runErr != nil:
		r.Error = runErr.Error()
	case code != 0 && b.req.Parser.Kind == ParseIperf3 && iperf3Error(out.Bytes()) != "":
		r.Error = fmt.Sprintf("exit status %d (iperf3: %s)", code, iperf3Error(out.Bytes()))
	case code != 0:
		r.Error = fmt.Sprintf("exit status %d", code)
	case perr != nil:
		r.Error = perr.Error()
	default:
		r.Result = &v
	}
	if out.cut {
		r.Notes = append(r.Notes, fmt.Sprintf("the command wrote more than %d MiB to stdout: only the first were parsed", maxOutput>>20))
	}
	if lm != nil && lm.long {
		r.Notes = append(r.Notes, fmt.Sprintf("a line of the command's stdout was longer than %d KiB: --regexp matched it in pieces that long", maxLine>>10))
	}
	return r
}

// load fills in the CPU figures of a run from its interval.
func (r *RunResult) load(iv *watch.Interval, c *PlannedCell) {
	r.Notes = append(r.Notes, iv.Notes...)
	var netRX float64
	hasRX := false
	for _, s := range iv.CPUs {
		if !c.AppCPUs.Contains(s.CPU) && !c.IRQCPUs.Contains(s.CPU) && s.NICIRQs == 0 && !busy(s) {
			continue
		}
		r.CPUs = append(r.CPUs, s)
		if rx, ok := s.NetRX.Get(); ok && (c.AppCPUs.Contains(s.CPU) || c.IRQCPUs.Contains(s.CPU)) {
			netRX += rx
			hasRX = true
		}
		if c.AppCPUs.Contains(s.CPU) && (r.App == nil || s.Busy.Or(-1) > r.App.Busy.Or(-1)) {
			r.App = cpuLoad(s)
		}
	}
	r.NetRXPerSec = unknown.NotAs[float64](unknown.KindNotCaptured, "no NET_RX count on the command's or the IRQs' CPUs")
	if hasRX {
		r.NetRXPerSec = unknown.Of(netRX)
	}
	if len(iv.NICs) == 0 {
		return
	}
	n := iv.NICs[0]
	r.NIC, r.NICIRQsPerSec = &n, n.QueueIRQsPerSec
	v := n.Verdict
	r.Verdict, r.SoftirqBound = v.Text, v.SoftirqBound
	if cpu, ok := v.CPU.Get(); ok {
		notRead := unknown.Because(unknown.KindNotCaptured, "watch did not list the CPU")
		r.Softirq = &CPULoad{CPU: cpu, Node: v.Node, Usr: unknown.Not[float64](notRead), Sys: unknown.Not[float64](notRead), Soft: v.Soft, Busy: v.Busy}
		for _, s := range iv.CPUs {
			if s.CPU == cpu {
				r.Softirq = cpuLoad(s)
			}
		}
	}
}

func busy(s watch.CPUStats) bool {
	for _, w := range s.Why {
		if w == "busy" {
			return true
		}
	}
	return false
}

func cpuLoad(s watch.CPUStats) *CPULoad {
	return &CPULoad{CPU: s.CPU, Node: s.Node, Usr: s.Usr, Sys: s.Sys, Soft: s.Soft, Busy: s.Busy}
}

// capped keeps the first max bytes written to it and drops the rest,
// never failing the writer (the command must not die of a full buffer).
type capped struct {
	bytes.Buffer
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room < len(p) {
		c.cut = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}
