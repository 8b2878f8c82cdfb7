package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/irqnuma/irqnuma/proc"
	"github.com/irqnuma/irqnuma/report"
	"github.com/irqnuma/irqnuma/topology"
	"github.com/irqnuma/irqnuma/watch"
)

func init() { register(newWatchCmd) }

func newWatchCmd(a *app) *cobra.Command {
	var (
		nics     []string
		pids     []int
		comms    []string
		interval time.Duration
		count    int
	)
	c := &cobra.Command{
		Use:   "watch",
		Short: "Show live which CPUs take the NICs' interrupts and softirq load, and whether that is the bottleneck",
		Long: `watch samples /proc/interrupts, /proc/softirqs, the per-CPU lines of /proc/stat,
/proc/net/softnet_stat and the watched threads every --interval and shows, per
NIC queue IRQ, its interrupts per second and the CPUs that took them; per CPU
that matters (it took NIC IRQs, ran a watched thread or was over 50% busy) its
%usr %sys %irq %soft, NET_RX/s, NET_TX/s, softnet drops and time_squeeze per
second and the watched threads that last ran there; and per NIC a verdict in
words: which CPU runs its softirq, on which node, local or remote, saturated or
not, and where the watched threads run relative to it.

On a terminal the screen is redrawn in place; q or Ctrl-C quits. Otherwise
one block is written per interval; -o json writes one JSON object per
interval (JSON lines). The first interval needs two samples.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if interval <= 0 {
				return usagef("--interval %s: want a positive duration such as 1s or 200ms", interval)
			}
			if count < 0 {
				return usagef("--count %d: want 0 (until stopped) or more", count)
			}
			for _, p := range pids {
				if p <= 0 {
					return usagef("--pid %d: want a process id above 0", p)
				}
			}
			return runWatch(a, watchConfig{nics: nics, pids: pids, comms: comms, interval: interval, count: count})
		},
	}
	c.Flags().StringArrayVar(&nics, "nic", nil, "watch only this NIC (repeatable); default every NIC")
	c.Flags().IntSliceVar(&pids, "pid", nil, "follow this process's threads (repeatable)")
	c.Flags().StringArrayVar(&comms, "comm", nil, "follow the processes with this exact command name (repeatable)")
	c.Flags().DurationVar(&interval, "interval", time.Second, "time between samples")
	c.Flags().IntVar(&count, "count", 0, "stop after this many intervals; 0 runs until stopped")
	return c
}

type watchConfig struct {
	nics     []string
	pids     []int
	comms    []string
	interval time.Duration
	count    int
}

func runWatch(a *app, cfg watchConfig) error {
	h, err := topology.Read(a.root)
	if err != nil {
		return err
	}
	var procs []*proc.Process
	if len(cfg.pids) > 0 || len(cfg.comms) > 0 {
		if procs, err = proc.Select(a.root, cfg.pids, cfg.comms); err != nil {
			return err
		}
	}
	s, err := watch.NewSampler(h, watch.Options{NICs: cfg.nics, Processes: procs, Now: a.now})
	if err != nil {
		return err
	}

	var out frameWriter
	switch {
	case a.json():
		out = &jsonFrames{enc: json.NewEncoder(a.stdout)}
	default:
		if f, ok := a.stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			scr, err := openScreen(f, a.stdin)
			if err != nil {
				return err
			}
			defer scr.close()
			out = scr
		} else {
			out = &plainFrames{w: a.stdout}
		}
	}

	ctx := a.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	prev, err := s.Sample()
	if err != nil {
		return err
	}
	if err := out.waiting(cfg.interval); err != nil {
		return err
	}
	tick := time.NewTicker(cfg.interval)
	defer tick.Stop()
	for seq := 1; cfg.count == 0 || seq <= cfg.count; seq++ {
		select {
		case <-ctx.Done():
			return nil
		case <-out.quit():
			return nil
		case <-tick.C:
		}
		cur, err := s.Sample()
		if err != nil {
			return err
		}
		iv, err := watch.Diff(h, s.NICs(), prev, cur)
		if err != nil {
			return err
		}
		iv.Seq = seq
		if err := out.frame(iv); err != nil {
			return err
		}
		prev = cur
	}
	return nil
}

// frameWriter is where the intervals go: JSON lines, plain blocks, or a
// terminal screen redrawn in place.
type frameWriter interface {
	waiting(interval time.Duration) error // after the first sample
	frame(iv *watch.Interval) error
	quit() <-chan struct{} // closed when the user asks to quit
}

type jsonFrames struct{ enc *json.Encoder }

func (j *jsonFrames) waiting(time.Duration) error    { return nil }
func (j *jsonFrames) frame(iv *watch.Interval) error { return j.enc.Encode(iv) }
func (j *jsonFrames) quit() <-chan struct{}          { return nil }

// plainFrames writes one block per interval, a blank line between blocks.
type plainFrames struct {
	w io.Writer
	n int
}

func (p *plainFrames) waiting(time.Duration) error { return nil }
func (p *plainFrames) quit() <-chan struct{}       { return nil }
func (p *plainFrames) frame(iv *watch.Interval) error {
	if p.n > 0 {
		if _, err := io.WriteString(p.w, "\n"); err != nil {
			return err
		}
	}
	p.n++
	return report.WriteWatch(p.w, iv, 0)
}

// screen redraws the interval in place on a terminal, fitted to its size,
// and reads q or Ctrl-C from the keyboard in raw mode. close restores the
// terminal; runWatch defers it, so every way out (q, Ctrl-C, SIGTERM via
// the context, an error, a panic) restores it.
type screen struct {
	out    *os.File
	in     *os.File      // nil when stdin is not a terminal
	state  *term.State   // the terminal's mode before raw mode
	done   chan struct{} // closed on q or Ctrl-C
	closed bool
}

func openScreen(out *os.File, stdin io.Reader) (*screen, error) {
	s := &screen{out: out, done: make(chan struct{})}
	if in, ok := stdin.(*os.File); ok && term.IsTerminal(int(in.Fd())) {
		st, err := term.MakeRaw(int(in.Fd()))
		if err != nil {
			return nil, fmt.Errorf("terminal raw mode: %w", err)
		}
		s.in, s.state = in, st
		go s.readKeys()
	}
	if _, err := io.WriteString(out, "\x1b[?25l"); err != nil { // hide the cursor
		s.close()
		return nil, err
	}
	return s, nil
}

// readKeys closes done on q, Q or Ctrl-C (raw mode delivers it as a byte,
// not a signal). It ends when stdin does.
func (s *screen) readKeys() {
	buf := make([]byte, 16)
	for {
		n, err := s.in.Read(buf)
		if bytes.ContainsAny(buf[:n], "qQ\x03") {
			close(s.done)
			return
		}
		if err != nil {
			return
		}
	}
}

func (s *screen) quit() <-chan struct{} { return s.done }

func (s *screen) size() (w, h int) {
	w, h, err := term.GetSize(int(s.out.Fd()))
	if err != nil || w <= 0 || h <= 0 {
		return 80, 24
	}
	return w, h
}

func (s *screen) waiting(interval time.Duration) error {
	return s.draw(fmt.Sprintf("irqnuma watch: first interval in %s; q quits\n", interval))
}

func (s *screen) frame(iv *watch.Interval) error {
	w, _ := s.size()
	var b bytes.Buffer
	if err := report.WriteWatch(&b, iv, w); err != nil {
		return err
	}
	return s.draw(b.String())
}

// draw puts text at the top left, each line cleared to its end, the rest
// of the screen cleared, and cuts it to the window's size. Raw mode turns
// off the newline translation, so lines end in CR LF.
func (s *screen) draw(text string) error {
	width, height := s.size()
	height = max(height, 3)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) > height-1 {
		more := len(lines) - (height - 2)
		lines = append(lines[:height-2], fmt.Sprintf("... %d more lines: enlarge the window", more))
	}
	var b strings.Builder
	b.WriteString("\x1b[H")
	for _, l := range lines {
		if r := []rune(l); len(r) > width {
			l = string(r[:width])
		}
		b.WriteString(l + "\x1b[K\r\n")
	}
	b.WriteString("\x1b[J")
	_, err := io.WriteString(s.out, b.String())
	return err
}

// close shows the cursor again and restores the terminal mode.
func (s *screen) close() {
	if s.closed {
		return
	}
	s.closed = true
	io.WriteString(s.out, "\x1b[?25h")
	if s.state != nil {
		term.Restore(int(s.in.Fd()), s.state)
	}
}
