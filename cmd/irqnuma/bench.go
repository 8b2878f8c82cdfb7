package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/atomicfile"
	"github.com/irqnuma/irqnuma/internal/render/report"
	"github.com/irqnuma/irqnuma/internal/run/bench"
	"github.com/irqnuma/irqnuma/internal/shutdown"
)

func newBenchCmd(a *app) *cobra.Command {
	var o bench.Options
	var svg string
	c := &cobra.Command{Use: "bench [--nic NIC] [--placements LIST] [--repeat N] [flags] -- COMMAND [ARGS...]", Args: cobra.ArbitraryArgs,
		Short: "Run a benchmark in each placement of the NIC's IRQs, itself and its memory",
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := o.Request(a.fs, args)
			if err == nil && !o.DryRun {
				err = needRoot(a, "bench", "; --dry-run shows the matrix without root")
			}
			if err != nil {
				return err
			}
			req.Writer, req.Now, req.Stderr, req.Observer = a.writer, a.now, a.stderr, &report.BenchProgress{W: a.stderr}
			defer shutdown.Critical()() // the restore runs to its end
			res, err := bench.Run(a.ctx, req)
			if res == nil {
				return err
			}
			doc := report.NewBenchDoc(res)
			if svg != "" {
				err = errors.Join(err, atomicfile.Write(svg, 0o644, func(w io.Writer) error { return report.WriteBenchSVG(w, doc) }))
			}
			return errors.Join(err, report.WriteBenchAs(a.stdout, doc, a.json()))
		},
	}
	fs := c.Flags()
	fs.StringVar(&o.NIC, "nic", "", "the NIC whose queue IRQs are placed (default: the only one with queue IRQs)")
	fs.StringVar(&o.Placements, "placements", "default", "placements to run, comma-separated: names below, default, all")
	fs.IntVar(&o.Repeat, "repeat", 3, "runs of each placement (median, min and max are shown)")
	fs.StringVar(&o.Flow, "flow", "", "the flow of the flow-* placements, \"udp|tcp SRC[:PORT] DST[:PORT]\" as irqnuma flow takes it (SRC the peer)")
	fs.BoolVar(&o.Observe, "observe", false, "find the flow of the flow-* placements during a first, unpinned run of the command: the rx queue whose counter rose clearly")
	fs.IntVar(&o.RemoteNode, "remote-node", -1, "the node of the remote placements; -1: the farthest from the NIC's")
	fs.StringVar(&o.Regexp, "regexp", "", "the result is the last match in stdout, line by line: its group named value (and unit), or first group")
	fs.StringVar(&o.JSONPath, "json-path", "", "the result is the number at this path of the JSON stdout (a.b[0].c)")
	fs.StringVar(&svg, "svg", "", "also draw the results as an SVG bar chart into this file")
	fs.BoolVar(&o.DryRun, "dry-run", false, "show the audit and the matrix; change and run nothing")
	fs.BoolVar(&o.KeepGoing, "keep-going", false, "carry on past a failed run (the host is restored either way)")
	fs.DurationVar(&o.Timeout, "timeout", bench.DefaultTimeout, "stop a run still going after this long (SIGTERM, SIGKILL 5 s later); it fails; 0: none")
	fs.BoolVar(&o.AllowIrqbalance, "allow-irqbalance", false, "run although irqbalance runs (it may move the IRQs mid-run)")
	fs.SetInterspersed(false) // everything after COMMAND is the command's
	return c
}
