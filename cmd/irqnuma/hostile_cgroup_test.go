package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// TestHostileCgroups: a --cgroup group whose files are hostile (a
// million PIDs, a CPU list past the CPU-set range, garbage, a partition
// file of 50 MB, a memory.numa_stat garbled, past its bound or naming a
// node no kernel has) gives an answer or one error naming the file, within
// the hostile bounds, in audit, mask, watch and snapshot.
func TestHostileCgroups(t *testing.T) {
	t.Parallel()
	bin := hostileBinary(t)
	const g = "sys/fs/cgroup/pod/"
	tests := []struct {
		name   string
		mutate func(t *testing.T, root string)
		want   string // in audit's stdout or stderr
	}{
		{name: "a million PIDs", mutate: func(t *testing.T, root string) {
			var b strings.Builder
			for i := range 1_000_000 {
				b.WriteString(strconv.Itoa(i+100_000) + "\n")
			}
			put(t, root, g+"cgroup.procs", b.String())
		}, want: `"subject": "--cgroup /pod"`},
		{name: "CPU list past the range", mutate: func(t *testing.T, root string) {
			put(t, root, g+"cpuset.cpus.effective", "0-4294967295\n")
		}, want: g + "cpuset.cpus.effective"},
		{name: "garbage cgroup.procs", mutate: func(t *testing.T, root string) {
			put(t, root, g+"cgroup.procs", "4242\nzz\n")
		}, want: g + "cgroup.procs: line 2"},
		{name: "a 50 MB partition file", mutate: func(t *testing.T, root string) {
			put(t, root, g+"cpuset.cpus.partition", "root invalid ("+strings.Repeat("x", 50<<20)+")\n")
		}, want: g + "cpuset.cpus.partition"},
		{name: "garbage memory.numa_stat", mutate: func(t *testing.T, root string) {
			put(t, root, g+"memory.numa_stat", "anon N0=1 N0=2\nfile N99999999999=1\n\x00\n")
		}, want: g + "memory.numa_stat: line 1: anon: node 0 repeats"},
		{name: "a 50 MB memory.numa_stat", mutate: func(t *testing.T, root string) {
			put(t, root, g+"memory.numa_stat", "anon"+strings.Repeat(" N1=1", 10<<20)+"\nfile N0=1\n")
		}, want: g + "memory.numa_stat"},
		{name: "node past the kernel's in memory.numa_stat", mutate: func(t *testing.T, root string) {
			put(t, root, g+"memory.numa_stat", "anon N2000000=1\nfile N0=1\n")
		}, want: `\"N2000000=1\" is not N\u003cnode\u003e=\u003cbytes\u003e`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := hosttest.Copy(t, "seed")
			writeProc(t, root, 64, testProc{pid: 4242, comm: "iperf3", allowed: "16-19", sockets: iperf3OnEth0})
			put(t, root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
			put(t, root, g+"cgroup.procs", "4242\n")
			put(t, root, g+"cpuset.cpus.effective", "16-19\n")
			put(t, root, g+"cpuset.mems.effective", "1\n")
			put(t, root, g+"cpuset.cpus.partition", "isolated\n")
			tt.mutate(t, root)
			snap := filepath.Join(t.TempDir(), "s.tar.gz")
			for _, args := range [][]string{
				{"--root", root, "audit", "--fail-on", "never", "--cgroup", "/pod", "-o", "json"},
				{"--root", root, "mask", "--cgroup", "/pod"},
				{"--root", root, "watch", "--cgroup", "/pod", "--count", "2", "--interval", "10ms", "-o", "json"},
				{"--root", root, "snapshot", "--cgroup", "/pod", "-o", snap},
			} {
				r := runBin(t, bin, args...)
				checkBounds(t, args, r)
				if strings.Contains(r.stderr, "panic") {
					t.Errorf("%v: %s", args, clipOut(r.stderr))
				}
				if slicesContain(args, "audit") && !strings.Contains(r.stdout+r.stderr, tt.want) {
					t.Errorf("%v: exit %d, the audit does not say %q:\n%s%s", args, r.code, tt.want, clipOut(r.stdout), clipOut(r.stderr))
				}
			}
		})
	}
}
