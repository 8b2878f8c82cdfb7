package sched

import (
	"bytes"
	"context"
	"errors"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// allowed returns the CPUs this test process may use.
func allowed(t *testing.T) cpuset.Set {
	t.Helper()
	s, err := Affinity(0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t *testing.T, p Placement, name string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := start(cmd, p); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out.String()
}

func TestStartSetsAffinityBeforeExec(t *testing.T) {
	all := allowed(t)
	tests := []struct {
		name string
		give cpuset.Set
	}{
		{"lowest CPU", all.First(1)},
		{"highest CPU", cpuset.New(func() int { m, _ := all.Max(); return m }())},
		{"all", all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := run(t, Placement{CPUs: tt.give}, "cat", "/proc/self/status")
			got, err := cpuset.ParseList(hosttest.StatusField(t, out, "Cpus_allowed_list"))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tt.give) {
				t.Errorf("child Cpus_allowed_list = %s, want %s", got, tt.give)
			}
		})
	}
}

// TestStartLeavesCallerAlone checks that once Start returns no thread of
// this process has the child's CPU mask or memory policy.
func TestStartLeavesCallerAlone(t *testing.T) {
	all := allowed(t)
	if all.Len() < 2 {
		t.Skip("needs two allowed CPUs to tell a narrowed mask apart")
	}
	one := all.First(1)
	var mem cpuset.Set
	if _, err := os.Stat("/proc/self/numa_maps"); err == nil {
		mem = cpuset.New(0)
	}
	for range 20 {
		run(t, Placement{CPUs: one, MemNodes: mem}, "true")
		if narrowed := threadsWith(t, one); len(narrowed) > 0 {
			t.Fatalf("threads %v (pid %d) kept Cpus_allowed_list %s", narrowed, os.Getpid(), one)
		}
		if !mem.IsEmpty() {
			if bound := threadsBound(t); len(bound) > 0 {
				t.Fatalf("threads %v (pid %d) kept a bind memory policy", bound, os.Getpid())
			}
		}
	}
}

// threadsBound returns the threads whose numa_maps show a bind policy.
func threadsBound(t *testing.T) []string {
	t.Helper()
	return threadsWhere(t, "numa_maps", func(b []byte) bool {
		return bytes.Contains(b, []byte(" bind:"))
	})
}

// threadsWith returns the threads whose Cpus_allowed_list is cpus.
func threadsWith(t *testing.T, cpus cpuset.Set) []string {
	t.Helper()
	return threadsWhere(t, "status", func(b []byte) bool {
		got, err := cpuset.ParseList(hosttest.StatusField(t, string(b), "Cpus_allowed_list"))
		if err != nil {
			t.Fatal(err)
		}
		return got.Equal(cpus)
	})
}

