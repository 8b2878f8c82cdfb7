package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/host/snapshot"
	"github.com/irqnuma/irqnuma/internal/host/topology"
	"github.com/irqnuma/irqnuma/internal/kfile"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// TestSnapshotHoldsWhatReadersRead is what keeps snapshot/capture.go in
// step with the readers: on every committed host tree and on a real
// capture, each given a watched iperf3 with sockets and a running
// irqbalance, every command that reads runs with kfile.Trace on, and
// every path it touched (read, listed, stat'ed, link read, resolved) is
// then asked of the tree and of its snapshot, which must answer alike:
// a file there is there with the same bytes and a file tried and absent
// is absent, a folder is there and lists no name the tree's lacks, a
// link has the same target, a stat the same type and mode. Then each
// command's output on the snapshot is its output on the tree (what a
// reader makes of a listing's names shows there).
// A reader that starts reading a file the capture leaves out fails here,
// naming the file.
func TestSnapshotHoldsWhatReadersRead(t *testing.T) {
	t.Parallel()
	trees := map[string]func(t *testing.T) string{}
	for _, name := range hosttest.Names() {
		trees[name] = func(t *testing.T) string { return hosttest.Copy(t, name) }
	}
	trees["realhost-dell-2numa"] = func(t *testing.T) string {
		return realhosts.Unpack(t, realhosts.MustLookup(t, "dell-2numa"))
	}
	for name, mk := range trees {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := mk(t)
			withProcesses(t, root)
			cmds := readingCommands(t, root)
			seen := traceCommands(t, root, cmds)
			file := snapshotOf(t, root, "--pid", "4242", "--cgroup", traceCgroup, "--pod", tracePod)
			dir, cleanup, err := snapshot.Open(context.Background(), file, snapshot.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			compareAccesses(t, root, dir, seen)
			for _, c := range cmds {
				want := runOn(t, root, c)
				got := runOn(t, file, c)
				// An error names a file under the root: the tree's or
				// the snapshot's unpacked folder.
				want.Stderr = strings.ReplaceAll(want.Stderr, root, "ROOT")
				got.Stderr = unpackedRoot.ReplaceAllString(got.Stderr, "ROOT")
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s differs (-tree +snapshot):\n%s", strings.Join(c, " "), diff)
				}
			}
		})
	}
}

// unpackedRoot is the folder a --root snapshot is unpacked into.
var unpackedRoot = regexp.MustCompile(`/\S*/irqnuma-snapshot-\d+-\d+`)

// scrapeDuration is the textfile's measure of its own read.
var scrapeDuration = regexp.MustCompile(`(?m)^(irqnuma_scrape_duration_seconds )\S+$`)

