package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/irqnuma/irqnuma/internal/cli"
	"github.com/irqnuma/irqnuma/internal/render/report"
	"github.com/irqnuma/irqnuma/internal/run/watch"
	"github.com/irqnuma/irqnuma/internal/testsupport/hosttest"
	"github.com/irqnuma/irqnuma/internal/testsupport/schematest"
	"github.com/irqnuma/irqnuma/internal/testsupport/watchtest"
	"github.com/irqnuma/irqnuma/internal/unknown"
)

// seedUnderLoad copies the seed host and returns it with a clock for
// watch: each sample is one second after the last, and before the second sample and
// every later one eth0's queue IRQ 286 grows by 1,000,000 on CPU 53 while
// CPU 53 spends 99% of its time in softirq and CPU 21 (its SMT sibling)
// runs an iperf3 thread at 96%. The iperf3 serves a test through eth0
// (its sockets and routes are test input).
func seedUnderLoad(t *testing.T) (string, sys) {
	t.Helper()
	root := hosttest.Copy(t, "seed")
	tr := watchtest.Tree{T: t, Root: root}
	tr.Thread(5001, 5001, "iperf3", "S", 100, 10, 21)
	tr.Write("proc/5001/status", []byte("Name:\tiperf3\nState:\tS (sleeping)\nTgid:\t5001\nPid:\t5001\nCpus_allowed_list:\t0-63\nMems_allowed_list:\t0-1\n"))
	tr.Write("proc/5001/task/5001/status", tr.Read("proc/5001/status"))
	hosttest.WriteSockets(t, root, 5001, iperf3OnEth0)
	hosttest.WriteRoutes(t, filepath.Join(root, "proc/5001/net"), seedRoutes, nil)
	clk := &watchtest.Clock{T: time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)}
	calls := 0
	s := hostSys()
	s.now = func() time.Time {
		calls++
		if calls > 1 {
			clk.Advance(time.Second)
			tr.AddIRQ(286, 53, 1_000_000)
			tr.AddSoftirq("NET_RX", 53, 400_000)
			tr.AddSoftnet(53, 2, 120)
			tr.AddStat(53, map[int]uint64{watchtest.Softirq: 99, watchtest.System: 1})
			tr.AddStat(21, map[int]uint64{watchtest.User: 90, watchtest.System: 6, watchtest.Idle: 4})
			tr.Thread(5001, 5001, "iperf3", "R", 100+uint64(calls-1)*90, 10+uint64(calls-1)*6, 21)
		}
		return clk.Now()
	}
	return root, s
}

func TestWatchSeedTable(t *testing.T) {
	t.Parallel()
	root, ws := seedUnderLoad(t)
	out, errOut, code := runCLISys(t, ws, "--root", root, "watch", "--count", "2", "--interval", "1ms", "--pid", "5001")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "watch/seed-saturated", out)
	want := "eth0: RX softirq on CPU 53 (node 1, local) at 99% soft — saturated, 120 time_squeeze/s; " +
		"iperf3 thread 5001 on CPU 21 (node 1, SMT sibling of softirq CPU 53) at 96% — saturated\n"
	if strings.Count(out, want) != 2 {
		t.Errorf("want the verdict\n%q\nin both blocks of\n%s", want, out)
	}
}

func TestWatchSeedJSON(t *testing.T) {
	t.Parallel()
	root, ws := seedUnderLoad(t)
	out, errOut, code := runCLISys(t, ws, "--root", root, "watch", "--count", "2", "--interval", "1ms", "--pid", "5001", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "watch/seed-saturated.jsonl", out)
	ivs := decodeIntervals(t, out, 2)
	v := ivs[1].NICs[0].Verdict
	if !unknown.Is(v.CPU, 53) || !v.Saturated || !unknown.Is(v.Local, true) || len(v.Threads) != 1 || !unknown.Is(v.Threads[0].Relation, watch.RelationSMTSibling) {
		t.Errorf("verdict = %+v", v)
	}
}

