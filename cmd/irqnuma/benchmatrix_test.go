package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/render/report"
	"github.com/irqnuma/irqnuma/internal/run/bench"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/realhosts"
)

// TestBenchDryRun: the matrix bench would run on the seed, as a table
// (golden) and as JSON, with nothing written.
func TestBenchDryRun(t *testing.T) {
	t.Parallel()
	root := hosttest.Shared(t, "seed")
	stdout, stderr, code := runCLISys(t, pinSys(nil, 1000), "--root", root, "bench", "--dry-run", "--",
		"iperf3", "-c", "192.0.2.1", "-t", "10", "-J")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	golden(t, "bench/seed-dry-run.txt", stdout)

	stdout, _, code = runCLISys(t, pinSys(nil, 1000), "--root", hosttest.Shared(t, "vm-virtio"), "-o", "json", "bench",
		"--dry-run", "--placements", "all", "--", "iperf3", "-c", "x", "-J")
	var doc report.BenchDoc
	if err := json.Unmarshal([]byte(stdout), &doc); code != 0 || err != nil {
		t.Fatalf("exit %d, %v:\n%s", code, err, stdout)
	}
	var na []string
	for _, c := range doc.Cells {
		if !c.Applicable {
			na = append(na, c.Name+": "+c.Reason)
		}
	}
	want := []string{}
	for _, n := range []string{"app-remote", "app-remote+membind", "irq-remote", "irq-remote+membind", "remote", "remote+membind"} {
		want = append(want, n+": no remote node: this host has one NUMA node (node 0)")
	}
	if diff := cmp.Diff(want, na); diff != "" || len(doc.Cells) != 10 || !doc.DryRun {
		t.Errorf("%d cells, dry run %v; not applicable (-want +got):\n%s", len(doc.Cells), doc.DryRun, diff)
	}
}

// TestBenchRefuses: what bench refuses before reading the host, and on a
// root it cannot run a command on.
func TestBenchRefuses(t *testing.T) {
	t.Parallel()
	seed := hosttest.Shared(t, "seed")
	slash := slashLink(t)
	tests := []struct {
		name string
		uid  int
		args []string
		code int
		msg  string
	}{
		{"no command", 0, []string{"bench", "--dry-run"}, cli.ExitUsage, "give the benchmark to run after --"},
		{"unknown placement", 0, []string{"bench", "--dry-run", "--placements", "local,far", "--", "iperf3", "-J"}, cli.ExitUsage, `unknown placement "far"`},
		{"no repeat", 0, []string{"bench", "--repeat", "0", "--", "iperf3", "-J"}, cli.ExitUsage, "--repeat 0: want 1 or more"},
		{"iperf3 without -J", 0, []string{"bench", "--", "iperf3", "-c", "x"}, cli.ExitUsage, "iperf3 without -J"},
		{"another tool, no parser", 0, []string{"bench", "--", "netperf", "-H", "x"}, cli.ExitUsage, "say how to read the command's result"},
		{"a tree, for real", 0, []string{"--root", seed, "bench", "--", "iperf3", "-J"}, cli.ExitUsage, "bench runs the command on this host, so it reads / only"},
		{"several NICs", 0, []string{"--root", hosttest.Shared(t, "offline-2node"), "bench", "--dry-run", "--", "iperf3", "-J"}, cli.ExitUsage, "choose the NIC with --nic: 4 have queue IRQs (ens1f0, ens2f0, eth1, eth10)"},
		{"remote node is the NIC's", 0, []string{"--root", seed, "bench", "--dry-run", "--remote-node", "1", "--", "iperf3", "-J"}, cli.ExitUsage, "--remote-node 1 is the NIC's own node"},
		{"not root", 1000, []string{"bench", "--", "iperf3", "-J"}, cli.ExitError, "bench changes the live host's IRQ affinity and needs root"},
		{"not root, a link to /", 1000, []string{"--root", slash, "bench", "--", "iperf3", "-J"}, cli.ExitError, "bench changes the live host's IRQ affinity and needs root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLISys(t, pinSys(nil, tt.uid), tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.msg) || stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit %d saying %q", code, stderr, stdout, tt.code, tt.msg)
			}
		})
	}
}

