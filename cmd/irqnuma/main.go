// Command irqnuma inspects and tunes where a Linux host's NICs, their
// queue interrupts and benchmark processes sit on its NUMA topology.
package main

import (
	"context"
	"os"
)

func main() {
	ctx, stop := notifyContext(context.Background())
	code := runUntilStopped(ctx, func() int {
		return run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	})
	stop()
	os.Exit(code)
}
