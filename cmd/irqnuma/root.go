package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/jsondoc"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/tune"
	"github.com/irqnuma/irqnuma/internal/version"
)

// app is what every command shares: the global flags, the streams and
// what it takes from the process.
type app struct {
	sys
	ctx    context.Context
	root   string   // --root as given, then the unpacked snapshot's folder
	fs     kfile.FS // --root, opened once by openRoot for the command
	output string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// closers run when the command ends (an unpacked --root snapshot).
	closers []func() error
}

// sys is what a command takes from the process rather than from its
// flags. Tests run the CLI with their own (a writer that fails on cue, a
// fixed clock, a non-root user), each on its own app, so CLI tests can run
// in parallel.
type sys struct {
	writer tune.Writer // every write to /proc/irq and sysfs
	// threads moves NAPI kernel threads (sched_setaffinity); nil: the
	// kernel's on the live host, none on a captured root.
	threads tune.ThreadAffinity
	geteuid func() int          // root or not, for writes to the live host
	now     func() time.Time    // state file names and watch samples
	getenv  func(string) string // COLUMNS, for the width of human output
	// gomaxprocs is runtime.GOMAXPROCS when the process runs one
	// command (run), which watch sets to 1 while it runs; nil in tests,
	// whose CLI runs share the test binary's Ps.
	gomaxprocs func(int) int
}

// hostSys is the real process: the kernel's files, its user and its clock.
func hostSys() sys {
	return sys{writer: tune.FileWriter{}, geteuid: os.Geteuid, now: time.Now, getenv: os.Getenv}
}

// commands are the subcommands by name, with their constructors (help
// lists them sorted by name).
var commands = []struct {
	name string
	new  func(*app) *cobra.Command
}{
	{"topology", newTopologyCmd}, {"irq", newIRQCmd}, {"audit", newAuditCmd}, {"map", newMapCmd},
	{"watch", newWatchCmd}, {"mask", newMaskCmd}, {"exec", newExecCmd}, {"snapshot", newSnapshotCmd},
	{"bench", newBenchCmd}, {"__man", newManCmd}, {"flow", newFlowCmd}, {"zc", newZCCmd},
	{"tune", newTuneCmd}, {"restore", newRestoreCmd},
}

// newRoot is the whole command tree.
func newRoot(a *app) *cobra.Command { return newRootFor(a, nil) }

// newRootFor is the command tree args run: the root with only the
// subcommand args name, or with none for a bare --version, or else
// (help, completion, a word that names no command) with all of them.
// Each subcommand's flags, help text and completions cost allocations
// at every start, and a command needs none of its siblings'.
func newRootFor(a *app, args []string) *cobra.Command {
	only, none := commandArg(args)
	root := &cobra.Command{
		Use:           "irqnuma",
		Short:         "Inspect and tune NIC, IRQ and process placement on NUMA hosts",
		Version:       version.Get().String(),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          usageArgs(cobra.NoArgs),
		RunE:          func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case a.output != "table" && a.output != "json":
				return cli.Usagef("--output %q: want table or json", a.output)
			case a.json() && cmd.Annotations["json"] == "none":
				return cli.Usagef("-o json: %s has no JSON output", cmd.CommandPath())
			}
			return a.openRoot(cmd)
		},
	}
	root.PersistentFlags().StringVar(&a.root, "root", "/", "host root folder holding proc/ and sys/, or a snapshot .tar.gz")
	root.PersistentFlags().StringVarP(&a.output, "output", "o", "table", "output format: table or json")
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if merr := movedCommand(cmd, cmd.Flags().Args()); merr != nil {
			return merr
		}
		return cli.FlagError(err)
	})
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	for _, c := range commands {
		if !none && (only == "" || only == c.name) {
			root.AddCommand(c.new(a))
		}
	}
	addHelp(root)
	addCompletion(root, a)
	return root
}

// run is the whole program: it parses args, runs the command and returns
// the exit code. Errors are printed once, to stderr.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := hostSys()
	s.gomaxprocs = runtime.GOMAXPROCS
	return runSys(ctx, s, args, stdin, stdout, stderr)
}

// runSys is run with the given process facts.
func runSys(ctx context.Context, s sys, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	a := &app{sys: s, ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}
	defer func() {
		if p := recover(); p != nil {
			a.close()
			fmt.Fprintf(stderr, "irqnuma: internal error: %.300v (a bug: please report it with the command line and, if you can, a snapshot of the host)\n", p)
			code = cli.ExitInternal
		}
	}()
	root := newRootFor(a, args)
	root.SetArgs(args)
	defer a.close()
	return cli.Code(ctx, root.ExecuteContext(ctx), stderr)
}

// commandArg is the subcommand args run, read past the root's own flags
// (--root and -o take a value): its name when it is one of commands, ""
// when it is not (help, completion, a misspelling, which want every
// command, and __man, which writes every command's page) or when a flag
// the root does not have comes first. none is
// true when args hold no word but --version and the root's flags: a
// bare --version needs no subcommand.
func commandArg(args []string) (name string, none bool) {
	version := false
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--root" || arg == "-o" || arg == "--output":
			i++ // the value
		case strings.HasPrefix(arg, "--root=") || strings.HasPrefix(arg, "--output=") ||
			strings.HasPrefix(arg, "-o") && len(arg) > 2:
		case arg == "--version":
			version = true
		case strings.HasPrefix(arg, "-"):
			return "", false
		default:
			for _, c := range commands {
				if c.name == arg && !strings.HasPrefix(arg, "__") { // __man walks the whole tree
					return arg, false
				}
			}
			return "", false
		}
	}
	return "", version
}

// writeJSON writes v as a document of schema s: indented JSON with a
// final newline, the envelope first and the host's names escaped
// (jsondoc.Write).
func (a *app) writeJSON(s jsondoc.Schema, v any) error { return jsondoc.Write(a.stdout, s, v, true) }

// json reports whether -o json was asked for.
func (a *app) json() bool { return a.output == "json" }

// moved are the commands that left the CLI, and where they went.
var moved = map[string]string{
	"irqnuma serve": "irqnuma-exporter, a binary of its own with the same flags (make build puts it in bin/)",
}

// movedCommand is the usage error saying where the command args[0] of
// cmd went, or nil when it is not one that moved. A moved command's
// flags are not cmd's, so the flag error cmd's parse meets (with args
// what it parsed before) asks it too.
func movedCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if to, ok := moved[cmd.CommandPath()+" "+args[0]]; ok {
		return cli.Usagef("%s %s is now %s", cmd.CommandPath(), args[0], to)
	}
	return nil
}

// namedArgs is usageArgs for a command whose positional arguments have
// names: a count v refuses is said as what the command wants, "irqnuma zc
// check: want IF, the NIC to check (got 0 arguments)", where cobra says
// "accepts 1 arg(s), received 0".
func namedArgs(v cobra.PositionalArgs, want string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return cli.Usagef("%s: want %s (got %d %s)", cmd.CommandPath(), want, len(args), plural(len(args), "argument"))
		}
		return nil
	}
}

// plural is word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// usageArgs makes a validator's errors usage errors; a command with subcommands
// names the nearest (cobra suggests only at the root with no validator).
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil && cmd.HasSubCommands() {
			if err := movedCommand(cmd, args); err != nil {
				return err
			}
			cmd.SuggestionsMinimumDistance = 2 // cobra's own default, set only on its path
			return cli.UnknownCommand(cmd.CommandPath(), args[0], cmd.SuggestionsFor(args[0]))
		} else if err != nil {
			return cli.Usage(err)
		}
		return nil
	}
}
