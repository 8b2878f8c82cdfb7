package main

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/screen"
	"github.com/irqnuma/irqnuma/report"
	"github.com/irqnuma/irqnuma/watch"
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
				return cli.Usagef("--interval %s: want a positive duration such as 1s or 200ms", interval)
			}
			if count < 0 {
				return cli.Usagef("--count %d: want 0 (until stopped) or more", count)
			}
			if err := sel.check(); err != nil {
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
	s, err := watch.Open(a.root, sel.NICs, sel.Selection.Selection, a.now)
	if err != nil {
		return err
	}
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
	ctx := a.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	return s.Run(ctx, interval, count, out)
}
