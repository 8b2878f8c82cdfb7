package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/sched"
)

func init() { register(newExecCmd) }

// forwardedSignals reach the command as they reach irqnuma.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

func newExecCmd(a *app) *cobra.Command {
	var f pickFlags
	var membind bool
	c := &cobra.Command{
		Use:   "exec (--nic NAME | --node N | --cpus LIST) [flags] [--membind] -- COMMAND [ARGS...]",
		Short: "Run a command on the CPUs mask would pick, from its first instruction",
		Long: `exec picks CPUs as mask does and runs COMMAND with its CPU affinity set to
them before it executes (every thread it starts inherits it) and, with
--membind, its memory bound to those CPUs' nodes (MPOL_BIND).

stdin, stdout and stderr are the command's; SIGINT, SIGTERM, SIGHUP and
SIGQUIT sent to irqnuma are passed on to it. The command stays in
irqnuma's process group, so a terminal's Ctrl-C reaches it directly as
well as through irqnuma. irqnuma exits with the
command's status, 128+N when a signal N killed it, 127 when it cannot be
found and 126 when it cannot be run. It works on this host only: --root
must be /.`,
		Example: `  irqnuma exec --nic eth0 --exclude-irq-cpus -- iperf3 -s
  irqnuma exec --nic eth0 --one-per-core --count 4 --membind -- ./bench`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("exec needs a COMMAND to run, after --")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if filepath.Clean(a.root) != "/" {
				return usagef("exec runs the command on this host, so it reads / only, not --root %s", a.root)
			}
			p, err := a.pick(cmd.Flags(), &f)
			if err != nil {
				return err
			}
			place := sched.Placement{CPUs: p.CPUs}
			if membind {
				if !p.NodesKnown {
					return fmt.Errorf("--membind: the NUMA node of CPUs %s is unknown", p.CPUs)
				}
				place.MemNodes = p.Nodes
			}
			return a.execOn(place, p.Describe(), args)
		},
	}
	f.add(c.Flags())
	c.Flags().BoolVar(&membind, "membind", false, "bind the command's memory to the picked CPUs' nodes (MPOL_BIND)")
	// Everything after COMMAND is the command's, flags included.
	c.Flags().SetInterspersed(false)
	return c
}

// execOn runs args with the placement, passing the streams and signals
// through, and returns the command's exit status as an exitCodeError.
func (a *app) execOn(place sched.Placement, where string, args []string) error {
	path, err := exec.LookPath(args[0])
	if err != nil {
		code := 127
		if !errors.Is(err, exec.ErrNotFound) {
			code = 126 // found but not executable
		}
		return exitCodeError{code, err}
	}
	child := exec.Command(path, args[1:]...)
	child.Args[0] = args[0]
	// A stream that is no *os.File is fed by a goroutine os/exec starts;
	// irqnuma's own line goes through the same lock.
	stdout, stderr := a.stdout, a.stderr
	if _, ok := stderr.(*os.File); !ok {
		lw := &lockedWriter{w: stderr}
		if stdout == stderr {
			stdout = lw
		}
		stderr = lw
	}
	child.Stdin, child.Stdout, child.Stderr = a.stdin, stdout, stderr

	// Catch the signals before the child exists, so none sent meanwhile
	// is lost or kills irqnuma; they are passed on once it runs.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)

	if err := sched.Start(child, place); err != nil {
		code := 1
		if errors.Is(err, os.ErrPermission) {
			code = 126
		}
		return exitCodeError{code, fmt.Errorf("start %s: %w", args[0], err)}
	}
	fmt.Fprintf(stderr, "irqnuma: running on %s\n", where)

	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = child.Process.Signal(s) // it may have exited meanwhile
			case <-done:
				return
			}
		}
	}()

	err = child.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return exitCodeError{128 + int(ws.Signal()), nil}
		}
		return exitCodeError{ee.ExitCode(), nil}
	default:
		return fmt.Errorf("wait for %s: %w", args[0], err)
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
