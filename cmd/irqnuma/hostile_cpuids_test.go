package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/cpuset"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// cpuIDsRSS is the memory bound of the CPU-id cases, tighter than
// caseRSS: a set naming a large CPU id, or a tree claiming a million
// CPUs, costs what the host has, not what its largest id is.
const cpuIDsRSS = 100 << 20

// TestHostileCPUIDs: online and possible to the top of the CPU-set range.
// A Linux kernel has at most 8192 CPUs (NR_CPUS), so the tree is refused
// with an error naming the file, within the bounds, instead of building
// a million CPUs with a sibling set each.
func TestHostileCPUIDs(t *testing.T) {
	t.Parallel()
	bin := hostileBinary(t)
	top := fmt.Sprintf("0-%d\n", cpuset.MaxID)
	tests := []struct {
		name   string
		mutate func(t *testing.T, root string)
		want   string // in the error
	}{
		{"online and possible to the top", func(t *testing.T, root string) {
			put(t, root, "sys/devices/system/cpu/online", top)
			put(t, root, "sys/devices/system/cpu/possible", top)
		}, "cpu/online"},
		{"possible to the top", func(t *testing.T, root string) {
			put(t, root, "sys/devices/system/cpu/possible", top)
		}, "cpu/possible"},
		{"online to the top, no possible", func(t *testing.T, root string) {
			put(t, root, "sys/devices/system/cpu/online", top)
			if err := os.Remove(filepath.Join(root, "sys/devices/system/cpu/possible")); err != nil {
				t.Fatal(err)
			}
		}, "cpu/online"},
		{"one CPU past NR_CPUS online", func(t *testing.T, root string) {
			put(t, root, "sys/devices/system/cpu/online", "0-63,8192\n")
			put(t, root, "sys/devices/system/cpu/possible", "0-63,8192\n")
		}, "8192"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := hosttest.Copy(t, "seed")
			tt.mutate(t, root)
			for _, args := range [][]string{
				{"--root", root, "topology"},
				{"--root", root, "irq", "list", "--all"},
				{"--root", root, "audit", "--fail-on", "never"},
				{"--root", root, "map"},
			} {
				r := runBin(t, bin, args...)
				checkBounds(t, args, r)
				if r.maxRSS > cpuIDsRSS {
					t.Errorf("%v used %d MB, more than %d", args, r.maxRSS>>20, cpuIDsRSS>>20)
				}
				if r.code == 0 || !strings.Contains(r.stderr, tt.want) || !strings.Contains(r.stderr, "NR_CPUS") {
					t.Errorf("%v: exit %d, %q; want an error naming %s and NR_CPUS", args, r.code, r.stderr, tt.want)
				}
			}
		})
	}
}

// TestHostileCPUIDsSnapshot: the snapshot of a tree whose online and
// possible say 0-1048575 (a few dozen KB) is refused as the tree is.
func TestHostileCPUIDsSnapshot(t *testing.T) {
	t.Parallel()
	bin := hostileBinary(t)
	root := hosttest.Copy(t, "seed")
	top := fmt.Sprintf("0-%d\n", cpuset.MaxID)
	put(t, root, "sys/devices/system/cpu/online", top)
	put(t, root, "sys/devices/system/cpu/possible", top)
	snap := filepath.Join(t.TempDir(), "s.tar.gz")
	if r := runBin(t, bin, "--root", root, "snapshot", "-o", snap); r.code != 0 {
		t.Fatalf("snapshot: exit %d: %s", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"--root", snap, "topology"},
		{"--root", snap, "audit", "--fail-on", "never"},
	} {
		r := runBin(t, bin, args...)
		checkBounds(t, args, r)
		if r.maxRSS > cpuIDsRSS {
			t.Errorf("%v used %d MB, more than %d", args, r.maxRSS>>20, cpuIDsRSS>>20)
		}
		if r.code == 0 || !strings.Contains(r.stderr, "cpu/online") || !strings.Contains(r.stderr, "NR_CPUS") {
			t.Errorf("%v: exit %d, %q; want an error naming cpu/online and NR_CPUS", args, r.code, r.stderr)
		}
	}
}

