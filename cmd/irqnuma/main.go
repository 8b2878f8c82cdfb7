// Command irqnuma inspects and tunes where a Linux host's NICs, their
// queue interrupts and benchmark processes sit on its NUMA topology.
package main

import (
	"context"
	"os"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/shutdown"
	"github.com/irqnuma/irqnuma/internal/tune/sched"
)

func main() {
	sched.Trampoline() // exec --join's: returns unless this process is one
	ctx, stop := shutdown.NotifyContext(context.Background())
	code := shutdown.Run(ctx, cli.ExitError, func() int {
		return run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	})
	stop()
	os.Exit(code)
}
