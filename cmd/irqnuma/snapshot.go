package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/host/snapshot"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/render/report"
	"github.com/irqnuma/irqnuma/internal/safetext"
	"github.com/irqnuma/irqnuma/internal/shutdown"
)

func newSnapshotCmd(a *app) *cobra.Command {
	var sel selection
	c := &cobra.Command{
		Use:   "snapshot -o FILE.tar.gz",
		Short: "Capture the files irqnuma reads into a .tar.gz that --root accepts",
		Args:  usageArgs(cobra.NoArgs),
		// -o is the archive here, not a format: no format check.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error { return a.openRoot(cmd) },
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("output") || a.output == "" {
				return cli.Usagef("snapshot: -o FILE.tar.gz is required (- for stdout)")
			}
			if err := sel.check(a); err != nil {
				return err
			}
			res, err := snapshot.Create(a.output, a.stdout, a.fs, snapshot.Options{Processes: sel.processes()})
			if err != nil {
				return err
			}
			report.WriteSnapshotResult(a.stderr, a.output, res)
			return nil
		},
	}
	sel.flags(c, "", "capture")
	return c
}

// openRoot opens --root once for the command (a.fs, closed by a.close),
// after unpackRoot has made it a folder.
func (a *app) openRoot(cmd *cobra.Command) error {
	if err := a.unpackRoot(cmd); err != nil {
		return err
	}
	fsys, err := kfile.Open(a.root)
	if err != nil {
		return fmt.Errorf("root: %w", err)
	}
	a.fs = fsys
	a.closers = append(a.closers, fsys.Close)
	return nil
}

// unpackRoot makes --root usable: a folder must hold proc/ or sys/; a
// snapshot is unpacked into a temporary folder that a.close removes, and
// refused by commands that write to the host (the writes would vanish).
func (a *app) unpackRoot(cmd *cobra.Command) error {
	st, err := os.Stat(a.root)
	if (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) && !textfileRun(cmd) {
		// As a folder without proc/ and sys/ is: a usage error, in one
		// line that says what a root is. Not for audit --textfile, a
		// monitoring job, whose failed read goes into the file
		// (irqnuma_scrape_error 1) for the alert to see.
		return cli.Usagef("root %s: no such folder or snapshot (%s)", a.root, rootIs)
	}
	if err != nil || st.IsDir() {
		return kfile.CheckRoot(a.root) // an unreadable root: the readers say what is wrong
	}
	if !snapshot.IsArchive(a.root) {
		return cli.Usagef("--root %s: neither a folder nor a snapshot .tar.gz", a.root)
	}
	if writesHost(cmd) {
		return cli.Usagef("--root %s: a snapshot is read-only; %s would write to it (use --dry-run where there is one)", a.root, cmd.CommandPath())
	}
	dir, cleanup, err := snapshot.Open(a.ctx, a.root, snapshot.Limits{})
	if err != nil {
		return err
	}
	// Removed when the command ends, and by the signal handler if a stop
	// signal finds the command still running past its grace.
	a.closers = append(a.closers, shutdown.OnExit(cleanup))
	a.root = dir
	return nil
}

// textfileRun reports whether cmd writes a textfile (audit --textfile).
func textfileRun(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("textfile")
	return f != nil && f.Value.String() != ""
}

// rootIs says what --root names, as kfile.CheckRoot's error does.
const rootIs = "a root is a folder holding a host's proc/ and sys/, such as / or an unpacked capture, or a snapshot .tar.gz of one"

// writesHost reports whether the command would write under --root, as
// its annotWrites says: restore always, tune, irq pin and zc prepare
// unless --dry-run.
func writesHost(cmd *cobra.Command) bool {
	switch cmd.Annotations[annotWrites] {
	case writesAlways:
		return true
	case writesUnlessDryRun:
		dry, err := cmd.Flags().GetBool("dry-run")
		return err != nil || !dry
	}
	return false
}

// annotWrites is the annotation of a command that writes to the host:
// writesAlways, or writesUnlessDryRun for one whose --dry-run only reads.
const (
	annotWrites        = "writes"
	writesAlways       = "always"
	writesUnlessDryRun = "unless --dry-run"
)

// close runs the closers, last first, and reports their failures on
// stderr: the command's own result stands.
func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		if err := a.closers[i](); err != nil {
			fmt.Fprintf(a.stderr, "irqnuma: %s\n", safetext.Escape(err.Error()))
		}
	}
	a.closers = nil
}
