package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
)

// The picture of each host tree: text (no colour: stdout is not a
// terminal), SVG, and for seed the JSON model.
func TestMapGolden(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"seed", "nps2", "arm64", "offline-2node", "vm-virtio"} {
		t.Run(host, func(t *testing.T) {
			root := hosttest.Root(host)
			out, errOut, code := runCLI(t, "--root", root, "map")
			if code != 0 {
				t.Fatalf("map: exit %d: %s", code, errOut)
			}
			golden(t, "map/"+host+".txt", out)
			if host == "offline-2node" || host == "vm-virtio" {
				return
			}
			svg, errOut, code := runCLI(t, "--root", root, "map", "--svg", "-")
			if code != 0 {
				t.Fatalf("map --svg -: exit %d: %s", code, errOut)
			}
			golden(t, "map/"+host+".svg", svg)
		})
	}
	out, errOut, code := runCLI(t, "--root", hosttest.Root("seed"), "map", "-o", "json")
	if code != 0 {
		t.Fatalf("map -o json: exit %d: %s", code, errOut)
	}
	golden(t, "map/seed.json", out)
}

// A snapshot of a host tree draws the same picture as the tree.
func TestMapSnapshot(t *testing.T) {
	t.Parallel()
	archive := filepath.Join(t.TempDir(), "nps2.tar.gz")
	if _, errOut, code := runCLI(t, "--root", hosttest.Root("nps2"), "snapshot", "-o", archive); code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	want, _, _ := runCLI(t, "--root", hosttest.Root("nps2"), "map")
	got, errOut, code := runCLI(t, "--root", archive, "map")
	if code != 0 {
		t.Fatalf("map --root %s: exit %d: %s", archive, code, errOut)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("map of the snapshot differs from the tree's (-tree +snapshot):\n%s", diff)
	}
}

