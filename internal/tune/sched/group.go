package sched

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// TokenEnv is the environment variable RunGroup marks a command with:
// every process the command starts inherits it unless it clears its
// environment, which is how RunGroup finds those that left the command's
// process group.
const TokenEnv = "IRQNUMA_RUN"

// procDir is the live kernel's process table, where RunGroup looks for
// the processes a command left behind. RunGroup runs commands on this
// host, so this is never a --root.
var procDir = "/proc"

// drainWait is how long RunGroup waits, once every process it found is
// killed, for the command's output pipes to reach their end.
var drainWait = time.Second

// RunGroup runs a command as RunContext does (placement, streams, the
// shell's exit code, SIGTERM then SIGKILL after the grace when ctx is
// done) and leaves nothing of it behind. It is for a command run
// unattended (bench), not one a user drives from a terminal (exec),
// since the command runs outside the terminal's foreground group.
//
// The command runs in a process group of its own, and the stop signals
// this process receives (SIGINT, SIGTERM, SIGHUP, SIGQUIT) go to that
// whole group. Once the command itself exits, whatever it started is
// killed (SIGKILL): the rest of its process group, and every process
// whose environment holds the TokenEnv value RunGroup gave the command,
// which catches those that moved to a group or session of their own
// (setsid, a daemon's double fork). RunGroup returns when they are gone
// and the command's output pipes are closed, so a process left holding
// them does not lengthen the run. A process that both left the group and
// cleared its environment (env -i, sudo, a daemon that sanitises it) is
// not found; nor is one started on the command's behalf by another
// process (systemd-run, a D-Bus activation). No cgroup is needed.
//
// It reads /proc/PID/environ of every process, so as root it finds the
// command's processes of any user; unprivileged, only its own user's.
func RunGroup(ctx context.Context, p Placement, args []string, s Streams) (code int, err error) {
	path, err := exec.LookPath(args[0])
	if err != nil {
		if !errors.Is(err, exec.ErrNotFound) {
			return 126, err
		}
		return 127, err
	}
	token, err := newToken()
	if err != nil {
		return 1, err
	}
	child := exec.Command(path, args[1:]...)
	child.Args[0] = args[0]
	child.Env = append(os.Environ(), TokenEnv+"="+token)
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	child.Stdin = s.Stdin
	child.WaitDelay = drainWait // a Stdin that is no file is copied by os/exec
	out := &outputs{writes: map[io.Writer]*os.File{}}
	if child.Stdout, err = out.pipe(s.Stdout); err == nil {
		child.Stderr, err = out.pipe(s.Stderr)
	}
	if err != nil {
		out.closeWrites()
		out.drain(0)
		return 1, fmt.Errorf("start %s: %w", args[0], err)
	}

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)
	startErr := start(child, p)
	out.closeWrites() // the command holds its own copies
	if startErr != nil {
		out.drain(0)
		code := 1
		if errors.Is(startErr, os.ErrPermission) {
			code = 126
		}
		return code, fmt.Errorf("start %s: %w", args[0], startErr)
	}
	pgid := child.Process.Pid
	done := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() { signalGroup(ctx, pgid, sigs, done) })

	// Wait for the command to exit without reaping it: while it is a
	// zombie its PID, the group's id, cannot be reused, so killing the
	// group can hit nothing else.
	var info unix.Siginfo
	for {
		err = unix.Waitid(unix.P_PID, pgid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			break
		}
	}
	close(done)
	watcher.Wait()
	left := killLeft(pgid, token)
	err = child.Wait()
	out.drain(drainWait)

	var ee *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		code = 0
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	default:
		return 1, fmt.Errorf("wait for %s: %w", args[0], err)
	}
	return code, left
}

// signalGroup passes the stop signals on to process group pgid until
// done, and when ctx is done sends it SIGTERM, then SIGKILL after the
// grace.
func signalGroup(ctx context.Context, pgid int, sigs <-chan os.Signal, done <-chan struct{}) {
	grace := killGrace
	stop := ctx.Done()
	var kill <-chan time.Time
	for {
		select {
		case sig := <-sigs:
			_ = syscall.Kill(-pgid, sig.(syscall.Signal))
		case <-stop:
			stop = nil
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			t := time.NewTimer(grace)
			defer t.Stop()
			kill = t.C
		case <-kill:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		case <-done:
			return
		}
	}
}

// outputs carries a command's output that is no file through pipes of
// ours, so its exit is seen when it exits, not when the last holder of
// the pipe closes it, and the copying can be cut short.
type outputs struct {
	copies sync.WaitGroup
	reads  []*os.File
	writes map[io.Writer]*os.File // by the writer they feed
}

// pipe returns what the command writes to for w: w itself when it is a
// file or nil, else the write end of a pipe copied to w (one per w, so
// stdout and stderr that are one writer share it).
func (o *outputs) pipe(w io.Writer) (io.Writer, error) {
	if w == nil {
		return nil, nil
	}
	if _, ok := w.(*os.File); ok {
		return w, nil
	}
	if f, ok := o.writes[w]; ok {
		return f, nil
	}
	r, f, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	o.reads = append(o.reads, r)
	o.writes[w] = f
	o.copies.Go(func() {
		if _, err := io.Copy(w, r); err != nil {
			_, _ = io.Copy(io.Discard, r) // never block the command
		}
	})
	return f, nil
}

// closeWrites closes our copies of the write ends.
func (o *outputs) closeWrites() {
	for _, f := range o.writes {
		f.Close()
	}
}

// drain waits up to wait for every copy to reach the end of its pipe,
// then closes the read ends, which ends the copies still going (a
// holder escaped).
func (o *outputs) drain(wait time.Duration) {
	drained := make(chan struct{})
	go func() { o.copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(wait):
	}
	for _, r := range o.reads {
		r.Close()
	}
	<-drained
}

// killWait bounds how long killLeft keeps finding new processes.
var killWait = 5 * time.Second

// killLeft kills (SIGKILL) the rest of process group pgid and every
// process marked with token, again until none is found: a process may
// start another between a look and the kill. It says how many were
// still there when it gave up.
func killLeft(pgid int, token string) error {
	mark := []byte(TokenEnv + "=" + token + "\x00")
	self := os.Getpid()
	deadline := time.Now().Add(killWait)
	for {
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // ESRCH: none left
		pids := marked(mark, self, pgid)
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d processes the command started are still running after SIGKILL (PIDs %v)", len(pids), pids[:min(len(pids), 10)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// marked lists the live processes other than self and the group leader
// whose environment holds mark, or whose group is pgid; zombies are left
// to whoever reaps them.
func marked(mark []byte, self, pgid int) []int {
	ents, err := os.ReadDir(procDir)
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid == pgid {
			continue
		}
		st, err := os.ReadFile(procDir + "/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		state, group := statFields(st)
		if state == 'Z' || state == 'X' {
			continue
		}
		if group == pgid {
			pids = append(pids, pid)
			continue
		}
		env, err := os.ReadFile(procDir + "/" + e.Name() + "/environ")
		if err == nil && bytes.Contains(env, mark) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// statFields returns the state and the process group of a
// /proc/PID/stat; 0 and -1 when it cannot be read.
func statFields(st []byte) (state byte, pgrp int) {
	i := bytes.LastIndexByte(st, ')')
	if i < 0 {
		return 0, -1
	}
	f := bytes.Fields(st[i+1:])
	if len(f) < 4 || len(f[0]) != 1 {
		return 0, -1
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return f[0][0], -1
	}
	return f[0][0], g
}

// newToken is a value no other run's TokenEnv has.
func newToken() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b), nil
}
