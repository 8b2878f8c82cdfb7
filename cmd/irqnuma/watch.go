package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/render/report"
	"github.com/irqnuma/irqnuma/internal/run/watch"
	"github.com/irqnuma/irqnuma/internal/screen"
)

func newWatchCmd(a *app) *cobra.Command {
	var (
		sel      selection
		interval time.Duration
		count    int
	)
	c := &cobra.Command{
		Use:   "watch",
		Short: "Show live which CPUs take the NICs' interrupts and softirq load, and whether that is the bottleneck",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if interval <= 0 {
				return cli.Usagef("--interval %s: want a positive duration such as 1s or 200ms", interval)
			}
			if count < 0 {
				return cli.Usagef("--count %d: want 0 (until stopped) or more", count)
			}
			if err := sel.check(a); err != nil {
				return err
			}
			return runWatch(a, sel, interval, count)
		},
	}
	sel.flags(c, "watch only this NIC (repeatable); default every NIC", "watch")
	c.Flags().DurationVar(&interval, "interval", time.Second, "time between samples")
	c.Flags().IntVar(&count, "count", 0, "stop after this many intervals; 0 runs until stopped")
	return c
}

func runWatch(a *app, sel selection, interval time.Duration, count int) error {
	if a.gomaxprocs != nil {
		// One P: the loop is one goroutine woken once an interval, and
		// with a P more each wake-up also woke threads to look for work,
		// about half of what an interval cost at one a second
		// (BenchmarkWatchCPU). Set, it also stops the runtime's
		// once-a-second check of the CPU limit.
		defer a.gomaxprocs(a.gomaxprocs(1))
	}
	s, err := watch.Open(a.fs, sel.NICs, sel.processes(), a.now, a.resolvePods)
	if err != nil {
		return err
	}
	defer s.Close()
	var out watch.Frames = &report.WatchBlocks{W: a.stdout}
	if a.json() {
		out = report.NewWatchJSON(a.stdout)
	} else if f, ok := a.stdout.(*os.File); ok && screen.IsTerminal(f) {
		scr, err := screen.Open(f, a.stdin)
		if err != nil {
			return err
		}
		defer scr.Close()
		out = report.WatchScreen{S: scr}
	}
	return s.Run(a.ctx, interval, count, out)
}
