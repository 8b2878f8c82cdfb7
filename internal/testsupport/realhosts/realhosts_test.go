package realhosts

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/irqnuma/irqnuma/cpuset"
)

// TestCaptures unpacks every capture once and checks the expected answers
// against the files the capture holds.
func TestCaptures(t *testing.T) {
	Require(t)
	caps := Captures()
	if len(caps) < 10 {
		t.Fatalf("Captures() found %d captures, want at least 10", len(caps))
	}
	for _, c := range caps {
		t.Run(c.Name, func(t *testing.T) {
			start := time.Now()
			root := Root(t, c)
			t.Logf("unpacked %s in %v", filepath.Base(c.Archive), time.Since(start).Round(time.Millisecond))

			if !isDir(filepath.Join(root, "sys", "devices", "system", "node")) {
				t.Fatalf("Unpack(%s) = %s, which has no sys/devices/system/node", c.Name, root)
			}
			// The 48amd64 archive holds no symlinks at all.
			if links := countSymlinks(t, filepath.Join(root, "sys")); links == 0 && c.Name != "hwloc-48amd64-4pa2n6c-sparse" {
				t.Errorf("Unpack(%s) kept no symlinks under sys/", c.Name)
			}

			want, err := ExpectedNodes(c)
			if err != nil {
				t.Fatalf("ExpectedNodes(%s): %v", c.Name, err)
			}
			checkDisjoint(t, c.Name, want)
			count, err := ExpectedCPUCount(c)
			if err != nil {
				t.Fatalf("ExpectedCPUCount(%s): %v", c.Name, err)
			}
			if got := union(want).Len(); got != count {
				t.Errorf("%s: nodes cover %d CPUs, ExpectedCPUCount = %d", c.Name, got, count)
			}

			// The capture's own sysfs agrees with the other project's
			// answer, once offline CPUs are left out (the 16em64t node0
			// cpumap, "00000000,0000ffff", still lists its four offline
			// CPUs; lstopo does not).
			got := sysfsNodes(t, root)
			if !equalNodes(got, want) {
				t.Errorf("%s: sysfs nodes %v, expected answer %v", c.Name, got, want)
			}

			if c.Name == "dell-2numa" {
				checkIRQAffinity(t, c, root)
			}
		})
	}
}

func checkIRQAffinity(t *testing.T, c Capture, root string) {
	t.Helper()
	want, err := ExpectedIRQAffinity(c)
	if err != nil {
		t.Fatalf("ExpectedIRQAffinity(%s): %v", c.Name, err)
	}
	if len(want) != 1125 {
		t.Errorf("ExpectedIRQAffinity(%s) has %d IRQs, want 1125", c.Name, len(want))
	}
	dirs, err := filepath.Glob(filepath.Join(root, "proc", "irq", "[0-9]*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != len(want) {
		t.Errorf("%s: %d /proc/irq/N folders, expected answer has %d IRQs", c.Name, len(dirs), len(want))
	}
	for _, d := range dirs {
		irq, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			t.Fatalf("folder %s: %v", d, err)
		}
		got := readList(t, filepath.Join(d, "smp_affinity_list"))
		if w, ok := want[irq]; !ok || !got.Equal(w) {
			t.Errorf("IRQ %d: smp_affinity_list %v, expected answer %v (present %v)", irq, got, w, ok)
		}
	}
}

func TestExpectedNodesSparse(t *testing.T) {
	Require(t)
	c := mustLookup(t, "hwloc-48amd64-4pa2n6c-sparse")
	got, err := ExpectedNodes(c)
	if err != nil {
		t.Fatal(err)
	}
	ids := slices.Sorted(maps.Keys(got))
	if want := []int{0, 1, 2, 33, 34, 45, 72, 73}; !slices.Equal(ids, want) {
		t.Errorf("ExpectedNodes(%s) ids = %v, want %v", c.Name, ids, want)
	}
	for id, s := range got {
		if s.Len() != 6 {
			t.Errorf("node %d = %v, want 6 CPUs", id, s)
		}
	}
}