// TestWatchFitsWidth renders the seed interval for a 70-column window:
// verdicts wrap at words, tables drop their least telling columns.
func TestWatchFitsWidth(t *testing.T) {
	t.Parallel()
	root, ws := seedUnderLoad(t)
	out, errOut, code := runCLISys(t, ws, "--root", root, "watch", "--count", "1", "--interval", "1ms", "--pid", "5001", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	iv := decodeIntervals(t, out, 1)[0]
	var b strings.Builder
	if err := report.WriteWatch(&b, &iv, 70); err != nil {
		t.Fatal(err)
	}
	golden(t, "watch/seed-saturated-70cols", b.String())
	for line := range strings.SplitSeq(b.String(), "\n") {
		if w := utf8.RuneCountInString(line); w > 70 {
			t.Errorf("%d columns: %q", w, line)
		}
	}
}

// decodeIntervals checks that out is n JSON lines, each one interval in
// order, and returns them.
func decodeIntervals(t *testing.T, out string, n int) []watch.Interval {
	t.Helper()
	var ivs []watch.Interval
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var iv watch.Interval
		schematest.Load(t).Validate(t, fmt.Sprintf("watch -o json line %d", len(ivs)+1), sc.Bytes())
		const head = `{"schema":"watch","version":2,`
		line, ok := strings.CutPrefix(sc.Text(), head)
		if !ok {
			t.Fatalf("line %d does not start with %s:\n%s", len(ivs)+1, head, sc.Text())
		}
		dec := json.NewDecoder(strings.NewReader("{" + line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&iv); err != nil {
			t.Fatalf("line %d is not an interval: %v\n%s", len(ivs)+1, err, sc.Text())
		}
		ivs = append(ivs, iv)
	}
	if len(ivs) != n {
		t.Fatalf("%d JSON lines, want %d:\n%s", len(ivs), n, out)
	}
	for i, iv := range ivs {
		if iv.Seq != i+1 || iv.Seconds <= 0 || !iv.End.After(iv.Start) || iv.NICs == nil || iv.CPUs == nil || iv.Notes == nil {
			t.Errorf("interval %d = seq %d, %v s, %s..%s, nics %v", i+1, iv.Seq, iv.Seconds, iv.Start, iv.End, iv.NICs)
		}
		if i > 0 && !iv.Start.Equal(ivs[i-1].End) {
			t.Errorf("interval %d starts at %s, the previous ended at %s", i+1, iv.Start, ivs[i-1].End)
		}
	}
	return ivs
}

// TestWatchLive runs on this machine's own /proc and /sys, following the
// test process itself.
func TestWatchLive(t *testing.T) {
	t.Parallel()
	hosttest.Live(t)
	if _, err := os.Stat("/proc/interrupts"); err != nil {
		t.Skipf("no live /proc/interrupts: %v", err)
	}
	start := time.Now()
	out, errOut, code := runCLI(t, "watch", "--count", "2", "--interval", "200ms", "-o", "json", "--pid", strconv.Itoa(os.Getpid()))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("two 200ms intervals took %s", took)
	}
	ivs := decodeIntervals(t, out, 2)
	for _, iv := range ivs {
		if iv.Seconds < 0.15 || iv.Seconds > 2 {
			t.Errorf("interval %d lasted %v s, want about 0.2", iv.Seq, iv.Seconds)
		}
		if len(iv.Threads) == 0 {
			t.Errorf("interval %d: no threads of the test process %d", iv.Seq, os.Getpid())
		}
		for _, n := range iv.NICs {
			if !strings.HasPrefix(n.Verdict.Text, n.Name+": ") {
				t.Errorf("verdict %q does not start with the NIC's name", n.Verdict.Text)
			}
		}
	}
}