// liveBench is what the live bench tests need: root, a NIC with a
// writable queue IRQ, and every IRQ's affinity as it was.
func liveBench(t *testing.T) (nic string, before map[string]string) {
	t.Helper()
	hosttest.Writes(t, "IRQ affinities (/proc/irq) and /var/lib/irqnuma (bench pins, then restores)")
	hosttest.Live(t)
	if os.Geteuid() != 0 {
		t.Skip("not root: bench writes /proc/irq")
	}
	stdout, stderr, code := runCLI(t, "irq", "list", "-o", "json")
	if code != 0 {
		t.Fatalf("irq list: %d %s", code, stderr)
	}
	var doc struct {
		IRQs []listedIRQ `json:"irqs"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, q := range doc.IRQs {
		st, err := os.Stat(fmt.Sprintf("/proc/irq/%d/smp_affinity_list", q.IRQ))
		if q.Queue.Known() && q.NIC != "" && err == nil && st.Mode().Perm()&0o200 != 0 {
			nic = q.NIC
			break
		}
	}
	if nic == "" {
		t.Skip("no NIC with a writable queue IRQ on this machine")
	}
	return nic, liveAffinities(t)
}

// liveAffinities reads every /proc/irq/*/smp_affinity_list.
func liveAffinities(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	files, _ := filepath.Glob("/proc/irq/*/smp_affinity_list")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m[f] = string(b)
	}
	if len(m) == 0 {
		t.Fatal("no /proc/irq/*/smp_affinity_list")
	}
	return m
}

// startIperf3Server starts iperf3 -s on a free loopback port and stops it
// when the test ends.
func startIperf3Server(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 not installed (apt-get install iperf3; .ci/run installs it)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	srv := exec.Command("iperf3", "-s", "-B", "127.0.0.1", "-p", port)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Kill()
		srv.Wait()
	})
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("iperf3 -s did not listen within 5 s")
		}
	}
	return port
}

// TestBenchLive runs the command on this machine: every placement
// the host allows runs three times with its throughput parsed, the ones
// it does not are reported not applicable, and every IRQ's affinity is
// as it was. Each iperf3 run sends 256 MB (-n) rather than for 2 s (-t):
// what is asserted is that each run was made and its throughput parsed,
// not the throughput, and 18 runs of 2 s made this the slowest test.
func TestBenchLive(t *testing.T) {
	t.Parallel()
	nic, before := liveBench(t)
	port := startIperf3Server(t)
	svg := filepath.Join(t.TempDir(), "bench.svg")
	stdout, stderr, code := runCLI(t, "-o", "json", "bench", "--nic", nic, "--repeat", "3", "--svg", svg, "--",
		"iperf3", "-c", "127.0.0.1", "-p", port, "-n", "256M", "-J")
	if diff := cmp.Diff(before, liveAffinities(t)); diff != "" {
		t.Errorf("IRQ affinity not as it was (-before +after):\n%s", diff)
	}
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	var doc report.BenchDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cells) != 6 {
		t.Fatalf("%d cells, want the default 6", len(doc.Cells))
	}
	for _, c := range doc.Cells {
		switch {
		case !c.Applicable && c.Reason == "":
			t.Errorf("%s: not applicable, without a reason", c.Name)
		case !c.Applicable:
			t.Logf("%s: not applicable: %s", c.Name, c.Reason)
		case len(c.Runs) != 3 || c.Summary == nil || c.Summary.Runs != 3 || c.Summary.Min <= 0:
			t.Errorf("%s: %d runs, summary %+v", c.Name, len(c.Runs), c.Summary)
		default:
			t.Logf("%s: median %.2f Gbit/s (%.2f-%.2f), IRQs on %s, the command on %s", c.Name,
				c.Summary.Median/1e9, c.Summary.Min/1e9, c.Summary.Max/1e9, c.IRQCPUs, c.AppCPUs)
		}
	}
	if len(doc.Unrestored) > 0 || doc.Stopped != "" {
		t.Errorf("unrestored %v, stopped %q", doc.Unrestored, doc.Stopped)
	}
	for _, f := range doc.StateFiles {
		if _, err := os.Stat(f + ".restored"); err != nil { // hosttest.Live removes it
			t.Errorf("state file not retired: %v", err)
		}
	}
	if b, err := os.ReadFile(svg); err != nil || !strings.HasPrefix(string(b), "<svg") {
		t.Errorf("--svg: %v", err)
	}
}

// savedIn finds the state files bench's pins said they saved.
var savedIn = regexp.MustCompile(`old values saved in (\S+) \(`)

// TestBenchLiveStops: a run that fails, and SIGINT or SIGTERM while the
// command runs, end the bench with the host restored: exit 1, 130, 143.
func TestBenchLiveStops(t *testing.T) {
	t.Parallel()
	nic, before := liveBench(t)
	bin := cliBinary(t)
	tests := []struct {
		name string
		cmd  []string
		sig  syscall.Signal
		want int
	}{
		{"the command fails", []string{"sh", "-c", "echo result 1; exit 3"}, 0, cli.ExitError},
		{"SIGINT during a run", []string{"sleep", "30"}, syscall.SIGINT, 130},
		{"SIGTERM during a run", []string{"sleep", "30"}, syscall.SIGTERM, 143},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"bench", "--nic", nic, "--repeat", "1", "--placements", "shared,local", "--regexp", `result (\d+)`, "--"}, tt.cmd...)
			cmd := exec.Command(bin, args...)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var said strings.Builder
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				said.WriteString(sc.Text() + "\n")
				if tt.sig != 0 && strings.HasPrefix(sc.Text(), "run 1/2: shared #1") {
					waitFor(t, cmd, "the command running", func() bool { return hasChild(cmd.Process.Pid, tt.cmd[0]) })
					cmd.Process.Signal(tt.sig)
				}
			}
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != tt.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.want, said.String())
			}
			if diff := cmp.Diff(before, liveAffinities(t)); diff != "" {
				t.Errorf("IRQ affinity not as it was (-before +after):\n%s\nstderr:\n%s", diff, said.String())
			}
			if !strings.Contains(said.String(), "restored") && !strings.Contains(said.String(), "nothing to change") {
				t.Errorf("stderr says nothing of the restore:\n%s", said.String())
			}
			for _, m := range savedIn.FindAllStringSubmatch(said.String(), -1) {
				if _, err := os.Stat(m[1] + ".restored"); err != nil { // hosttest.Live removes it
					t.Errorf("state file not retired: %v", err)
				}
			}
		})
	}
}

// TestBenchHelp: help/bench.txt describes every placement as the catalogue
// does, and names the default set.
func TestBenchHelp(t *testing.T) {
	b, err := helpFiles.ReadFile("help/bench.txt")
	if err != nil {
		t.Fatal(err)
	}
	help := strings.Join(strings.Fields(string(b)), " ")
	for _, c := range bench.Cells() {
		if !c.Membind && !strings.Contains(help, c.Name+" "+c.Doc) {
			t.Errorf("help/bench.txt does not describe %s as %q", c.Name, c.Doc)
		}
	}
	if want := "Default: " + strings.Join(bench.DefaultCells, ", ") + "."; !strings.Contains(help, want) {
		t.Errorf("help/bench.txt does not say %q", want)
	}
}

// The README shows bench's dry run on the NPS2 tree: it must be what the
// tool prints.
func TestBenchREADME(t *testing.T) {
	t.Parallel()
	block := readmeBlock(t, "bench", "$ irqnuma --root testdata/hosts/nps2 bench --dry-run -- iperf3 -c 192.0.2.1 -t 10 -J\n")
	out, stderr, code := runCLI(t, "--root", hosttest.Shared(t, "nps2"), "bench", "--dry-run", "--", "iperf3", "-c", "192.0.2.1", "-t", "10", "-J")
	if code != 0 {
		t.Fatalf("bench --dry-run: exit %d: %s", code, stderr)
	}
	if block != out {
		t.Errorf("README's NPS2 dry run is not what irqnuma prints (-README +irqnuma):\n%s", cmp.Diff(block, out))
	}
}

// TestBenchManyNICs: without --nic on dell-2numa (70 NICs with queue IRQs,
// SR-IOV VFs included) the refusal names the first eight and how to see
// the rest, not all seventy.
func TestBenchManyNICs(t *testing.T) {
	t.Parallel()
	realhosts.Require(t)
	c := realhosts.MustLookup(t, "dell-2numa")
	_, stderr, code := runCLI(t, "--root", realhosts.Root(t, c), "bench", "--dry-run", "--", "iperf3", "-J")
	const want = "irqnuma: choose the NIC with --nic: 70 have queue IRQs (0000:19:00.0, 0000:19:00.1, ens1f0, ens1f0v0, ens1f0v1, ens1f0v10, ens1f0v11, ens1f0v12, and 62 more: irqnuma topology lists them)\n"
	if code != cli.ExitUsage || stderr != want {
		t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr, cli.ExitUsage, want)
	}
}

// benchFlowArgs are the README's flow dry run after --root: the three
// flow placements for a UDP flow into the seed's eth0, received by a
// one-off iperf3 server.
var benchFlowArgs = []string{"bench", "--dry-run", "--nic", "eth0", "--placements", "flow-same-core,flow-sibling,flow-other-core",
	"--flow", "udp 192.0.2.9:40000 192.0.2.2:5201", "--", "iperf3", "-s", "-1", "-J"}

// TestBenchFlowREADME: the README's dry run of the flow placements, on
// the seed with its recorded steering laid over it (seedWithSteering),
// is what irqnuma prints: flow's queue and IRQ, C, its sibling and
// another core; and on the bare seed, whose steering is not recorded,
// the bench is refused with flow's own reason.
func TestBenchFlowREADME(t *testing.T) {
	t.Parallel()
	block := readmeBlock(t, "bench", "$ irqnuma --root seed-steer "+shellJoinArgs(benchFlowArgs)+"\n")
	out, stderr, code := runCLI(t, append([]string{"--root", seedWithSteering(t)}, benchFlowArgs...)...)
	if code != 0 {
		t.Fatalf("bench --dry-run: exit %d: %s", code, stderr)
	}
	if block != out {
		t.Errorf("README's flow dry run is not what irqnuma prints (-README +irqnuma):\n%s", cmp.Diff(block, out))
	}
	flowOut, _, fcode := runCLI(t, "--root", hosttest.Shared(t, "seed"), "flow", "--nic", "eth0", "udp", "192.0.2.9:40000", "192.0.2.2:5201")
	_, why, ok := strings.Cut(flowOut, "queue       ")
	why, _, _ = strings.Cut(why, "\n")
	if fcode != 0 || !ok || !strings.HasPrefix(why, "queue unknown: ") {
		t.Fatalf("flow on the bare seed: exit %d:\n%s", fcode, flowOut)
	}
	_, stderr, code = runCLI(t, append([]string{"--root", hosttest.Shared(t, "seed")}, benchFlowArgs...)...)
	if want := "irqnuma: no placement asked for can run on this host: " + why + "\n"; code == 0 || stderr != want {
		t.Errorf("bare seed: exit %d, stderr %q; want %q", code, stderr, want)
	}
	// Beside a node-wide cell the dry run goes on, the flow's line and
	// its cells saying why.
	args := slices.Clone(benchFlowArgs)
	args[5] = "local,flow-sibling"
	out, stderr, code = runCLI(t, append([]string{"--root", hosttest.Shared(t, "seed")}, args...)...)
	if !regexp.MustCompile(`\nflow-sibling +- +- +- +not applicable: queue unknown: `).MatchString(out) {
		t.Errorf("bare seed: flow-sibling's row does not say queue unknown:\n%s", out)
	}
	for _, want := range []string{"\nflow udp 192.0.2.9:40000 to 192.0.2.2:5201: " + why + "\n", "    not applicable: " + why + "\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("bare seed, local and flow-sibling: exit %d (%s), output lacks %q:\n%s", code, stderr, want, out)
		}
	}
}

// shellJoinArgs writes args as the README's command line does: words
// with a space in double quotes.
func shellJoinArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.Contains(a, " ") {
			a = `"` + a + `"`
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// TestBenchFlowLive: on this host, bench's flow placements stand on
// flow's live reading of the NIC. Where flow cannot tell the queue (this
// VM's virtio eth0: one queue, no RSS key or table), a real bench of them
// is refused with flow's reason before anything changes; where it can,
// the dry run's flow is flow's queue and IRQ. The IRQ affinities are as
// before either way.
func TestBenchFlowLive(t *testing.T) {
	t.Parallel()
	nic, before := liveBench(t)
	const fl = "udp 192.0.2.9:40000 192.0.2.2:5201"
	out, stderr, code := runCLI(t, "-o", "json", "flow", "--nic", nic, "udp", "192.0.2.9:40000", "192.0.2.2:5201")
	if code != 0 {
		t.Fatalf("flow: exit %d: %s", code, stderr)
	}
	var path struct {
		Queue   *uint32 `json:"queue"`
		Unknown struct {
			Detail string `json:"detail"`
		} `json:"queue_unknown"`
		IRQ *struct {
			IRQ int `json:"irq"`
		} `json:"irq"`
	}
	if err := json.Unmarshal([]byte(out), &path); err != nil {
		t.Fatalf("flow -o json: %v\n%s", err, out)
	}
	args := []string{"bench", "--nic", nic, "--repeat", "1", "--placements", "flow-same-core,flow-sibling,flow-other-core",
		"--flow", fl, "--", "iperf3", "-s", "-1", "-J"}
	if path.Queue == nil {
		_, stderr, code = runCLI(t, args...)
		if want := "irqnuma: no placement asked for can run on this host: " + path.Unknown.Detail + "\n"; code == 0 || path.Unknown.Detail == "" || stderr != want {
			t.Errorf("exit %d, stderr %q; want flow's reason: %q", code, stderr, want)
		}
		t.Logf("refused (exit %d): %s", code, stderr)
	} else {
		out, stderr, code = runCLI(t, append([]string{"-o", "json"}, append(args[:1:1], append([]string{"--dry-run"}, args[1:]...)...)...)...)
		var doc struct {
			Plan struct {
				Flow struct {
					Queue *uint32 `json:"queue"`
					IRQ   int     `json:"irq"`
				} `json:"flow"`
			} `json:"plan"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
			t.Fatalf("bench --dry-run: exit %d, %v: %s", code, err, stderr)
		}
		f := doc.Plan.Flow
		if f.Queue == nil || *f.Queue != *path.Queue || path.IRQ == nil || f.IRQ != path.IRQ.IRQ {
			t.Errorf("bench's flow %+v; flow says queue %d, IRQ %+v", f, *path.Queue, path.IRQ)
		}
	}
	if diff := cmp.Diff(before, liveAffinities(t)); diff != "" {
		t.Errorf("IRQ affinity not as it was (-before +after):\n%s", diff)
	}
}