func TestExpectedNodesValues(t *testing.T) {
	Require(t)
	even := func(n int) cpuset.Set { return everyOther(0, n) }
	odd := func(n int) cpuset.Set { return everyOther(1, n) }
	tests := []struct {
		give string
		want map[int]cpuset.Set
	}{
		{"cnto-master", map[int]cpuset.Set{0: even(112), 1: odd(112)}},
		{"cnto-worker1", map[int]cpuset.Set{0: even(80), 1: odd(80)}},
		{"cnto-worker2", map[int]cpuset.Set{0: even(32), 1: odd(32)}},
		{"cnto-sno", map[int]cpuset.Set{0: cpuset.Range(0, 11)}},
		{"dell-2numa", map[int]cpuset.Set{0: even(104), 1: odd(104)}},
		{"hwloc-16em64t-4s2c2t-offlines", map[int]cpuset.Set{0: cpuset.Range(0, 15).Difference(cpuset.New(2, 5, 13, 14))}},
		{"hwloc-32intel64-2p8co2t+8ve", map[int]cpuset.Set{0: cpuset.Range(0, 7).Union(cpuset.Range(16, 23)), 1: cpuset.Range(8, 15).Union(cpuset.Range(24, 31))}},
		{"hwloc-32em64t-2n8c+dax+nvme+mic+dimms", map[int]cpuset.Set{0: cpuset.Range(0, 7), 1: cpuset.Range(8, 15)}},
		{"hwloc-128arm-2pa2n8cluster4co", map[int]cpuset.Set{0: cpuset.Range(0, 31), 1: cpuset.Range(32, 63), 2: cpuset.Range(64, 95), 3: cpuset.Range(96, 127)}},
	}
	for _, tt := range tests {
		got, err := ExpectedNodes(mustLookup(t, tt.give))
		if err != nil {
			t.Errorf("ExpectedNodes(%s): %v", tt.give, err)
			continue
		}
		if !equalNodes(got, tt.want) {
			t.Errorf("ExpectedNodes(%s) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

func TestExpectedSMT(t *testing.T) {
	Require(t)
	tests := []struct {
		give      string
		wantSMT   bool
		wantCount int
	}{
		{"cnto-master", true, 112},
		{"cnto-worker1", true, 80},
		{"cnto-worker2", false, 32},
		{"cnto-sno", false, 12},
	}
	for _, tt := range tests {
		c := mustLookup(t, tt.give)
		smt, err := ExpectedSMT(c)
		if err != nil || smt != tt.wantSMT {
			t.Errorf("ExpectedSMT(%s) = %v, %v, want %v", tt.give, smt, err, tt.wantSMT)
		}
		n, err := ExpectedCPUCount(c)
		if err != nil || n != tt.wantCount {
			t.Errorf("ExpectedCPUCount(%s) = %d, %v, want %d", tt.give, n, err, tt.wantCount)
		}
	}
	if _, err := ExpectedSMT(mustLookup(t, "dell-2numa")); !errors.Is(err, ErrNoExpected) {
		t.Errorf("ExpectedSMT(dell-2numa) error = %v, want ErrNoExpected", err)
	}
}

// The cnto captures carry cadvisor's machineinfo.json too; it must agree
// with the must-gather answer.
func TestMustGatherMatchesMachineInfo(t *testing.T) {
	Require(t)
	for _, c := range Captures() {
		if !strings.HasPrefix(c.Name, "cnto-") {
			continue
		}
		mg, err := mustGatherNode(c)
		if err != nil {
			t.Fatal(err)
		}
		mi, err := machineInfo(c)
		if err != nil {
			t.Fatal(err)
		}
		if !equalNodes(mg.nodes, mi.nodes) || mg.cpusCount != mi.numCores {
			t.Errorf("%s: must-gather %v (%d CPUs), machineinfo %v (%d CPUs)", c.Name, mg.nodes, mg.cpusCount, mi.nodes, mi.numCores)
		}
	}
}

// Where a capture has both, the lstopo console and the hwloc XML agree.
func TestConsoleMatchesXML(t *testing.T) {
	Require(t)
	n := 0
	for _, c := range Captures() {
		con, xmlp := c.expected(".console"), c.expected(".xml")
		if con == "" || xmlp == "" {
			continue
		}
		n++
		a, err := parseConsole(mustRead(t, con))
		if err != nil {
			t.Fatalf("parseConsole(%s): %v", con, err)
		}
		b, err := parseHwlocXML(mustRead(t, xmlp))
		if err != nil {
			t.Fatalf("parseHwlocXML(%s): %v", xmlp, err)
		}
		if !equalNodes(a.nodes, b.nodes) || !a.pus.Equal(b.pus) {
			t.Errorf("%s: console %v (PUs %v), XML %v (PUs %v)", c.Name, a.nodes, a.pus, b.nodes, b.pus)
		}
	}
	if n == 0 {
		t.Error("no capture has both a console and an XML")
	}
}

func TestNoExpected(t *testing.T) {
	Require(t)
	for _, c := range Captures() {
		if c.Name == "dell-2numa" {
			continue
		}
		if _, err := ExpectedIRQAffinity(c); !errors.Is(err, ErrNoExpected) || !strings.Contains(err.Error(), c.Name) {
			t.Errorf("ExpectedIRQAffinity(%s) error = %v, want ErrNoExpected naming the capture", c.Name, err)
		}
	}
	bogus := Capture{Name: "nowhere"}
	if _, err := ExpectedNodes(bogus); !errors.Is(err, ErrNoExpected) {
		t.Errorf("ExpectedNodes(nowhere) error = %v, want ErrNoExpected", err)
	}
}

func TestInterruptsFiles(t *testing.T) {
	Require(t)
	files, err := InterruptsFiles()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 18 {
		t.Errorf("InterruptsFiles() = %d files, want 18", len(files))
	}
	wantCPUs := map[string]int{
		"nodeexporter-interrupts/interrupts":                             4,
		"nodeexporter-interrupts/interrupts_aarch64":                     8,
		"netutils-linux/interrupts/singlequeue_8cpu/interrupts1":         8,
		"netutils-linux/rss-ladder.tests/ixgbe.E5645/interrupts":         12,
		"netutils-linux/interrupts/multinic_multiqueue_4cpu/interrupts5": 4,
	}
	for _, f := range files {
		if !isFile(f.Path) || f.Lines == 0 {
			t.Errorf("InterruptsFiles(): %s: path %s, %d lines", f.Name, f.Path, f.Lines)
		}
		if !slices.Equal(f.CPUs, seq(len(f.CPUs))) {
			t.Errorf("%s: header CPUs %v, want CPU0..CPU%d", f.Name, f.CPUs, len(f.CPUs)-1)
		}
		if n, ok := wantCPUs[f.Name]; ok && len(f.CPUs) != n {
			t.Errorf("%s: %d header CPUs, want %d", f.Name, len(f.CPUs), n)
		}
		delete(wantCPUs, f.Name)
	}
	for name := range wantCPUs {
		t.Errorf("InterruptsFiles() lacks %s", name)
	}
}

func TestRSSLadders(t *testing.T) {
	Require(t)
	ladders, err := RSSLadders()
	if err != nil {
		t.Fatal(err)
	}
	wantPlaced := map[string]int{"2xI350.i5-6400": 0, "igb.E5606": 8, "ixgbe.E5645": 8, "mlx5.Q6700": 4}
	if len(ladders) != len(wantPlaced) {
		t.Errorf("RSSLadders() = %d tests, want %d", len(ladders), len(wantPlaced))
	}
	for _, l := range ladders {
		if n, ok := wantPlaced[l.Name]; !ok || len(l.Placement) != n {
			t.Errorf("%s: %d placements, want %d", l.Name, len(l.Placement), n)
		}
		rows := irqNames(t, l.Interrupts)
		for _, p := range l.Placement {
			// Each named queue is that IRQ's row in the capture, and
			// lands on a CPU of the socket's node (Socket equals Node
			// in these lscpu outputs).
			if rows[p.IRQ] != p.Queue {
				t.Errorf("%s: queue %s is IRQ %d, whose row names %q", l.Name, p.Queue, p.IRQ, rows[p.IRQ])
			}
			if !l.Nodes[p.Socket].Contains(p.CPU) {
				t.Errorf("%s: %s on CPU%d, outside socket %d (%v)", l.Name, p.Queue, p.CPU, p.Socket, l.Nodes[p.Socket])
			}
			if len(l.Params) == 0 || p.Device != l.Params[0] {
				t.Errorf("%s: %s belongs to %s, params %v", l.Name, p.Queue, p.Device, l.Params)
			}
		}
	}
}

func TestParseConsole(t *testing.T) {
	tests := []struct {
		name string
		give string
		want map[int]cpuset.Set
	}{{
		name: "hwloc 2, node before cores",
		give: "Machine (P#0)\n  Package L#0 (P#0)\n    NUMANode L#0 (P#0 local=1GiB)\n    Core L#0 (P#0)\n      PU L#0 (P#0)\n      PU L#1 (P#4)\n" +
			"  Package L#1 (P#1)\n    NUMANode L#1 (P#1)\n    Core L#1 (P#0)\n      PU L#2 (P#1)\ndepth 0: 1 Machine\n",
		want: map[int]cpuset.Set{0: cpuset.New(0, 4), 1: cpuset.New(1)},
	}, {
		name: "hwloc 2, node after the cores it covers",
		give: "Machine (P#0)\n  Package L#0 (P#0)\n    Core L#0 (P#0)\n      PU L#0 (P#0)\n    Core L#1 (P#1)\n      PU L#1 (P#1)\n    NUMANode L#0 (P#7)\n" +
			"  Package L#1 (P#1)\n    Core L#2 (P#0)\n      PU L#2 (P#2)\n    NUMANode L#1 (P#3)\n",
		want: map[int]cpuset.Set{7: cpuset.New(0, 1), 3: cpuset.New(2)},
	}, {
		name: "hwloc 2, node with Misc children, and two nodes on one parent",
		give: "Machine (P#0)\n  NUMANode L#0 (P#0)\n    Misc(MemoryModule)\n  NUMANode L#1 (P#1)\n  Package L#0 (P#0)\n    PU L#0 (P#0)\n    PU L#1 (P#1)\n",
		want: map[int]cpuset.Set{0: cpuset.New(0, 1), 1: cpuset.New(0, 1)},
	}, {
		name: "hwloc 1, node is the parent",
		give: "Machine (16GB)\n  NUMANode L#0 (P#0 8GB)\n    Socket L#0\n      PU L#0 (P#0)\n  NUMANode L#1 (P#1 8GB)\n    Socket L#1\n      PU L#1 (P#1)\n",
		want: map[int]cpuset.Set{0: cpuset.New(0), 1: cpuset.New(1)},
	}}
	for _, tt := range tests {
		got, err := parseConsole([]byte(tt.give))
		if err != nil {
			t.Errorf("%s: parseConsole: %v", tt.name, err)
			continue
		}
		if !equalNodes(got.nodes, tt.want) {
			t.Errorf("%s: parseConsole = %v, want %v", tt.name, got.nodes, tt.want)
		}
	}

	for _, give := range []string{
		"Machine (P#0)\n",
		"Machine (P#0)\n  NUMANode L#0 (P#0)\n  NUMANode L#1 (P#0)\n  PU L#0 (P#0)\n",
		"Machine (P#0)\n  Core L#0 + PU L#0 (P#0)\n  NUMANode L#0 (P#0)\n",
		"NUMANode L#0 (P#0)\n",
	} {
		if got, err := parseConsole([]byte(give)); err == nil {
			t.Errorf("parseConsole(%q) = %v, want an error", give, got.nodes)
		}
	}
}

func TestParseHwlocBitmap(t *testing.T) {
	tests := []struct {
		give string
		want cpuset.Set
	}{
		{"0x00009fdb", cpuset.Range(0, 15).Difference(cpuset.New(2, 5, 13, 14))},
		{"0x00000001,0x00000000", cpuset.New(32)},
		{"0x0", cpuset.Set{}},
	}
	for _, tt := range tests {
		got, err := parseHwlocBitmap(tt.give)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("parseHwlocBitmap(%q) = %v, %v, want %v", tt.give, got, err, tt.want)
		}
	}
	for _, give := range []string{"", "ff", "0x", "0xff,", "0xzz"} {
		if got, err := parseHwlocBitmap(give); err == nil {
			t.Errorf("parseHwlocBitmap(%q) = %v, want an error", give, got)
		}
	}
}

func TestParseRSSExpected(t *testing.T) {
	for _, give := range []string{
		"",
		"  - eth0: queue eth0-rx-0 (irq 58) bound to CPU0\n",
		"- distribute interrupts of eth0 (-rx-) on socket 0\n  - eth0: queue eth0-rx-0 (irq 58) bound to CPUx\n",
	} {
		if got, err := parseRSSExpected([]byte(give)); err == nil {
			t.Errorf("parseRSSExpected(%q) = %v, want an error", give, got)
		}
	}
}

func TestParseMustGather(t *testing.T) {
	const give = `[{"name":"worker","nodes":[{"name":"w1.internal","smt_enabled":true,"cpus_count":4,"numa_cells_count":1,"numa_cells":[{"id":0,"cores":[0,1,2,3]}]},` +
		`{"name":"w10.internal","smt_enabled":false,"cpus_count":2,"numa_cells_count":1,"numa_cells":[{"id":0,"cores":[0,1]}]}]}]`
	got, err := parseMustGather([]byte(give), "w1")
	if err != nil || got.node != "w1.internal" || !got.nodes[0].Equal(cpuset.Range(0, 3)) {
		t.Errorf("parseMustGather(w1) = %+v, %v, want w1.internal with 0-3", got, err)
	}
	for _, host := range []string{"w", "w2"} {
		if _, err := parseMustGather([]byte(give), host); err == nil {
			t.Errorf("parseMustGather(%s) matched a node", host)
		}
	}
	if _, err := parseMustGather([]byte(`[{"name":"x","nodes":[{"name":"w1","cores":[]}]}]`), "w1"); err == nil {
		t.Error("parseMustGather accepted an unknown field")
	}
}

func TestParseIRQAffinity(t *testing.T) {
	for _, give := range []string{
		`[{"irq":1,"source":"","affinity":[0]},{"irq":1,"source":"","affinity":[1]}]`,
		`[{"irq":1,"source":"","affinity":[-1]}]`,
		`[{"irq":1,"affinity":[0],"extra":1}]`,
	} {
		if got, err := parseIRQAffinity([]byte(give)); err == nil {
			t.Errorf("parseIRQAffinity(%s) = %v, want an error", give, got)
		}
	}
}

// unpack keeps what the captures hold and skips devices; what it refuses
// is internal/untar's and tested there, one escaping entry here shows
// the captures go through it.
func TestUnpackSafety(t *testing.T) {
	tests := []struct {
		name    string
		give    []*tar.Header
		wantErr bool
	}{
		{"escaping hard link", []*tar.Header{{Name: "sys/h", Typeflag: tar.TypeLink, Linkname: "../etc/passwd"}}, true},
		{"hard link to a later file", []*tar.Header{
			{Name: "sys/h", Typeflag: tar.TypeLink, Linkname: "proc/interrupts"},
			{Name: "proc/interrupts", Typeflag: tar.TypeReg, Mode: 0o444},
		}, true},
		{"devices skipped, links kept", []*tar.Header{
			{Name: "sys/devices/system/node/node0/", Typeflag: tar.TypeDir, Mode: 0o755},
			{Name: "sys/devices/system/node/node0/cpu0", Typeflag: tar.TypeSymlink, Linkname: "."},
			{Name: "dev/null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3},
			{Name: "dev/fifo", Typeflag: tar.TypeFifo},
			{Name: "proc/interrupts", Typeflag: tar.TypeReg, Mode: 0o444},
			{Name: "proc/hard", Typeflag: tar.TypeLink, Linkname: "proc/interrupts"},
		}, false},
	}
	for _, tt := range tests {
		archive := filepath.Join(t.TempDir(), "x.tgz")
		writeTgz(t, archive, tt.give)
		dst := t.TempDir()
		err := unpack(archive, dst)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: unpack error = %v, want error %v", tt.name, err, tt.wantErr)
		}
		if _, err := os.Lstat(filepath.Join(filepath.Dir(dst), "evil")); err == nil {
			t.Errorf("%s: wrote outside the destination", tt.name)
		}
		if tt.wantErr {
			continue
		}
		if target, err := os.Readlink(filepath.Join(dst, "sys/devices/system/node/node0/cpu0")); err != nil || target != "." {
			t.Errorf("%s: symlink = %q, %v, want \".\"", tt.name, target, err)
		}
		if _, err := os.Lstat(filepath.Join(dst, "dev", "null")); err == nil {
			t.Errorf("%s: device entry was created", tt.name)
		}
		fi, err := os.Stat(filepath.Join(dst, "proc", "interrupts"))
		if err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: proc/interrupts = %v, %v, want mode 0644", tt.name, fi, err)
		}
		if hard, err := os.Stat(filepath.Join(dst, "proc", "hard")); err != nil || !os.SameFile(fi, hard) {
			t.Errorf("%s: proc/hard = %v, %v, want a hard link to proc/interrupts", tt.name, hard, err)
		}
	}
}

func TestHostRoot(t *testing.T) {
	dir := t.TempDir()
	if _, err := hostRoot(dir); err == nil {
		t.Error("hostRoot(empty folder) found a root")
	}
	for _, sub := range []string{"a/proc", "b/sys"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := hostRoot(dir); err == nil {
		t.Errorf("hostRoot(two candidate folders) = %s, want an error", got)
	}
}

func writeTgz(t *testing.T, p string, hdrs []*tar.Header) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range hdrs {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sysfsNodes reads node*/cpulist, or node*/cpumap where there is no
// cpulist, leaving out CPUs whose cpuN/online says 0.
func sysfsNodes(t *testing.T, root string) map[int]cpuset.Set {
	t.Helper()
	sys := filepath.Join(root, "sys", "devices", "system")
	dirs, err := filepath.Glob(filepath.Join(sys, "node", "node[0-9]*"))
	if err != nil {
		t.Fatal(err)
	}
	var offline []int
	online, _ := filepath.Glob(filepath.Join(sys, "cpu", "cpu[0-9]*", "online"))
	for _, p := range online {
		if sysfsText(mustRead(t, p)) == "0" {
			id, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(p)), "cpu"))
			offline = append(offline, id)
		}
	}
	nodes := map[int]cpuset.Set{}
	for _, d := range dirs {
		id, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "node"))
		if err != nil {
			t.Fatalf("node folder %s: %v", d, err)
		}
		var s cpuset.Set
		if p := filepath.Join(d, "cpulist"); isFile(p) {
			s = readList(t, p)
		} else {
			p := filepath.Join(d, "cpumap")
			s, err = cpuset.ParseMask(sysfsText(mustRead(t, p)))
			if err != nil {
				t.Fatalf("ParseMask(%s): %v", p, err)
			}
		}
		nodes[id] = s.Difference(cpuset.New(offline...))
	}
	return nodes
}

