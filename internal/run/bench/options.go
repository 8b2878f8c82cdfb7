package bench

import (
	"time"

	"github.com/irqnuma/irqnuma/internal/kfile"
)

// Options are a bench's settings as a command line gives them.
type Options struct {
	NIC        string
	Placements string // ParseCells' form; "" is "default"
	RemoteNode int    // negative: the farthest node from the NIC's
	// Flow is --flow, "udp|tcp SRC[:PORT] DST[:PORT]"; "" none.
	Flow string
	// Observe is --observe: find the flow's queue during a first run.
	Observe bool
	Repeat  int
	// Regexp and JSONPath choose the parser (NewParser).
	Regexp, JSONPath  string
	DryRun, KeepGoing bool
	AllowIrqbalance   bool
	// Timeout stops a run still going after it; 0: none.
	Timeout time.Duration
}

// DefaultTimeout is --timeout's default: ten minutes is far past any
// run a network benchmark is usually given (iperf3's default is 10 s,
// long soaks a few minutes), yet a command that hangs holds the root's
// lock and the pinned IRQs for minutes, not for good.
const DefaultTimeout = 10 * time.Minute

// Request turns the options, the root and the command into a Request,
// checking what can be checked without the host: the placements' names,
// how to read the result, the repeat count. Every refusal is ErrUsage.
// The caller adds the writer, clock, streams and observer.
func (o Options) Request(fsys kfile.FS, command []string) (Request, error) {
	r := Request{Root: fsys, NIC: o.NIC, Repeat: o.Repeat, Command: command, DryRun: o.DryRun,
		KeepGoing: o.KeepGoing, AllowIrqbalance: o.AllowIrqbalance, Timeout: o.Timeout, Observe: o.Observe}
	if o.RemoteNode >= 0 {
		n := o.RemoteNode
		r.RemoteNode = &n
	}
	if len(command) == 0 {
		return r, usagef("give the benchmark to run after --, e.g. irqnuma bench --nic eth0 -- iperf3 -c HOST -J")
	}
	if o.Repeat < 1 {
		return r, usagef("--repeat %d: want 1 or more", o.Repeat)
	}
	if o.Timeout < 0 {
		return r, usagef("--timeout %s: want 0 (none) or more", o.Timeout)
	}
	if o.Flow != "" {
		f, err := parseFlow(o.Flow)
		if err != nil {
			return r, err
		}
		r.Flow = &f
	}
	if o.Placements == "" {
		o.Placements = "default"
	}
	var err error
	if r.Cells, err = ParseCells(o.Placements); err != nil {
		return r, err
	}
	r.Parser, err = NewParser(command, o.Regexp, o.JSONPath)
	return r, err
}