// TestBenchObserveCLI: --observe in a dry run shows the matrix with the
// flow's line and cells saying the queue is found by the first run the
// dry run does not make (exit 0, nothing run); with --flow, or without a
// flow placement, it is a usage error.
func TestBenchObserveCLI(t *testing.T) {
	t.Parallel()
	root := hosttest.Shared(t, "seed")
	args := []string{"--root", root, "bench", "--dry-run", "--nic", "eth0", "--placements", "local,flow-same-core,flow-other-core", "--observe",
		"--", "iperf3", "-c", "192.0.2.9", "-J"}
	out, stderr, code := runCLI(t, args...)
	why := "queue unknown: --observe finds it during a first run of the command, which a dry run does not make"
	if code != 0 {
		t.Fatalf("bench --dry-run --observe: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"\nflow of the command (--observe): " + why + "\n", "\nflow-same-core   -                 -                 -    not applicable: " + why + "\n",
		"\nflow-other-core  -                 -                 -    not applicable: " + why + "\n", "dry run: nothing was changed or run\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, tt := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--placements", "flow-sibling", "--flow", "udp 192.0.2.9:40000 192.0.2.2:5201"}, "irqnuma: give --flow or --observe, not both"},
		{[]string{"--placements", "local"}, "irqnuma: --observe finds the flow of the flow placements"},
	} {
		a := append([]string{"--root", root, "bench", "--dry-run", "--nic", "eth0", "--observe"}, tt.extra...)
		_, stderr, code := runCLI(t, append(a, "--", "iperf3", "-c", "192.0.2.9", "-J")...)
		if code != 2 || !strings.HasPrefix(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.extra, code, stderr, tt.want)
		}
	}
}