// threadsWhere returns the ids of this process's threads whose file
// /proc/self/task/ID/name satisfies match.
func threadsWhere(t *testing.T, name string, match func([]byte) bool) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/self/task/*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/" + name)
		if err != nil {
			continue // the thread ended meanwhile
		}
		if match(b) {
			out = append(out, filepath.Base(d))
		}
	}
	return out
}

// TestStartBindsMemory reads the child's own numa_maps: every mapping of a
// process whose task policy is MPOL_BIND shows "bind:<nodes>".
// (Mems_allowed_list is the cpuset's, which set_mempolicy does not change.)
func TestStartBindsMemory(t *testing.T) {
	if _, err := os.Stat("/proc/self/numa_maps"); err != nil {
		t.Skipf("no numa_maps (kernel without CONFIG_NUMA?): %v", err)
	}
	b, err := os.ReadFile("/sys/devices/system/node/has_memory")
	if err != nil {
		t.Skipf("no node list: %v", err)
	}
	nodes, err := cpuset.ParseList(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	node := nodes.First(1)
	out := run(t, Placement{CPUs: allowed(t), MemNodes: node}, "cat", "/proc/self/numa_maps")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := "bind:" + node.List()
	for _, l := range lines {
		if f := strings.Fields(l); len(f) < 2 || f[1] != want {
			t.Errorf("numa_maps line %q: want policy %s", l, want)
		}
	}
	// Without MemNodes the policy is left alone.
	out = run(t, Placement{CPUs: allowed(t)}, "cat", "/proc/self/numa_maps")
	if strings.Contains(out, "bind:") {
		t.Errorf("numa_maps without MemNodes shows a bind policy:\n%s", out)
	}
}

func TestStartErrors(t *testing.T) {
	all := allowed(t)
	m, _ := all.Max()
	tests := []struct {
		name string
		give Placement
	}{
		{"empty CPU set", Placement{}},
		{"CPU not allowed", Placement{CPUs: cpuset.New(m + 1)}},
		{"node that does not exist", Placement{CPUs: all, MemNodes: cpuset.New(200)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("true")
			err := start(cmd, tt.give)
			if err == nil {
				cmd.Wait()
				t.Fatalf("start(%+v) = nil, want an error", tt.give)
			}
			if tt.name == "CPU not allowed" && !errors.Is(err, ErrNotAllowed) {
				t.Errorf("start(CPU %d) = %v, want ErrNotAllowed", m+1, err)
			}
			if cmd.Process != nil {
				t.Errorf("start(%+v) failed but started the command", tt.give)
			}
		})
	}
}

func TestNodeMask(t *testing.T) {
	if bits.UintSize != 64 {
		t.Skip("cases assume 64-bit unsigned long")
	}
	tests := []struct {
		give        cpuset.Set
		wantWords   int
		wantMaxnode uintptr
	}{
		{cpuset.New(0), 1, 65},
		{cpuset.New(7), 1, 65},
		{cpuset.New(1, 63), 1, 65},
		{cpuset.New(64), 2, 129},
	}
	for _, tt := range tests {
		mask, maxnode := nodeMask(tt.give)
		if len(mask) != tt.wantWords || maxnode != tt.wantMaxnode {
			t.Errorf("nodeMask(%s) = %d words, maxnode %d; want %d, %d", tt.give, len(mask), maxnode, tt.wantWords, tt.wantMaxnode)
		}
		for id := range tt.give.All() {
			if mask[id/64]&(1<<uint(id%64)) == 0 {
				t.Errorf("nodeMask(%s): bit %d not set", tt.give, id)
			}
		}
	}
}

func TestDynamicSetWide(t *testing.T) {
	s := cpuset.New(0, 1500, 4095)
	d := dynamicSet(s, 0)
	if d.Count() != 3 || !d.IsSet(1500) || !d.IsSet(4095) || d.IsSet(1) {
		t.Errorf("dynamicSet(%s) = %d CPUs, want exactly 0,1500,4095", s, d.Count())
	}
}

// TestRunContextStops: a command still running when ctx is done gets
// SIGTERM, and SIGKILL once it has ignored that for the grace.
func TestRunContextStops(t *testing.T) {
	old := killGrace
	killGrace = 300 * time.Millisecond
	defer func() { killGrace = old }()
	tests := []struct {
		name   string
		script string
		want   int
	}{
		{"exits on SIGTERM", "echo ready; exec sleep 30", 128 + 15},
		{"ignores SIGTERM", `trap "" TERM; echo ready; exec sleep 30`, 128 + 9},
		{"leaves a process holding its output", "sleep 2 & echo ready; exec sleep 30", 128 + 15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Cancel once the script says it is ready: a fixed wait
			// could cancel before the trap was set, and the shell would
			// die of the SIGTERM it was to ignore.
			out := &readyWriter{ready: make(chan struct{})}
			go func() {
				<-out.ready
				cancel()
			}()
			t0 := time.Now()
			code, err := runContext(ctx, Placement{CPUs: allowed(t)}, []string{"sh", "-c", tt.script},
				Streams{Stdout: out, Stderr: out}, nil)
			if err != nil || code != tt.want {
				t.Errorf("RunContext = %d, %v; want %d (output %q)", code, err, tt.want, out.String())
			}
			if took := time.Since(t0); took > 3*time.Second {
				t.Errorf("took %v to stop, want well under the command's 30 s", took)
			}
		})
	}
}

// readyWriter collects a command's output and closes ready at its first
// line "ready".
type readyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	once  sync.Once
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), "ready\n") {
		w.once.Do(func() { close(w.ready) })
	}
	return len(p), nil
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
