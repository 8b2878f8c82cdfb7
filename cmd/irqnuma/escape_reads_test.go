package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// escapeFiles are files the commands read, each replaced in the tree by a
// link out of it (issue 22): IRQ files, /proc/interrupts and cmdline, the
// CPU and node lists, a CPU's topology and governor, the NIC's node and
// local CPUs.
var escapeFiles = []string{
	"proc/irq/284/smp_affinity",
	"proc/irq/284/smp_affinity_list",
	"proc/irq/284/effective_affinity_list",
	"proc/irq/284/node",
	"proc/irq/284/spurious",
	"proc/irq/284/affinity_hint",
	"proc/irq/285/smp_affinity_list",
	"proc/irq/283/effective_affinity",
	"proc/interrupts",
	"proc/cmdline",
	"sys/devices/system/cpu/online",
	"sys/devices/system/cpu/possible",
	"sys/devices/system/node/online",
	"sys/devices/system/node/node1/distance",
	"sys/devices/system/node/node1/cpulist",
	"sys/devices/system/cpu/cpu17/topology/thread_siblings_list",
	"sys/devices/system/cpu/cpu17/topology/physical_package_id",
	"sys/devices/system/cpu/cpu17/cpufreq/scaling_governor",
	"sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/numa_node",
	"sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/local_cpulist",
}

// escapeDir is a folder replaced by a link out of the tree. A link is
// not an IRQ's folder (the kernel's are folders), so IRQ 290 reads as
// unknown with it, before and after the files are linked out too.
const escapeDir = "proc/irq/290"

// TestReadsStayInTheTree: a capture whose files are links out of it,
// absolute ("/elsewhere/f") or climbing ("../../../elsewhere/f"), is read
// as if mounted at "/" by every command that reads a root: an absolute
// target is taken from the tree's top and ".." stops there. Copies of
// the files wait where those links land inside the tree, so each command
// says exactly what it said before the links were planted, and inotify
// proves the files outside (sentinels saying something else) were never
// opened.
func TestReadsStayInTheTree(t *testing.T) {
	root := hosttest.Copy(t, "seed")
	outside := t.TempDir()
	out := t.TempDir() // the commands' own output files
	cmds := [][]string{
		{"topology"},
		{"irq", "list"},
		{"irq", "list", "--all"},
		{"audit"},
		{"map"},
		{"mask", "--nic", "eth0"},
		{"irq", "pin", "eth0", "--dry-run"},
		{"snapshot", "-o", "SNAP"},
		{"watch", "--count", "1", "--interval", "10ms"},
		{"bench", "--dry-run", "--", "iperf3", "-J"},
		{"audit", "--textfile", "PROM"},
	}
	// exact: the output is the same however often the command runs.
	exact := func(c []string) bool {
		return c[0] != "snapshot" && c[0] != "watch" && !slices.Contains(c, "--textfile")
	}
	run := func(c []string, tag string) (string, int) {
		args := []string{"--root", root}
		for _, a := range c {
			switch a {
			case "SNAP":
				a = filepath.Join(out, tag+".tar.gz")
			case "PROM":
				a = filepath.Join(out, tag+".prom")
			}
			args = append(args, a)
		}
		stdout, stderr, code := runCLI(t, args...)
		return stdout + stderr, code
	}
	type result struct {
		out  string
		code int
	}
	dirSentinel := filepath.Join(outside, "irq290")
	plantEscape(t, root, escapeDir, dirSentinel, false)
	openedDir := hosttest.WatchOpens(t, dirSentinel)
	before := make([]result, len(cmds))
	for i, c := range cmds {
		before[i].out, before[i].code = run(c, "before")
		if before[i].code != 0 && before[i].code != 3 { // 3: audit findings
			t.Fatalf("%s on the seed tree: exit %d\n%s", strings.Join(c, " "), before[i].code, before[i].out)
		}
		if o := openedDir(); len(o) != 0 {
			t.Errorf("%s opened %v, outside the root", strings.Join(c, " "), o)
		}
	}

	sentinels := []string{dirSentinel}
	for i, rel := range escapeFiles {
		sentinel := filepath.Join(outside, strings.ReplaceAll(rel, "/", "_"))
		plantEscape(t, root, rel, sentinel, i%2 == 1)
		sentinels = append(sentinels, sentinel)
	}
	opened := hosttest.WatchOpens(t, sentinels...)

	for i, c := range cmds {
		got, code := run(c, "after")
		name := strings.Join(c, " ")
		if code != before[i].code {
			t.Errorf("%s with links out of the tree: exit %d, want %d\n%s", name, code, before[i].code, got)
		}
		if exact(c) && got != before[i].out {
			t.Errorf("%s with links out of the tree says something else:\n%s\nwant\n%s", name, got, before[i].out)
		}
		if o := opened(); len(o) != 0 {
			t.Errorf("%s opened %v, outside the root", name, o)
		}
	}
	// The watches see an open: the test can fail.
	for _, p := range []string{filepath.Join(dirSentinel, "smp_affinity_list"), sentinels[1]} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if o := opened(); len(o) != 2 {
		t.Fatalf("inotify saw opens of %v, want the 2 sentinels opened on purpose", o)
	}
}

// plantEscape moves root/rel (a file or a folder) out of the tree to
// sentinel, fills the sentinel with something else, and links root/rel
// to it: by its absolute path, or with climb by a relative path that
// climbs out of the root. The original goes where the tree resolves that
// link: root + the absolute target, or, as ".." stops at the root, the
// relative target with the climbs past the root dropped.
func plantEscape(t *testing.T, root, rel, sentinel string, climb bool) {
	t.Helper()
	p := filepath.Join(root, rel)
	target := sentinel
	inside := filepath.Join(root, sentinel)
	if climb {
		r, err := filepath.Rel(filepath.Dir(p), sentinel)
		if err != nil {
			t.Fatal(err)
		}
		target = r
		inside = filepath.Join(root, inRoot(filepath.Dir(rel), r))
	}
	if err := os.MkdirAll(filepath.Dir(inside), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p, inside); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(inside)
	if err != nil {
		t.Fatal(err)
	}
	if st.IsDir() {
		if err := os.MkdirAll(sentinel, 0o755); err != nil {
			t.Fatal(err)
		}
		sentinel = filepath.Join(sentinel, "smp_affinity_list")
	}
	if err := os.WriteFile(sentinel, []byte("outside the root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(target, "/") && !strings.HasPrefix(target, "../") {
		t.Fatalf("link %s -> %s does not leave the tree", p, target)
	}
}

// inRoot returns where the relative link target, in the folder dir of a
// tree, lands when ".." stops at the tree's top.
func inRoot(dir, target string) string {
	var parts []string
	for _, e := range strings.Split(dir, "/") {
		if e != "" && e != "." {
			parts = append(parts, e)
		}
	}
	for _, e := range strings.Split(target, "/") {
		switch e {
		case "", ".":
		case "..":
			if len(parts) > 0 {
				parts = parts[:len(parts)-1]
			}
		default:
			parts = append(parts, e)
		}
	}
	return strings.Join(parts, "/")
}