// irqNames maps IRQ number to the last field of its row.
func irqNames(t *testing.T, p string) map[int]string {
	t.Helper()
	names := map[int]string{}
	for _, line := range strings.Split(string(mustRead(t, p)), "\n") {
		num, rest, ok := strings.Cut(line, ":")
		irq, err := strconv.Atoi(strings.TrimSpace(num))
		if !ok || err != nil {
			continue
		}
		if f := strings.Fields(rest); len(f) > 0 {
			names[irq] = f[len(f)-1]
		}
	}
	return names
}

func readList(t *testing.T, p string) cpuset.Set {
	t.Helper()
	s, err := cpuset.ParseList(sysfsText(mustRead(t, p)))
	if err != nil {
		t.Fatalf("ParseList(%s): %v", p, err)
	}
	return s
}

// sysfsText trims the newline the kernel ends a value with, and the NUL
// after it that some hwloc captures carry ("0-31\n\x00").
func sysfsText(b []byte) string {
	return strings.TrimRight(string(b), "\n\x00")
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustLookup(t *testing.T, name string) Capture {
	t.Helper()
	c, ok := Lookup(name)
	if !ok {
		t.Fatalf("no capture %s", name)
	}
	return c
}

func countSymlinks(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func checkDisjoint(t *testing.T, name string, nodes map[int]cpuset.Set) {
	t.Helper()
	if len(nodes) == 0 {
		t.Errorf("%s: no nodes", name)
	}
	var seen cpuset.Set
	for _, id := range slices.Sorted(maps.Keys(nodes)) {
		s := nodes[id]
		if s.IsEmpty() {
			t.Errorf("%s: node %d has no CPUs", name, id)
		}
		if s.Intersects(seen) {
			t.Errorf("%s: node %d (%v) overlaps earlier nodes (%v)", name, id, s, seen)
		}
		seen = seen.Union(s)
	}
}

func union(nodes map[int]cpuset.Set) cpuset.Set {
	var u cpuset.Set
	for _, s := range nodes {
		u = u.Union(s)
	}
	return u
}

func equalNodes(a, b map[int]cpuset.Set) bool {
	return maps.EqualFunc(a, b, cpuset.Set.Equal)
}

func everyOther(first, n int) cpuset.Set {
	var ids []int
	for i := first; i < n; i += 2 {
		ids = append(ids, i)
	}
	return cpuset.New(ids...)
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
