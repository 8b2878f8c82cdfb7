package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func fcntlSetPipeSize(f *os.File, size int) (int, error) {
	return unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, size)
}

// startGated starts irqnuma with stderr on w; stdout is collected.
func startGated(w *os.File, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command("/bin/irqnuma", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, w
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	return cmd, &out
}

// waitExit waits for cmd and returns its exit code (-1: no exit code).
func waitExit(cmd *exec.Cmd) int {
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// waitBlockedOnStderr waits until a thread of pid sits in write(2) on fd
// 2 (/proc/PID/task/TID/syscall: "1 0x2 ...").
func waitBlockedOnStderr(pid int) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		tasks, _ := filepath.Glob("/proc/" + itoa(pid) + "/task/*/syscall")
		for _, t := range tasks {
			f := strings.Fields(readFile(t))
			if len(f) > 1 && f[0] == "1" && f[1] == "0x2" {
				return true
			}
		}
	}
	return false
}

func readAllAsync(r io.Reader) <-chan string {
	c := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		c <- string(b)
	}()
	return c
}
