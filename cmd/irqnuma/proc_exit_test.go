package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestZombiePIDShownExited: a --pid that has exited and is not reaped
// yet (a zombie) is said to have exited by map and watch, never drawn as
// a thread that runs.
func TestZombiePIDShownExited(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	pid := strconv.Itoa(cmd.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i:]), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("PID %s is not a zombie after 10 s: %s", pid, b)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"map", "--pid", pid},
		{"-o", "json", "map", "--pid", pid},
		{"watch", "--pid", pid, "--count", "1", "--interval", "50ms"},
	} {
		stdout, stderr, code := runCLIContext(t, ctx, hostSys(), args...)
		want := "--pid " + pid + ": no such process: it has exited (a zombie until its parent reaps it)"
		if code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("%q: exit %d, stderr %q; want it to say %q", args, code, stderr, want)
		}
		if strings.Contains(stdout, pid) {
			t.Errorf("%q draws the zombie:\n%s", args, stdout)
		}
	}
}

// TestAuditCommVanished: audit --comm of a name whose processes come
// and go all the time (each exits at once) never fails: a process that
// exits between the listing of /proc and the reading of its files is
// left out (it failed 4 runs of 120).
func TestAuditCommVanished(t *testing.T) {
	t.Parallel()
	tr, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("vanish%06d", rand.IntN(1_000_000)) // its comm
	bin := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					_ = exec.Command(bin).Run()
				}
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	runs := 0
	for deadline := time.Now().Add(4 * time.Second); time.Now().Before(deadline); runs++ {
		_, stderr, code := runCLI(t, "audit", "--comm", name, "--fail-on", "never")
		if code != 0 {
			t.Fatalf("audit --comm %s while its processes come and go, run %d: exit %d, %s", name, runs+1, code, stderr)
		}
	}
	t.Logf("%d runs", runs)
}