// --svg FILE writes the same SVG as --svg - and nothing to stdout.
func TestMapSVGFile(t *testing.T) {
	t.Parallel()
	root := hosttest.Root("nps2")
	want, _, code := runCLI(t, "--root", root, "map", "--svg", "-")
	if code != 0 {
		t.Fatal("map --svg - failed")
	}
	file := filepath.Join(t.TempDir(), "nps2.svg")
	out, errOut, code := runCLI(t, "--root", root, "map", "--svg", file)
	if code != 0 || out != "" {
		t.Fatalf("map --svg FILE: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if errOut != "irqnuma: wrote "+file+"\n" {
		t.Errorf("stderr = %q", errOut)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Error("--svg FILE and --svg - differ")
	}
}

func TestMapJSON(t *testing.T) {
	t.Parallel()
	out, _, code := runCLI(t, "--root", hosttest.Root("seed"), "map", "-o", "json")
	if code != 0 {
		t.Fatal("map -o json failed")
	}
	var doc struct {
		NICs []struct {
			Name string `json:"name"`
			Node int    `json:"node"`
		} `json:"nics"`
		Conflicts []struct {
			Kind string `json:"kind"`
			CPU  int    `json:"cpu"`
			IRQs []int  `json:"irqs"`
		} `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.NICs) != 1 || doc.NICs[0].Name != "eth0" || doc.NICs[0].Node != 1 {
		t.Errorf("nics = %+v, want eth0 on node 1", doc.NICs)
	}
	if len(doc.Conflicts) != 1 || doc.Conflicts[0].CPU != 53 || fmt.Sprint(doc.Conflicts[0].IRQs) != "[286 290]" {
		t.Errorf("conflicts = %+v, want IRQs 286 and 290 on CPU 53", doc.Conflicts)
	}
}

func TestMapColor(t *testing.T) {
	t.Parallel()
	root := hosttest.Root("seed")
	tests := []struct {
		give []string
		want bool // escape codes expected
	}{
		{[]string{}, false}, // auto: a buffer is not a terminal
		{[]string{"--color", "auto"}, false},
		{[]string{"--color", "never"}, false},
		{[]string{"--color", "always"}, true},
	}
	for _, tt := range tests {
		out, errOut, code := runCLI(t, append([]string{"--root", root, "map"}, tt.give...)...)
		if code != 0 {
			t.Fatalf("map %v: exit %d: %s", tt.give, code, errOut)
		}
		if got := strings.Contains(out, "\x1b["); got != tt.want {
			t.Errorf("map %v: escape codes %v, want %v", tt.give, got, tt.want)
		}
	}
}

// --color auto colours on a terminal, unless NO_COLOR is set.
func TestMapColorTerminal(t *testing.T) {
	for _, noColor := range []string{"", "1"} {
		t.Run("NO_COLOR="+noColor, func(t *testing.T) {
			t.Setenv("NO_COLOR", noColor)
			ctl, tty := openPTY(t, 80, 24)
			done := make(chan int, 1)
			go func() {
				done <- run(context.Background(), []string{"--root", hosttest.Root("seed"), "map"},
					strings.NewReader(""), tty, io.Discard)
			}()
			var got bytes.Buffer
			buf := make([]byte, 4096)
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(got.String(), "no queue IRQ") && time.Now().Before(deadline) {
				_ = ctl.SetReadDeadline(deadline)
				n, err := ctl.Read(buf)
				got.Write(buf[:n])
				if err != nil {
					break
				}
			}
			if code := <-done; code != 0 {
				t.Fatalf("map on a terminal: exit %d", code)
			}
			colored := strings.Contains(got.String(), "\x1b[1;31m53 2q!\x1b[0m")
			if want := noColor == ""; colored != want {
				t.Errorf("CPU 53 in red: %v, want %v:\n%q", colored, want, got.String())
			}
		})
	}
}

func TestMapWidth(t *testing.T) {
	t.Parallel()
	root := hosttest.Root("seed")
	for _, w := range []int{40, 80, 120} {
		out, errOut, code := runCLI(t, "--root", root, "map", "--width", strconv.Itoa(w))
		if code != 0 {
			t.Fatalf("--width %d: exit %d: %s", w, code, errOut)
		}
		widest := 0
		for l := range strings.SplitSeq(out, "\n") {
			widest = max(widest, len(l))
		}
		if widest > w {
			t.Errorf("--width %d: widest line %d", w, widest)
		}
	}
}

func TestMapBadInput(t *testing.T) {
	t.Parallel()
	root := hosttest.Root("seed")
	tests := []struct {
		give     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"--width", "39"}, cli.ExitUsage, "--width 39: want at least 40 columns"},
		{[]string{"--width", "wide"}, cli.ExitUsage, `--width "wide": want a whole number`},
		{[]string{"--color", "sometimes"}, cli.ExitUsage, `--color "sometimes": want auto, always or never`},
		{[]string{"--nic", "eth9"}, cli.ExitUsage, `unknown NIC "eth9" (this host has: eth0)`},
		{[]string{"--pid", "0"}, cli.ExitUsage, "--pid 0: not a process id"},
		{[]string{"--comm", ""}, cli.ExitUsage, "--comm: empty name"},
		{[]string{"extra"}, cli.ExitUsage, "unknown command"},
		{[]string{"--svg", "-", "-o", "json"}, cli.ExitUsage, "--svg and -o json: choose one"},
		{[]string{"--pid", "99999"}, cli.ExitError, "--pid 99999: no such process"},
		{[]string{"--comm", "iperf3"}, cli.ExitError, `--comm iperf3: no such process`},
		{[]string{"--svg", "/nonexistent/dir/map.svg"}, cli.ExitError, "write SVG: open /nonexistent/dir/map.svg"},
	}
	for _, tt := range tests {
		out, errOut, code := runCLI(t, append([]string{"--root", root, "map"}, tt.give...)...)
		if code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) {
			t.Errorf("map %q: exit %d, stderr %q; want exit %d and %q", tt.give, code, errOut, tt.wantCode, tt.wantErr)
		}
		if out != "" {
			t.Errorf("map %q: stdout %q, want nothing", tt.give, out)
		}
		if strings.Count(errOut, "\n") != 1 {
			t.Errorf("map %q: stderr is not one line: %q", tt.give, errOut)
		}
	}
	if _, errOut, code := runCLI(t, "--root", filepath.Join(t.TempDir(), "none"), "map"); code != cli.ExitUsage || !strings.Contains(errOut, "no such folder or snapshot") {
		t.Errorf("missing root: exit %d, %q", code, errOut)
	}
}

// A benchmark process written into a copy of the seed tree: the map marks
// where its threads last ran and may run, the queue CPU it shares, and
// the NIC its sockets use.
func TestMapProcess(t *testing.T) {
	t.Parallel()
	root := hosttest.Copy(t, "seed")
	mapWriteProc(t, root, 4242, "iperf3", "16-19", map[int]int{4242: 16, 4243: 17})
	hosttest.WriteSockets(t, root, 4242, iperf3OnEth0)
	hosttest.WriteRoutes(t, filepath.Join(root, "proc/4242/net"), seedRoutes, nil)
	for _, args := range [][]string{{"--pid", "4242"}, {"--comm", "iperf3"}} {
		out, errOut, code := runCLI(t, append([]string{"--root", root, "map"}, args...)...)
		if code != 0 {
			t.Fatalf("map %v: exit %d: %s", args, code, errOut)
		}
		for _, want := range []string{
			"| | 16 P     17 q1P!  18 p     19 p     20 q9    21 q10   22 .     23 q13    | |\n",
			"! iperf3 (pid 4242) last ran on queue CPU 17\n",
			"P iperf3 (pid 4242): 2 threads, may run on 16-19, last ran on 16-17; uses eth0:\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("map %v lacks %q:\n%s", args, want, out)
			}
		}
		golden(t, "map/seed-iperf3.txt", out)
	}
	out, _, _ := runCLI(t, "--root", root, "-o", "json", "map", "--pid", "4242")
	if !strings.Contains(out, `"nics": [
        "eth0"
      ],
      "attribution": "sockets",`) {
		t.Errorf("map -o json: no attribution of 4242 to eth0:\n%s", out)
	}
}

// The live host: the test's own process is drawn where it runs.
func TestMapLive(t *testing.T) {
	t.Parallel()
	hosttest.Live(t)
	if runtime.GOOS != "linux" {
		t.Skip("live map needs Linux /proc and /sys")
	}
	if _, err := os.Stat("/sys/devices/system/cpu/online"); err != nil {
		t.Skipf("no live /sys: %v", err)
	}
	pid := os.Getpid()
	out, errOut, code := runCLI(t, "map", "--pid", strconv.Itoa(pid))
	if code != 0 {
		t.Fatalf("live map: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, fmt.Sprintf("(pid %d): ", pid)) || !strings.Contains(out, "+- node ") {
		t.Errorf("live map lacks the process or a node box:\n%s", out)
	}
	svg, errOut, code := runCLI(t, "map", "--svg", "-")
	if code != 0 || !strings.HasPrefix(svg, "<?xml") {
		t.Errorf("live map --svg -: exit %d: %s", code, errOut)
	}
}

func BenchmarkMapCLI(b *testing.B) {
	root := hosttest.Synthetic(b, hosttest.SyntheticSpec{CPUs: 512, Nodes: 4, SMT: true, NICs: 8, QueuesPerNIC: 63, ExtraIRQs: 488})
	for _, args := range [][]string{{"map"}, {"map", "--svg", "-"}, {"map", "-o", "json"}} {
		b.Run(strings.Join(args, " "), func(b *testing.B) {
			full := append([]string{"--root", root}, args...)
			var out, errb bytes.Buffer
			for b.Loop() {
				out.Reset()
				errb.Reset()
				if code := run(context.Background(), full, strings.NewReader(""), &out, &errb); code != 0 {
					b.Fatalf("exit %d: %s", code, errb.String())
				}
			}
		})
	}
}

// mapWriteProc writes /proc/<pid> for a process whose threads (TID ->
// last CPU) may all run on allowed, in the kernel's status and stat
// formats (the fields irqnuma and procfs read).
func mapWriteProc(t *testing.T, root string, pid int, comm, allowed string, threads map[int]int) {
	t.Helper()
	write := func(rel, data string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	status := func(id int) string {
		return fmt.Sprintf("Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t1\n"+
			"Threads:\t%d\nCpus_allowed:\t00000000,000f0000\nCpus_allowed_list:\t%s\n"+
			"Mems_allowed:\t00000000,00000003\nMems_allowed_list:\t0-1\n", comm, pid, id, len(threads), allowed)
	}
	stat := func(id, last int) string {
		f := []string{strconv.Itoa(id), "(" + comm + ")", "S", "1", strconv.Itoa(pid), strconv.Itoa(pid), "0", "-1",
			"4194560", "120", "0", "0", "0", "35", "12", "0", "0", "20", "0", strconv.Itoa(len(threads)), "0",
			"64793", "5259264", "1036", "18446744073709551615", "1", "1", "0", "0", "0", "0", "0", "0", "0",
			"1", "0", "0", "17", strconv.Itoa(last), "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"}
		return strings.Join(f, " ") + "\n"
	}
	base := fmt.Sprintf("proc/%d", pid)
	write(base+"/comm", comm+"\n")
	write(base+"/status", status(pid))
	write(base+"/stat", stat(pid, threads[pid]))
	for tid, last := range threads {
		tb := fmt.Sprintf("%s/task/%d", base, tid)
		write(tb+"/comm", comm+"\n")
		write(tb+"/status", status(tid))
		write(tb+"/stat", stat(tid, last))
	}
}

// The README opens with the seed host's map: it must be what the tool
// prints.
func TestMapREADME(t *testing.T) {
	t.Parallel()
	block := readmeBlock(t, "map", "$ irqnuma --root testdata/hosts/seed map\n")
	out, _, code := runCLI(t, "--root", hosttest.Root("seed"), "map")
	if code != 0 {
		t.Fatal("map failed")
	}
	if block != out {
		t.Errorf("README's seed map is not what irqnuma prints (-README +irqnuma):\n%s", cmp.Diff(block, out))
	}
}

// readmeDocs is README.md and every page under docs/, one after the
// other: the text whose blocks the tests hold to what the tool prints.
func readmeDocs(t *testing.T) string {
	t.Helper()
	root := moduleRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md under %s (%v)", root, err)
	}
	var all strings.Builder
	for _, p := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return all.String()
}

// readmeBlock is what follows the command line cmd in a code block of the
// README's or a docs page's section (between <!-- section:NAME --> and its
// end), up to the block's end.
func readmeBlock(t *testing.T, section, cmd string) string {
	t.Helper()
	_, sec, ok := strings.Cut(readmeDocs(t), "<!-- section:"+section+" -->")
	sec, _, ok2 := strings.Cut(sec, "<!-- /section:"+section+" -->")
	_, block, ok3 := strings.Cut(sec, cmd)
	block, _, ok4 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 || !ok4 {
		t.Fatalf("README and docs/ have no %s section with %q in a code block", section, cmd)
	}
	return block
}
