package main

import (
	"bufio"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var (
	watchCostIntervals = flag.Int("watchcost.intervals", 30, "one-second intervals each command of BenchmarkWatchCPU samples")
	watchCostRounds    = flag.Int("watchcost.rounds", 3, "rounds of BenchmarkWatchCPU")
	watchCostAlso      = flag.String("watchcost.also", "", "NAME=PATH,...: other irqnuma binaries (an earlier build) whose watch BenchmarkWatchCPU runs beside, reported as NAME")
)

// watchPeers are the commands BenchmarkWatchCPU runs beside watch, for n
// one-second intervals: mpstat reading what watch reads (-P ALL: the cpu
// lines of /proc/stat; -I ALL: /proc/interrupts and /proc/softirqs, and
// /proc/stat's intr line) and mpstat reading /proc/stat alone. watch also
// reads /proc/net/softnet_stat and the online CPUs, which no mpstat
// option reads.
func watchPeers(mpstat, n string) map[string][]string {
	return map[string][]string{
		"mpstat-PI": {mpstat, "-P", "ALL", "-I", "ALL", "1", n},
		"mpstat-P":  {mpstat, "-P", "ALL", "1", n},
	}
}

// runCost is what one run of a command cost: its CPU (user and system)
// and its context switches, voluntary and not, from wait4's rusage.
type runCost struct {
	cpu time.Duration
	csw int64
}

// BenchmarkWatchCPU measures what `irqnuma watch` costs the host it
// watches, against mpstat sampling the same files for the same intervals:
// each round starts watch and both mpstat invocations at once, for
// -watchcost.intervals one-second intervals (30), and reads each one's
// CPU time and context switches from its rusage; a run of one interval
// of each starts beside them, so that the cost of an interval beyond
// start-up (-marginal: the difference over intervals - 1) is told from
// the run's total divided by the intervals, start-up included. It reports
// medians of those figures and of the per-round ratios, so the load of
// the machine, which changes from round to round, is the same for both
// sides of a ratio. With strace installed one more round counts each
// command's system calls and opens (under strace, so not timed).
//
// It takes intervals × (rounds + 1) seconds: run it alone, as
//
//	go test -run '^$' -bench WatchCPU -benchtime 1x ./cmd/irqnuma
func BenchmarkWatchCPU(b *testing.B) {
	mpstat, err := exec.LookPath("mpstat")
	if err != nil {
		b.Skip("no mpstat (sysstat)")
	}
	if _, err := os.Stat("/proc/interrupts"); err != nil {
		b.Skip("no live /proc")
	}
	bin := filepath.Join(b.TempDir(), "irqnuma")
	buildStatic(b, ".", bin)
	n := *watchCostIntervals
	if n < 2 {
		b.Fatalf("-watchcost.intervals %d: want 2 or more", n)
	}
	cmds, names := watchCostCommands(b, bin, mpstat, n)
	for b.Loop() {
		costs := map[string][]runCost{}
		for range *watchCostRounds {
			for name, c := range runTogether(b, cmds) {
				costs[name] = append(costs[name], c)
			}
		}
		reportWatchCosts(b, costs, names, n)
		if strace, err := exec.LookPath("strace"); err == nil {
			reportSyscalls(b, strace, cmds, n)
		}
	}
	out, _ := os.ReadFile("/proc/loadavg")
	b.Logf("load average at the end: %s", strings.TrimSpace(string(out)))
}

// watchCostCommands returns the commands of a round of BenchmarkWatchCPU
// by name, and the names of the watches among them. Each command runs
// twice at once: for n intervals and, named NAME@1, for one, so that what
// an interval costs beyond start-up is their difference.
func watchCostCommands(b *testing.B, bin, mpstat string, n int) (map[string][]string, []string) {
	b.Helper()
	watches := map[string]string{"watch": bin}
	names := []string{"watch"}
	if *watchCostAlso != "" {
		for _, kv := range strings.Split(*watchCostAlso, ",") {
			name, path, ok := strings.Cut(kv, "=")
			if !ok {
				b.Fatalf("-watchcost.also %q: want NAME=PATH", kv)
			}
			watches[name] = path
			names = append(names, name)
		}
	}
	cmds := map[string][]string{}
	for count, suffix := range map[int]string{n: "", 1: "@1"} {
		c := strconv.Itoa(count)
		for name, peer := range watchPeers(mpstat, c) {
			cmds[name+suffix] = peer
		}
		for name, path := range watches {
			cmds[name+suffix] = []string{path, "watch", "--interval", "1s", "--count", c}
		}
	}
	return cmds, names
}

// reportWatchCosts reports the medians of each command's CPU and context
// switches an interval, start-up included and (-marginal) beyond it, and
// of each watch's per-round ratios to each mpstat.
func reportWatchCosts(b *testing.B, costs map[string][]runCost, names []string, n int) {
	per := float64(n)
	// marginal is what an interval of round i cost name beyond its
	// start-up: its n-interval run less its one-interval run.
	marginal := func(name string, i int) float64 {
		return float64(costs[name][i].cpu-costs[name+"@1"][i].cpu) / (per - 1)
	}
	id := func(v float64) float64 { return v }
	for _, name := range append(slices.Clone(names), "mpstat-PI", "mpstat-P") {
		cs := costs[name]
		b.ReportMetric(median(cs, func(c runCost) float64 { return float64(c.cpu.Microseconds()) })/per, name+"-cpu-µs/interval")
		b.ReportMetric(median(cs, func(c runCost) float64 { return float64(c.csw) })/per, name+"-csw/interval")
		var ms []float64
		for i := range cs {
			ms = append(ms, marginal(name, i)/1e3)
		}
		b.ReportMetric(median(ms, id), name+"-marginal-µs/interval")
	}
	for _, w := range names {
		for _, peer := range []string{"mpstat-PI", "mpstat-P"} {
			var total, beyond []float64
			for i, c := range costs[w] {
				total = append(total, float64(c.cpu)/float64(costs[peer][i].cpu))
				beyond = append(beyond, marginal(w, i)/marginal(peer, i))
			}
			b.ReportMetric(median(total, id), w+"/"+peer)
			b.ReportMetric(median(beyond, id), w+"/"+peer+"-marginal")
		}
	}
}

// reportSyscalls runs the n-interval commands once more together, each
// under strace -f -c, and reports their system calls and opens an
// interval, start-up included.
func reportSyscalls(b *testing.B, strace string, cmds map[string][]string, n int) {
	traced := map[string][]string{}
	dir := b.TempDir()
	for name, c := range cmds {
		if !strings.HasSuffix(name, "@1") {
			traced[name] = append([]string{strace, "-f", "-c", "-U", "calls,errors,name", "-o", filepath.Join(dir, name)}, c...)
		}
	}
	runTogether(b, traced)
	for name := range traced {
		calls, opens := straceCounts(b, filepath.Join(dir, name))
		b.ReportMetric(float64(calls)/float64(n), name+"-syscalls/interval")
		b.ReportMetric(float64(opens)/float64(n), name+"-opens/interval")
	}
}

// runTogether starts every command at once, output discarded, and
// returns what each one cost.
func runTogether(b *testing.B, cmds map[string][]string) map[string]runCost {
	b.Helper()
	running := map[string]*exec.Cmd{}
	for name, c := range cmds {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Env = append(os.Environ(), "LC_ALL=C", "S_TIME_FORMAT=ISO")
		if err := cmd.Start(); err != nil {
			b.Fatalf("%v: %v", c, err)
		}
		running[name] = cmd
	}
	costs := map[string]runCost{}
	for name, cmd := range running {
		if err := cmd.Wait(); err != nil {
			b.Fatalf("%v: %v", cmd.Args, err)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		costs[name] = runCost{
			cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
			csw: ru.Nvcsw + ru.Nivcsw,
		}
	}
	return costs
}

// straceCounts reads the table of strace -c -U calls,errors,name: the
// total of calls and the calls of open, openat and openat2.
func straceCounts(b *testing.B, path string) (calls, opens int) {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		n, err := strconv.Atoi(fields[0])
		if err != nil {
			continue // the header and the rule
		}
		switch name := fields[len(fields)-1]; name {
		case "total":
			calls = n
		case "open", "openat", "openat2":
			opens += n
		}
	}
	if calls == 0 {
		b.Fatalf("%s: no total line in strace's table", path)
	}
	return calls, opens
}

// median returns the median of what value gives for each of xs.
func median[T any](xs []T, value func(T) float64) float64 {
	vs := make([]float64, 0, len(xs))
	for _, x := range xs {
		vs = append(vs, value(x))
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}