// withProcesses gives the tree at root a watched iperf3 (pid 4242) with
// sockets through the tree's first NIC, and a running irqbalance with
// a command line, an environment and an environment file: test input,
// as the trees hold no process.
func withProcesses(t *testing.T, root string) {
	t.Helper()
	// The width of Cpus_allowed: nr_cpu_ids, from the CPU folders.
	cpus, err := filepath.Glob(filepath.Join(root, "sys/devices/system/cpu/cpu[0-9]*"))
	if err != nil || len(cpus) == 0 {
		t.Fatalf("no CPU folders in %s: %v", root, err)
	}
	var ids []int
	for _, c := range cpus {
		var id int
		if _, err := fmt.Sscanf(filepath.Base(c), "cpu%d", &id); err == nil {
			ids = append(ids, id)
		}
	}
	nbits := (slices.Max(ids)/32 + 1) * 32
	iface := "eth0" // none of the tree's, when it has no NIC
	if nics := nicNames(t, root); len(nics) > 0 {
		iface = nics[0]
	}
	writeProc(t, root, nbits, testProc{pid: 4242, comm: "iperf3", allowed: "0", sockets: iperf3OnEth0,
		numaMaps: "7f0000000000 default anon=3000 dirty=3000 N0=3000 kernelpagesize_kB=4\n"})
	hosttest.WriteRoutes(t, filepath.Join(root, "proc/4242/net"), []hosttest.Route{
		{Iface: iface, Dst: "0.0.0.0/0", Gateway: "192.0.2.1", Metric: 100},
		{Iface: iface, Dst: "192.0.2.0/24", Metric: 100},
	}, nil)
	writeProc(t, root, nbits, testProc{pid: 4300, comm: "irqbalance", allowed: "0",
		cmdline: []string{"/usr/sbin/irqbalance", "--foreground", "--banirq=9"},
		environ: []string{"IRQBALANCE_BANNED_CPULIST=1"}})
	put(t, root, "etc/default/irqbalance", "IRQBALANCE_ONESHOT=0\n")
	// iperf3 runs in a cgroup v2 group that is an isolated partition.
	put(t, root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n")
	for name, data := range map[string]string{"cgroup.procs": "4242\n", "cpuset.cpus.effective": "0\n",
		"cpuset.mems.effective": "0\n", "cpuset.cpus.partition": "isolated\n", "memory.numa_stat": "anon N0=12288000\nfile N0=4096\n"} {
		put(t, root, "sys/fs/cgroup"+traceCgroup+"/"+name, data)
	}
	// and a pod's container holds it too, exclusive by the kubelet.
	writePod(t, root, 4242, "0", "0", "")
}

// tracePod is the pod writePod makes.
const tracePod = "default/iperf-server"

// traceCgroup is the group withProcesses puts iperf3 in.
const traceCgroup = "/irqnuma.slice/bench.scope"

// readingCommands are the commands that read a root, with what they
// need of it (its first NIC, the watched process); those about a NIC
// are left out on a tree without one.
func readingCommands(t *testing.T, root string) [][]string {
	t.Helper()
	cmds := [][]string{
		{"topology"},
		{"topology", "-o", "json"},
		{"irq", "list"},
		{"irq", "list", "--all", "-o", "json"},
		{"audit", "--fail-on", "never"},
		{"audit", "-o", "json", "--fail-on", "never", "--pid", "4242"},
		{"audit", "-o", "json", "--fail-on", "never", "--comm", "iperf3"},
		{"audit", "-o", "json", "--fail-on", "never", "--cgroup", traceCgroup},
		{"audit", "-o", "json", "--fail-on", "never", "--pod", tracePod, "--container", podCtrID[:12]},
		{"mask", "--pod", tracePod},
		{"audit", "--fail-on", "never", "--textfile", textfileArg},
		{"map", "--color", "never"},
		{"map", "--svg", "-"},
		{"mask", "--node", "0", "--format", "numactl"},
		{"watch", "--count", "1", "--interval", "1ms", "-o", "json", "--pid", "4242"},
		{"watch", "--count", "1", "--interval", "1ms", "-o", "json", "--cgroup", traceCgroup},
	}
	nics := nicNames(t, root)
	if len(nics) == 0 {
		t.Log("no NIC: mask --nic, irq pin and bench left out")
		return cmds
	}
	nic := nics[0]
	bench := []string{"bench", "--dry-run", "--", "iperf3", "-J"}
	// bench plans for the one NIC with queue IRQs, or the one named.
	const choose = "choose the NIC with --nic: "
	if r := runOn(t, root, bench); r.Code == 2 && strings.Contains(r.Stderr, choose) {
		_, names, _ := strings.Cut(r.Stderr, "(")
		first, _, _ := strings.Cut(strings.TrimRight(names, ")\n"), ",")
		bench = slices.Insert(bench, 2, "--nic", first)
	}
	return append(cmds,
		[]string{"mask", "--nic", nic},
		[]string{"irq", "pin", "--dry-run", "-o", "json", "--state", "/dev/null", nic},
		[]string{"flow", "tcp", "10.0.0.1:40000", "10.0.0.2:5201", "--nic", nic},
		[]string{"flow", "udp", "[fe80::1]:40000", "[fe80::2]:5201", "--nic", nic, "-o", "json"},
		[]string{"zc", "check", nic, "--queue", "1", "--port", "9000"},
		[]string{"zc", "check", nic, "--send", "-o", "json"},
		bench)
}

// textfileArg stands for a --textfile in a fresh folder (runOn).
const textfileArg = "TEXTFILE"

// cmdRun is what a command wrote and its exit code.
type cmdRun struct {
	Stdout, Stderr string
	Textfile       string // what it wrote to its --textfile
	Code           int
}

// runOn runs c on root, with a clock that moves one second a reading, so
// watch's samples are stamped alike on a tree and on its snapshot.
func runOn(t *testing.T, root string, c []string) cmdRun {
	t.Helper()
	s := hostSys()
	s.getenv = func(string) string { return "" }
	var mu sync.Mutex
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	args := append([]string{"--root", root}, c...)
	textfile := ""
	if i := slices.Index(args, textfileArg); i >= 0 {
		textfile = filepath.Join(t.TempDir(), "irqnuma.prom")
		args[i] = textfile
	}
	out, errOut, code := runCLISys(t, s, args...)
	r := cmdRun{Stdout: out, Stderr: errOut, Code: code}
	if textfile != "" {
		b, err := os.ReadFile(textfile)
		if err != nil {
			t.Fatalf("%s: %v", strings.Join(c, " "), err)
		}
		// How long the read took is the one line that may differ.
		r.Textfile = scrapeDuration.ReplaceAllString(string(b), "${1}D")
	}
	return r
}

// traceCommands runs cmds on root with the trace on and returns every
// access under root, by operation and path.
func traceCommands(t *testing.T, root string, cmds [][]string) map[kfile.Access]bool {
	t.Helper()
	var mu sync.Mutex
	seen := map[kfile.Access]bool{}
	absent := 0
	stop := kfile.Trace(func(a kfile.Access) {
		if a.Root != root || a.Rel == "" || a.Op == kfile.OpWrite {
			return
		}
		k := kfile.Access{Op: a.Op, Rel: a.Rel}
		mu.Lock()
		if !seen[k] && kfile.IsNotExist(a.Err) {
			absent++
		}
		seen[k] = true
		mu.Unlock()
	})
	defer stop()
	for _, c := range cmds {
		// A command may fail on a tree (dell-2numa has no cpu/online for
		// watch); the snapshot must fail alike. A usage error is this
		// test's mistake.
		if r := runOn(t, root, c); r.Code != 0 {
			t.Logf("%s on the tree: exit %d: %s", strings.Join(c, " "), r.Code, r.Stderr)
			if r.Code == 2 {
				t.Errorf("%s on the tree: a usage error", strings.Join(c, " "))
			}
		}
	}
	if len(seen) == 0 {
		t.Fatal("the trace saw nothing")
	}
	t.Logf("%d commands touched %d paths (by operation), %d of them absent", len(cmds), len(seen), absent)
	return seen
}

// compareAccesses asks each traced access of the tree at root and of the
// unpacked snapshot at dir, and reports where they answer differently.
func compareAccesses(t *testing.T, root, dir string, seen map[kfile.Access]bool) {
	t.Helper()
	tree, err := kfile.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	snap, err := kfile.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var keys []kfile.Access
	for a := range seen {
		keys = append(keys, a)
	}
	slices.SortFunc(keys, func(a, b kfile.Access) int {
		return strings.Compare(a.Rel+" "+string(a.Op), b.Rel+" "+string(b.Op))
	})
	for _, a := range keys {
		want := answer(tree, a)
		got := answer(snap, a)
		if want != got {
			t.Errorf("%s /%s: tree %s, snapshot %s", a.Op, a.Rel, want, got)
		}
		if a.Op == kfile.OpReadDir {
			extraEntries(t, tree, snap, a.Rel)
		}
	}
}

// extraEntries reports names the snapshot's folder rel lists that the
// tree's does not. A listing may hold fewer (the capture leaves out what
// no reader uses: a reader that uses an entry touches it, and the trace
// holds that access), never more.
func extraEntries(t *testing.T, tree, snap kfile.FS, rel string) {
	t.Helper()
	want, _ := tree.ReadDir(tree.Path(rel))
	got, _ := snap.ReadDir(snap.Path(rel))
	for _, e := range got {
		if !slices.ContainsFunc(want, func(w os.DirEntry) bool { return w.Name() == e.Name() }) {
			t.Errorf("readdir /%s: the snapshot lists %s, the tree does not", rel, e.Name())
		}
	}
}

// answer is what fsys says to the access a, in words: "absent", or
// what was found (bytes, a listing, a type, a target).
func answer(fsys kfile.FS, a kfile.Access) string {
	p := fsys.Path(a.Rel)
	var (
		s   string
		err error
	)
	switch a.Op {
	case kfile.OpRead:
		var b []byte
		b, err = fsys.Read(p)
		s = fmt.Sprintf("%d bytes %q", len(b), clipBytes(b))
		if slices.Contains(topology.PCIIDsPaths, a.Rel) {
			s = "present" // the snapshot keeps only the host's own entries
		}
	case kfile.OpReadDir:
		// The folder is there; its names are extraEntries' to compare.
		_, err = fsys.ReadDir(p)
		s = "a folder"
	case kfile.OpStat, kfile.OpLstat:
		var fi fs.FileInfo
		if a.Op == kfile.OpStat {
			fi, err = fsys.Stat(p)
		} else {
			fi, err = fsys.Lstat(p)
		}
		if err == nil {
			s = fi.Mode().Type().String()
			if fi.Mode().IsRegular() {
				s += " " + fi.Mode().Perm().String()
			}
		}
	case kfile.OpReadlink:
		s, err = fsys.Readlink(p)
		if path.IsAbs(s) {
			s = "absolute" // the snapshot makes it relative
		}
		s = "-> " + s
	case kfile.OpResolve:
		s, err = fsys.Resolve(p)
		s = "real " + s
	}
	switch {
	case kfile.IsNotExist(err):
		return "absent"
	case err != nil:
		return "error " + strings.ReplaceAll(err.Error(), fsys.Root(), "ROOT")
	}
	return s
}

func clipBytes(b []byte) []byte {
	if len(b) > 60 {
		return append(bytes.Clone(b[:60]), "..."...)
	}
	return b
}