// TestWatchWaitsForComm: a --comm no process has yet is waited for,
// not an error (a benchmark starts after the watch), and each interval
// says so.
func TestWatchWaitsForComm(t *testing.T) {
	t.Parallel()
	out, errOut, code := runCLI(t, "--root", hosttest.Root("seed"), "watch", "--comm", "nosuch", "--count", "2", "--interval", "1ms")
	if code != 0 || strings.Count(out, "note: waiting for --comm nosuch: no such process yet\n") != 2 {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
}

func TestWatchErrors(t *testing.T) {
	t.Parallel()
	seed := hosttest.Root("seed")
	tests := []struct {
		give     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"watch", "--interval", "0s"}, cli.ExitUsage, "--interval"},
		{[]string{"watch", "--interval", "-1s"}, cli.ExitUsage, "--interval"},
		{[]string{"watch", "--count", "-1"}, cli.ExitUsage, "--count"},
		{[]string{"watch", "--pid", "0"}, cli.ExitUsage, "--pid"},
		{[]string{"watch", "--interval", "soon"}, cli.ExitUsage, `--interval "soon": want a duration such as 1s or 200ms`},
		{[]string{"watch", "extra"}, cli.ExitUsage, "unknown command"},
		{[]string{"--root", seed, "watch", "--nic", "eth9", "--count", "1"}, cli.ExitUsage, `unknown NIC "eth9"`},
		{[]string{"--root", seed, "watch", "--pid", "4242", "--count", "1"}, cli.ExitError, "--pid 4242: no such process"},
		{[]string{"--root", "/nonexistent", "watch", "--count", "1"}, cli.ExitUsage, "root /nonexistent: no such folder"},
	}
	for _, tt := range tests {
		out, errOut, code := runCLI(t, tt.give...)
		if code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) || out != "" {
			t.Errorf("irqnuma %s = exit %d, stderr %q, stdout %q; want exit %d and %q", strings.Join(tt.give, " "), code, errOut, out, tt.wantCode, tt.wantErr)
		}
		if strings.Count(errOut, "\n") != 1 {
			t.Errorf("irqnuma %s: stderr is not one line: %q", strings.Join(tt.give, " "), errOut)
		}
	}
}

// TestREADMEQuotesFiles: where the README or docs/ shows output the tool or the
// lab wrote to a file, the block is that file's text (or, for a watch
// run, its first interval).
func TestREADMEQuotesFiles(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	readme := readmeDocs(t)
	for _, tt := range []struct {
		file  string
		first bool // only the first watch interval
	}{
		{"testdata/golden/watch/seed-saturated", true},
		{"testdata/lab/watch-debian-6.12.txt", false},
		{"testdata/lab/bench-debian-6.12.txt", false},
	} {
		c, err := os.ReadFile(filepath.Join(root, tt.file))
		if err != nil {
			t.Fatal(err)
		}
		want := string(c)
		if tt.first {
			first, _, _ := strings.Cut(want, "\n\nirqnuma watch  #")
			want = first + "\n"
		}
		if !strings.Contains(readme, "```text\n"+want+"```") && !strings.Contains(readme, "```console\n"+want+"```") {
			t.Errorf("README has no code block that is %s", tt.file)
		}
	}
	// An excerpt: the block after the file's name, every line of it a
	// line of the file.
	const file = "testdata/golden/irq-list-all/lab-debian-6.1.txt"
	_, after, ok := strings.Cut(readme, "(`"+file+"`):\n\n<!-- excerpt: "+file+" -->\n```\n")
	block, _, ok2 := strings.Cut(after, "```")
	c, err := os.ReadFile(filepath.Join(root, file))
	if !ok || !ok2 || err != nil {
		t.Fatalf("README has no excerpt of %s (%v)", file, err)
	}
	lines := strings.Split(string(c), "\n")
	for _, l := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		if !slices.Contains(lines, l) {
			t.Errorf("README's excerpt of %s has a line the file has not: %q", file, l)
		}
	}
}