// TestHostileSiblings: 8192 CPUs online, and cpu0 names every even one
// its thread sibling: a set of 4096 runs, kept once for all the siblings,
// not once for each.
func TestHostileSiblings(t *testing.T) {
	t.Parallel()
	bin := hostileBinary(t)
	root := hosttest.Copy(t, "seed")
	put(t, root, "sys/devices/system/cpu/online", "0-8191\n")
	put(t, root, "sys/devices/system/cpu/possible", "0-8191\n")
	var even strings.Builder
	for id := 0; id < 8192; id += 2 {
		if id > 0 {
			even.WriteByte(',')
		}
		fmt.Fprint(&even, id)
	}
	put(t, root, "sys/devices/system/cpu/cpu0/topology/thread_siblings_list", even.String()+"\n")
	for _, args := range [][]string{
		{"--root", root, "topology"},
		{"--root", root, "audit", "--fail-on", "never"},
	} {
		r := runBin(t, bin, args...)
		checkBounds(t, args, r)
		t.Logf("%s: exit %d, %v of CPU, %d MB", args[2], r.code, r.cpu, r.maxRSS>>20)
		if r.maxRSS > cpuIDsRSS {
			t.Errorf("%v used %d MB, more than %d", args, r.maxRSS>>20, cpuIDsRSS>>20)
		}
	}
}

// TestHostileIRQAffinityIDs: 5,000 IRQs whose affinity names CPU 1048575
// (alone, and with CPU 0, so a set spans the whole range). Each IRQ's
// sets cost a few bytes, not a bitmap up to the largest id.
func TestHostileIRQAffinityIDs(t *testing.T) {
	t.Parallel()
	bin := hostileBinary(t)
	for _, list := range []string{fmt.Sprint(cpuset.MaxID), fmt.Sprintf("0,%d", cpuset.MaxID)} {
		t.Run(list, func(t *testing.T) {
			t.Parallel()
			// The audit reads the NICs' IRQs: 40 NICs of 124 queues.
			spec := hosttest.SyntheticSpec{CPUs: 64, Nodes: 2, SMT: true, NICs: 40, QueuesPerNIC: 124}
			root := hosttest.Synthetic(t, spec)
			ents, err := os.ReadDir(filepath.Join(root, "proc/irq"))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, e := range ents {
				if !e.IsDir() {
					continue
				}
				for _, f := range []string{"smp_affinity_list", "effective_affinity_list"} {
					rel := filepath.Join("proc/irq", e.Name(), f)
					if _, err := os.Stat(filepath.Join(root, rel)); err == nil {
						put(t, root, rel, list+"\n")
					}
				}
				n++
			}
			if n < 5000 {
				t.Fatalf("synthetic host has %d IRQ folders, want at least 5000", n)
			}
			args := []string{"--root", root, "audit", "--fail-on", "never"}
			r := runBin(t, bin, args...)
			checkBounds(t, args, r)
			t.Logf("audit of %d IRQs: %v of CPU, %d MB", n, r.cpu, r.maxRSS>>20)
			if r.maxRSS > cpuIDsRSS {
				t.Errorf("%v used %d MB, more than %d", args, r.maxRSS>>20, cpuIDsRSS>>20)
			}
		})
	}
}

// TestHostileLongArguments: a 114 KB argument is quoted cut in the one
// line of error, saying how many bytes were left out, never echoed whole.
func TestHostileLongArguments(t *testing.T) {
	t.Parallel()
	bin := hostileBinary(t)
	root := hosttest.Root("seed")
	ones := strings.Repeat("1", 114000)
	var even strings.Builder
	for id := 0; even.Len() < 114000; id += 2 {
		fmt.Fprintf(&even, "%d,", id)
	}
	for _, args := range [][]string{
		{"--root", root, "mask", "--cpus", ones},
		{"--root", root, "mask", "--cpus", even.String() + "x"},
		{"--root", root, "irq", "pin", "eth0", "--dry-run", "--cpus", ones},
		{"--root", root, "irq", "pin", "eth0", "--dry-run", "--exclude", ones},
		{"--root", root, "irq", "pin", strings.Repeat("x", 114000), "--dry-run"},
		{"--root", root, "watch", "--count", ones},
	} {
		r := runBin(t, bin, args...)
		what := strings.Join(args[2:4], " ")
		if r.code == 0 || strings.Count(r.stderr, "\n") != 1 || len(r.stderr) > 400 || !strings.Contains(r.stderr, "more bytes)") {
			t.Errorf("%s <114 KB>: exit %d, %d bytes on stderr: %.500q; want one line under 400 bytes saying what it left out",
				what, r.code, len(r.stderr), r.stderr)
		}
	}
}
